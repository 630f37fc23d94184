"""The workgroup's prologue: does the proof of `pykern.llvm.bound_analysis` hold here?

Every atom of the bounds gets numbers for this workgroup (i128, so no sum of products of i64
values wraps): a uniform value its own value, a local id 0 to the workgroup's size - 1, a
loop variable and a derived value the numbers its bounds give. A form's least value takes
each atom's least value where its coefficient is positive and its greatest where it is
negative; a value is at least 0 where one of its lower forms is, at most a dimension - 1
where one of its upper forms is. The proof holds where every proved access's indices are
inside their dimensions, every requirement (`bounds.Fits`) is met, and every array parameter
the proofs rely on lies inside its buffer (`robust.view_inside_buffer`, once per launch).

Most of this depends on the launch only (scalars, shapes, the grid): LLVM hoists it out of
the loop over workgroups, so a workgroup's own work is a few compares of its ids.
"""

from __future__ import annotations

from collections.abc import Mapping

from llvmlite import ir as ll

from pykern.llvm import bounds as b
from pykern.llvm.bound_analysis import Proofs
from pykern.llvm.emitter import Emitter
from pykern.llvm.robust import view_inside_buffer
from pykern.llvm.types import I1, I64

I128 = ll.IntType(128)


def launch_facts(em: Emitter, found: Proofs) -> dict[str, ll.Value]:
    """i1 per array parameter the proofs rely on: its view lies inside its buffer (emitted
    once per call of the entry, before the loop over workgroups)."""
    return {name: view_inside_buffer(em, em.arrays[name]) for name in found.params}


def workgroup_holds(em: Emitter, found: Proofs, inside: Mapping[str, ll.Value],
                    group: tuple[ll.Value, ...], grid: tuple[ll.Value, ...],
                    num_groups: tuple[ll.Value, ...]) -> ll.Value:
    """i1: every access in `found` stays inside its array for every invocation of this
    workgroup."""
    numbers = _Numbers(em, group, grid, num_groups)
    bld = em.builder
    holds: ll.Value = ll.Constant(I1, 1)
    for name in found.params:
        holds = bld.and_(holds, inside[name])
    checked: set[tuple] = set()
    requirements: set[b.Fits] = set()
    for proof in found.sites.values():
        for index, size in zip(proof.indices, proof.sizes, strict=True):
            requirements |= index.requires
            if (index, size) in checked:
                continue
            checked.add((index, size))
            last = bld.sub(numbers.high(size.upper), ll.Constant(I128, 1))
            holds = bld.and_(holds, numbers.at_least(index.lower, ll.Constant(I128, 0)))
            holds = bld.and_(holds, numbers.at_most(index.upper, last))
    for need in sorted(requirements, key=repr):
        if need.low is not None:
            holds = bld.and_(holds, numbers.at_least(need.lower, ll.Constant(I128, need.low)))
        if need.high is not None:
            holds = bld.and_(holds, numbers.at_most(need.upper, ll.Constant(I128, need.high)))
    return holds


