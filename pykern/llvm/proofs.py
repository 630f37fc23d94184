"""Does the proof of `pykern.llvm.bound_analysis` hold for this launch (or workgroup)?

Every atom of the bounds gets numbers (i64; a sum or product that could overflow is checked,
and one that does makes the proof fail, so the numbers that decide are exact): a uniform
value its own value, a local id 0 to the workgroup's size - 1, a loop variable and a derived
value the numbers its bounds give. A form's least value takes each atom's least value where
its coefficient is positive and its greatest where it is negative; a value is at least 0
where one of its lower forms is, at most a dimension - 1 where one of its upper forms is.
The proof holds where every proved access's indices are inside their dimensions, every
requirement (`bounds.Fits`) is met, and every array parameter the proofs rely on lies inside
its buffer (`robust.view_inside_buffer`).

`plan` sorts the conditions: those of the launch alone (scalars, shapes, the grid), evaluated
once per call of the entry, by a function of their own that LLVM neither inlines nor
optimises (`pykern.llvm.module`: optimising them cost more compile time than the kernel's own
code, and they run once); and those that name the workgroup's id, each with the part of it
that does not (evaluated with the launch's into a flag). A kernel's first module proves a
launch as a whole, by the launch's conditions and the flags; its second one evaluates the
conditions that name the workgroup for each workgroup, a few compares.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir as ll

from pykern.llvm import bounds as b
from pykern.llvm.bound_analysis import Proofs
from pykern.llvm.emitter import Emitter
from pykern.llvm.types import I1, I64

@dataclass(frozen=True)
class Condition:
    """One thing a proof needs: the value bounded by `forms` (lower forms, or upper ones where
    `upper`) is at least (at most) `limit`: a number, or (upper only) one less than a
    dimension, given by its upper forms."""

    forms: tuple[b.Affine, ...]
    upper: bool
    limit: int | tuple[b.Affine, ...]


def conditions(found: Proofs) -> list[Condition]:
    """What the proofs of `found` need, each once, in a fixed order."""
    needs: dict[Condition, None] = {}
    requirements: dict[b.Fits, None] = {}
    for proof in found.sites.values():
        for index, size in zip(proof.indices, proof.sizes, strict=True):
            requirements.update(dict.fromkeys(sorted(index.requires, key=repr)))
            needs[Condition(index.lower, False, 0)] = None
            needs[Condition(index.upper, True, size.upper)] = None
    for need in requirements:
        if need.low is not None:
            needs[Condition(need.lower, False, need.low)] = None
        if need.high is not None:
            needs[Condition(need.upper, True, need.high)] = None
    return list(needs)


@dataclass
class Plan:
    """Where a kernel's conditions are evaluated. `launch`: those of the launch alone, once
    per call of the entry. `workgroup`: those that name the workgroup's id, each with the part
    of it that does not (`hoisted`, the same index; None where it has none), which is
    evaluated with the launch's into a flag: a workgroup checks the rest only where the flag
    is not set. Conditions that hold whatever the numbers (`G * 256 >= 0` for a workgroup id
    G) are left out, as are the forms that cannot help."""

    launch: list[Condition]
    workgroup: list[Condition]
    hoisted: list[Condition | None]


def plan(needs: list[Condition]) -> Plan:
    """The plan of `needs` (see `Plan`)."""
    static = _Static()
    out = Plan([], [], [])
    for need in needs:
        limit = static.limit(need)
        if need.upper:
            useful = tuple(f for f in need.forms if static.form(f)[0] <= limit[1])
            always = any(static.form(f)[1] <= limit[0] for f in useful)
        else:
            useful = tuple(f for f in need.forms if static.form(f)[1] >= limit[0])
            always = any(static.form(f)[0] >= limit[1] for f in useful)
        if always:
            continue
        named = tuple(f for f in useful if static.names_group(f))
        alone = tuple(f for f in useful if not static.names_group(f))
        if not named:
            out.launch.append(Condition(alone, need.upper, need.limit))
            continue
        out.workgroup.append(Condition(named, need.upper, need.limit))
        out.hoisted.append(Condition(alone, need.upper, need.limit) if alone else None)
    return out


UNBOUNDED = 1 << 140  # beyond every number a kernel's values can reach
SIZE = (0, (1 << 31) - 1)  # dimensions, grids and workgroup ids


class _Static:
    """What the forms' numbers can be at all (Python ints), whatever the launch: a condition
    that holds for every value is left out of the prologue."""

    def __init__(self) -> None:
        self.ranges: dict[int, tuple[int, int]] = {}
        self.atoms = b.Atoms()  # only for its memo of which atoms name the workgroup

    def limit(self, need: Condition) -> tuple[int, int]:
        if isinstance(need.limit, int):
            return need.limit, need.limit
        return SIZE[0] - 1, SIZE[1] - 1  # one less than a dimension

    def form(self, form: b.Affine) -> tuple[int, int]:
        low = high = form.const
        for atom, c in form.terms:
            a, z = self.atom(atom)
            low, high = low + min(c * a, c * z), high + max(c * a, c * z)
        return low, high

    def forms(self, lower: tuple[b.Affine, ...], upper: tuple[b.Affine, ...]
              ) -> tuple[int, int]:
        return (max(self.form(f)[0] for f in lower) if lower else -UNBOUNDED,
                min(self.form(f)[1] for f in upper) if upper else UNBOUNDED)

    def atom(self, atom: b.Atom) -> tuple[int, int]:
        known = self.ranges.get(atom.order)
        if known is None:
            known = self.ranges[atom.order] = self._atom(atom)
        return known

    def _atom(self, atom: b.Atom) -> tuple[int, int]:
        if atom.kind == b.UNIFORM:
            if atom.key[0] != "scalar":
                return SIZE
            _, _, signed, bits = atom.key
            return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if atom.kind == b.LOCAL:
            return 0, atom.key[2] - 1
        if atom.kind == b.LOOP:
            return self.forms(atom.key[1], ())[0], self.forms((), atom.key[2])[1]
        op, *operands = atom.key
        return _STATIC[op](*(self.forms(lower, upper) for lower, upper in operands))

    def names_group(self, form: b.Affine) -> bool:
        """Whether `form`'s numbers depend on the workgroup's id."""
        return self.atoms.names_group(form)


def _static_div(x: tuple[int, int], y: tuple[int, int]) -> tuple[int, int]:
    if y[0] < 1:  # a divisor that may not be positive: the requirement fails, any numbers
        return -UNBOUNDED, UNBOUNDED
    corners = [a // d for a in x for d in y]
    return min(corners), max(corners)


def _static_mul(x: tuple[int, int], y: tuple[int, int]) -> tuple[int, int]:
    products = [a * c for a in x for c in y]
    return min(products), max(products)


def _static_mod(x: tuple[int, int], y: tuple[int, int]) -> tuple[int, int]:
    if y[0] < 1:
        return -UNBOUNDED, UNBOUNDED
    return 0, y[1] - 1


_STATIC = {
    "mul": _static_mul, "div": _static_div, "mod": _static_mod,
    "min": lambda x, y: (min(x[0], y[0]), min(x[1], y[1])),
    "max": lambda x, y: (max(x[0], y[0]), max(x[1], y[1])),
    "union": lambda x, y: (min(x[0], y[0]), max(x[1], y[1])),
    "abs": lambda x: (0 if x[0] <= 0 <= x[1] else min(abs(x[0]), abs(x[1])),
                      max(abs(x[0]), abs(x[1]))),
}


def all_hold(em: Emitter, needs: list[Condition], start: ll.Value,
             group: tuple[ll.Value, ...], grid: tuple[ll.Value, ...],
             num_groups: tuple[ll.Value, ...],
             flags: list[ll.Value | None] | None = None) -> ll.Value:
    """i1: `start` and every condition of `needs` hold, and no number overflowed (`group`
    may be () where none names the workgroup); where `flags[k]` (i1) is given, condition k
    holds where it is set."""
    numbers = _Numbers(em, group, grid, num_groups)
    bld = em.builder
    holds = start
    for k, need in enumerate(needs):
        check = numbers.check(need)
        flag = flags[k] if flags is not None else None
        holds = bld.and_(holds, check if flag is None else bld.or_(flag, check))
    return bld.and_(holds, bld.not_(numbers.overflow))


def each_holds(em: Emitter, needs: list[Condition | None], grid: tuple[ll.Value, ...],
               num_groups: tuple[ll.Value, ...]) -> tuple[list[ll.Value | None], ll.Value]:
    """i1 per condition of `needs` (None for None) that holds, of the launch alone; and i1:
    no number overflowed (else the flags mean nothing)."""
    numbers = _Numbers(em, (), grid, num_groups)
    flags = [None if need is None else numbers.check(need) for need in needs]
    return flags, em.builder.not_(numbers.overflow)


I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


class _Numbers:
    """The numbers of atoms and forms in one prologue (each emitted once), in i64: every sum
    and product is checked for overflow, and one that overflows makes the proof fail
    (`overflow`), so the numbers that decide are exact."""

    def __init__(self, em: Emitter, group: tuple[ll.Value, ...], grid: tuple[ll.Value, ...],
                 num_groups: tuple[ll.Value, ...]) -> None:
        self.em, self.bld = em, em.builder
        self.group, self.grid, self.num_groups = group, grid, num_groups
        self.atoms: dict[int, tuple[ll.Value, ll.Value]] = {}
        self.forms: dict[tuple[b.Affine, bool], ll.Value] = {}
        self.overflow: ll.Value = ll.Constant(I1, 0)
        # what the numbers can be at all: an operation whose result cannot leave i64 needs no
        # overflow check (most: sizes, ids and i32 values times small constants)
        self.static = _Static()

    # ------------------------------------------------------------ conditions

    def check(self, need: Condition) -> ll.Value:
        """i1: `need` holds."""
        if isinstance(need.limit, int):
            if (need.upper and need.limit >= I64_MAX) or \
                    (not need.upper and need.limit <= I64_MIN):
                return ll.Constant(I1, 1)  # every i64 number is within it
            limit: ll.Value = ll.Constant(I64, need.limit)
        else:
            limit = self.bld.sub(self.high(need.limit), ll.Constant(I64, 1))  # a size: >= 0
        return (self.at_most if need.upper else self.at_least)(need.forms, limit)

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

    # ------------------------------------------------------------ checked arithmetic

    def _checked(self, op: str, x: ll.Value, y: ll.Value) -> ll.Value:
        fn = self.em.intrinsic(f"llvm.{op}.with.overflow.i64",
                               ll.LiteralStructType((I64, I1)), (I64, I64))
        pair = self.bld.call(fn, (x, y))
        self.overflow = self.bld.or_(self.overflow, self.bld.extract_value(pair, 1))
        return self.bld.extract_value(pair, 0)

    def add(self, x: ll.Value, y: ll.Value, result: tuple[int, int] | None = None) -> ll.Value:
        """x + y, checked for overflow unless `result` (what it can be at all) fits i64."""
        if _fits(result):
            return self.bld.add(x, y)
        return self._checked("sadd", x, y)

    def sub(self, x: ll.Value, y: ll.Value, result: tuple[int, int] | None = None) -> ll.Value:
        if _fits(result):
            return self.bld.sub(x, y)
        return self._checked("ssub", x, y)

    def mul(self, x: ll.Value, y: ll.Value, result: tuple[int, int] | None = None) -> ll.Value:
        if _fits(result):
            return self.bld.mul(x, y)
        return self._checked("smul", x, y)

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
        total: ll.Value = ll.Constant(I64, form.const)
        partial = (form.const, form.const)
        for atom, c in form.terms:
            low, high = self.atom(atom)
            value = high if (c > 0) == greatest else low
            a, z = self.static.atom(atom)
            term_range = (min(c * a, c * z), max(c * a, c * z))
            term = value if c == 1 else self.mul(value, ll.Constant(I64, c), term_range)
            partial = (partial[0] + term_range[0], partial[1] + term_range[1])
            total = self.add(total, term, partial)
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
            return ll.Constant(I64, 0), ll.Constant(I64, size - 1)
        if atom.kind == b.LOOP:
            _, first, last = atom.key
            return self.low(first), self.high(last)
        op, *operands = atom.key
        ranges = [(self.low(lower), self.high(upper)) for lower, upper in operands]
        self.operands = [self.static.forms(lower, upper) for lower, upper in operands]
        return _DERIVED[op](self, *ranges)

    def _uniform(self, key: tuple) -> ll.Value:
        bld, what = self.bld, key[0]
        if what == "scalar":
            value = self.em.scalars[key[1]]
            signed, bits = key[2], key[3]
            if bits < 64:
                return bld.sext(value, I64) if signed else bld.zext(value, I64)
            if not signed:  # a u64 from 2**63 on is no i64 number
                negative = bld.icmp_signed("<", value, ll.Constant(I64, 0))
                self.overflow = bld.or_(self.overflow, negative)
            return value
        if what == "dim":
            value = self.em.arrays[key[1]].shape[key[2]]
        else:
            value = {"grid": self.grid, "groups": self.num_groups, "group": self.group}[
                what][key[1]]
        return bld.zext(value, I64)  # sizes and ids are never negative

    # ------------------------------------------------------------ derived values

    def minimum(self, x: ll.Value, y: ll.Value) -> ll.Value:
        return self.bld.select(self.bld.icmp_signed("<", x, y), x, y)

    def maximum(self, x: ll.Value, y: ll.Value) -> ll.Value:
        return self.bld.select(self.bld.icmp_signed(">", x, y), x, y)

    def floor_div(self, x: ll.Value, y: ll.Value) -> ll.Value:
        """floor(x / y) for a positive `y` (a `y` below 1 occurs only where a requirement
        fails: it gives some number, never a trap)."""
        bld = self.bld
        one = ll.Constant(I64, 1)
        y = bld.select(bld.icmp_signed(">=", y, one), y, one)
        quotient, rest = bld.sdiv(x, y), bld.srem(x, y)
        below = bld.zext(bld.icmp_signed("<", rest, ll.Constant(I64, 0)), I64)
        return bld.sub(quotient, below)


Range = tuple[ll.Value, ll.Value]


def _fits(result: tuple[int, int] | None) -> bool:
    return result is not None and I64_MIN <= result[0] and result[1] <= I64_MAX


def _mul(n: _Numbers, x: Range, y: Range) -> Range:
    product = _static_mul(*n.operands)  # what every corner's product can be at all
    products = [n.mul(a, c, product) for a in x for c in y]
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


def _mod(n: _Numbers, x: Range, y: Range) -> Range:
    # Python's x % d for a positive d: in [0, d - 1]; x itself where x lies in [0, d - 1]
    zero, one = ll.Constant(I64, 0), ll.Constant(I64, 1)
    bld = n.bld
    alone = bld.and_(bld.icmp_signed(">=", x[0], zero), bld.icmp_signed("<", x[1], y[0]))
    return (bld.select(alone, x[0], zero), bld.select(alone, x[1], bld.sub(y[1], one)))


def _min(n: _Numbers, x: Range, y: Range) -> Range:
    return n.minimum(x[0], y[0]), n.minimum(x[1], y[1])


def _max(n: _Numbers, x: Range, y: Range) -> Range:
    return n.maximum(x[0], y[0]), n.maximum(x[1], y[1])


def _union(n: _Numbers, x: Range, y: Range) -> Range:
    return n.minimum(x[0], y[0]), n.maximum(x[1], y[1])


def _abs(n: _Numbers, x: Range) -> Range:
    zero = ll.Constant(I64, 0)
    low, high = n.operands[0]
    negation = (-high, -low)
    negated = (n.sub(zero, x[1], negation), n.sub(zero, x[0], negation))
    low = n.maximum(zero, n.maximum(x[0], negated[0]))  # 0 where the range holds 0
    return low, n.maximum(x[1], negated[1])


_DERIVED = {"mul": _mul, "div": _div, "mod": _mod, "min": _min, "max": _max, "union": _union,
            "abs": _abs}