class _Numbers:
    """The numbers of atoms and forms in one workgroup's prologue (each emitted once)."""

    def __init__(self, em: Emitter, group: tuple[ll.Value, ...], grid: tuple[ll.Value, ...],
                 num_groups: tuple[ll.Value, ...]) -> None:
        self.em, self.bld = em, em.builder
        self.group, self.grid, self.num_groups = group, grid, num_groups
        self.atoms: dict[int, tuple[ll.Value, ll.Value]] = {}
        self.forms: dict[tuple[b.Affine, bool], ll.Value] = {}

    # ------------------------------------------------------------ conditions

    def at_least(self, lower: tuple[b.Affine, ...], k: ll.Value) -> ll.Value:
        """i1: the value is at least `k` (one of its lower forms is)."""
        found: ll.Value = ll.Constant(I1, 0)
        for form in lower:
            found = self.bld.or_(found, self.bld.icmp_signed(">=", self.form(form, False), k))
        return found

    def at_most(self, upper: tuple[b.Affine, ...], k: ll.Value) -> ll.Value:
        found: ll.Value = ll.Constant(I1, 0)
        for form in upper:
            found = self.bld.or_(found, self.bld.icmp_signed("<=", self.form(form, True), k))
        return found

    # ------------------------------------------------------------ numbers

    def low(self, lower: tuple[b.Affine, ...]) -> ll.Value:
        """The greatest of the lower forms' least values."""
        values = [self.form(f, False) for f in lower]
        return self._pick(values, ">")

    def high(self, upper: tuple[b.Affine, ...]) -> ll.Value:
        values = [self.form(f, True) for f in upper]
        return self._pick(values, "<")

    def _pick(self, values: list[ll.Value], better: str) -> ll.Value:
        best = values[0]
        for v in values[1:]:
            best = self.bld.select(self.bld.icmp_signed(better, v, best), v, best)
        return best

    def form(self, form: b.Affine, greatest: bool) -> ll.Value:
        """The least (or greatest) value of `form` over its atoms' numbers."""
        known = self.forms.get((form, greatest))
        if known is not None:
            return known
        total: ll.Value = ll.Constant(I128, form.const)
        for atom, c in form.terms:
            low, high = self.atom(atom)
            value = high if (c > 0) == greatest else low
            term = value if c == 1 else self.bld.mul(value, ll.Constant(I128, c))
            total = self.bld.add(total, term)
        self.forms[(form, greatest)] = total
        return total

    def atom(self, atom: b.Atom) -> tuple[ll.Value, ll.Value]:
        known = self.atoms.get(atom.order)
        if known is None:
            known = self.atoms[atom.order] = self._atom(atom)
        return known

    def _atom(self, atom: b.Atom) -> tuple[ll.Value, ll.Value]:
        if atom.kind == b.UNIFORM:
            value = self._uniform(atom.key)
            return value, value
        if atom.kind == b.LOCAL:
            _, _, size = atom.key
            return ll.Constant(I128, 0), ll.Constant(I128, size - 1)
        if atom.kind == b.LOOP:
            _, first, last = atom.key
            return self.low(first), self.high(last)
        op, *operands = atom.key
        ranges = [(self.low(lower), self.high(upper)) for lower, upper in operands]
        return _DERIVED[op](self, *ranges)

    def _uniform(self, key: tuple) -> ll.Value:
        bld, what = self.bld, key[0]
        if what == "scalar":
            value = self.em.scalars[key[1]]
            return bld.sext(value, I128) if key[2] else bld.zext(value, I128)
        if what == "dim":
            value = self.em.arrays[key[1]].shape[key[2]]
        else:
            value = {"grid": self.grid, "groups": self.num_groups, "group": self.group}[
                what][key[1]]
        return bld.zext(value, I128)  # sizes and ids are never negative

    # ------------------------------------------------------------ derived values

    def minimum(self, x: ll.Value, y: ll.Value) -> ll.Value:
        return self.bld.select(self.bld.icmp_signed("<", x, y), x, y)

    def maximum(self, x: ll.Value, y: ll.Value) -> ll.Value:
        return self.bld.select(self.bld.icmp_signed(">", x, y), x, y)

    def floor_div(self, x: ll.Value, y: ll.Value) -> ll.Value:
        """floor(x / y) in i64 for a positive `y` (values that do not fit i64, or a `y`
        below 1, occur only where a requirement fails: they give some number, never a
        trap)."""
        bld = self.bld
        x64, y64 = bld.trunc(x, I64), bld.trunc(y, I64)
        one = ll.Constant(I64, 1)
        y64 = bld.select(bld.icmp_signed(">=", y64, one), y64, one)
        quotient, rest = bld.sdiv(x64, y64), bld.srem(x64, y64)
        below = bld.zext(bld.icmp_signed("<", rest, ll.Constant(I64, 0)), I64)
        return bld.sext(bld.sub(quotient, below), I128)


Range = tuple[ll.Value, ll.Value]


def _mul(n: _Numbers, x: Range, y: Range) -> Range:
    products = [n.bld.mul(a, c) for a in x for c in y]
    low = high = products[0]
    for p in products[1:]:
        low, high = n.minimum(low, p), n.maximum(high, p)
    return low, high


def _div(n: _Numbers, x: Range, y: Range) -> Range:
    # for a positive divisor floor(a / d) grows with a, and with d only towards zero: the
    # extremes lie at the corners
    low = n.minimum(n.floor_div(x[0], y[0]), n.floor_div(x[0], y[1]))
    high = n.maximum(n.floor_div(x[1], y[0]), n.floor_div(x[1], y[1]))
    return low, high


def _min(n: _Numbers, x: Range, y: Range) -> Range:
    return n.minimum(x[0], y[0]), n.minimum(x[1], y[1])


def _max(n: _Numbers, x: Range, y: Range) -> Range:
    return n.maximum(x[0], y[0]), n.maximum(x[1], y[1])


def _union(n: _Numbers, x: Range, y: Range) -> Range:
    return n.minimum(x[0], y[0]), n.maximum(x[1], y[1])


def _abs(n: _Numbers, x: Range) -> Range:
    bld, zero = n.bld, ll.Constant(I128, 0)
    negated = (bld.sub(zero, x[1]), bld.sub(zero, x[0]))
    low = n.maximum(zero, n.maximum(x[0], negated[0]))  # 0 where the range holds 0
    return low, n.maximum(x[1], negated[1])


_DERIVED = {"mul": _mul, "div": _div, "min": _min, "max": _max, "union": _union, "abs": _abs}
