"""Which array accesses of a kernel stay inside their arrays, given numbers the workgroup's
prologue knows: for each access, symbolic bounds of its indices (`pykern.llvm.bounds`), which
`pykern.llvm.proofs` evaluates per workgroup. An access the analysis cannot bound is left out,
and checked where it runs (`pykern.llvm.robust`).

The analysis walks the kernel's IR once, in execution order, with what it knows of each local:

- a local gets the bounds of the value assigned to it, until it is assigned again. A local
  assigned inside a statement (an `if`, a loop) is unknown after it; one assigned inside a
  loop is unknown from the loop's start (an iteration may read the previous one's value);
- a `range` loop's variable is an atom between its bounds, inside its body (unknown where the
  body assigns it);
- conditions are facts where they hold: `x[j]` in `if j < n:` has `j <= n - 1`; the rest of a
  block after `if c: return` (or `break`, `continue`) has `not c`, so the grid mask bounds
  `pk.global_id` by `pk.grid`; the right side of `and`, a `while` body, a branch of
  `a if c else b` have theirs. A fact lasts while none of the locals it names is assigned.
  Control flow around barriers runs once per workgroup with one invocation's values, so its
  conditions give no facts, and its loops' variables only their numbers;
- a device function's body is analysed at each call (it is emitted at each call), its
  parameters bounded by the call's arguments.

Every operation is modelled as the mathematical integer it gives without wrapping; where it
could wrap, its bounds require that its numbers fit its type (`bounds.Fits`), which the
prologue checks too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import ArrayType, DType
from pykern.llvm import bounds as b
from pykern.llvm.bounds import Bounds

SiteKey = tuple[tuple[int, ...], int]  # (ids of the calls inlined through, id of the access)


@dataclass(frozen=True)
class SiteProof:
    """An access whose indices lie within `indices` (bounds), to be checked against `sizes`
    (the array's dimensions); `param`: the array is a kernel parameter, whose view must also
    lie inside its buffer."""

    array: str
    param: bool
    indices: tuple[Bounds, ...]
    sizes: tuple[Bounds, ...]


@dataclass
class Proofs:
    """The accesses of one kernel that a workgroup's prologue can prove inside their arrays,
    by `SiteKey` (what `Emitter.site_key` gives where the access is emitted)."""

    sites: dict[SiteKey, SiteProof] = field(default_factory=dict)
    conflicting: set[SiteKey] = field(default_factory=set)

    def record(self, key: SiteKey, proof: SiteProof | None) -> None:
        """An access met at `key`; one met twice (an IR node shared by two places) or not
        bounded is left out."""
        if key in self.conflicting:
            return
        if proof is None or key in self.sites:
            self.sites.pop(key, None)
            self.conflicting.add(key)
            return
        self.sites[key] = proof

    @property
    def params(self) -> list[str]:
        """The array parameters some proof needs inside their buffers, in a fixed order."""
        return sorted({p.array for p in self.sites.values() if p.param})


def prove_accesses(kernel: ir.Kernel) -> Proofs:
    """The proofs of `kernel`'s array accesses (see the module's docstring)."""
    analysis = _Analysis(kernel)
    analysis.block(kernel.body, _Scope(None, analysis))
    return analysis.proofs


# ---------------------------------------------------------------- what is known where


@dataclass
class _Fact:
    """`subject` lies within `lower` and `upper` (forms) while the locals it was made of keep
    the generations they had (`deps`)."""

    subject: ir.Expr
    lower: tuple[b.Affine, ...]
    upper: tuple[b.Affine, ...]
    requires: frozenset[b.Fits]
    deps: dict[str, int]


class _Scope:
    """What a block knows: each local's bounds (with a generation, renewed at each
    assignment), and facts; an inner block's scope sees its parent's."""

    def __init__(self, parent: _Scope | None, analysis: _Analysis) -> None:
        self.parent, self.analysis = parent, analysis
        self.values: dict[str, tuple[int, Bounds | None]] = {}
        self.facts: list[_Fact] = []

    def lookup(self, name: str) -> tuple[int, Bounds | None]:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return 0, None  # never assigned here: its value is not known

    def bind(self, name: str, value: Bounds | None) -> None:
        self.values[name] = (self.analysis.generation(), value)

    def kill(self, names: set[str]) -> None:
        for name in names:
            self.bind(name, None)

    def facts_about(self, e: ir.Expr) -> list[_Fact]:
        found, scope = [], self
        while scope is not None:
            found += [f for f in scope.facts if f.subject == e and all(
                self.lookup(name)[0] == gen for name, gen in f.deps.items())]
            scope = scope.parent
        return found


class _Analysis:
    def __init__(self, kernel: ir.Kernel) -> None:
        self.kernel = kernel
        self.atoms = b.Atoms()
        self.proofs = Proofs()
        self.path: tuple[int, ...] = ()
        self._generations = 0
        self._visits = 0
        self.functions = {f.name: f for f in kernel.functions}
        self.params = {p.name: p for p in kernel.params}
        self.declared = {d.name: d for d in kernel.arrays}

    def generation(self) -> int:
        self._generations += 1
        return self._generations

    # ------------------------------------------------------------ statements

    def block(self, body: tuple[ir.Stmt, ...], scope: _Scope) -> None:
        for s in body:
            self.stmt(s, scope)

    def stmt(self, s: ir.Stmt, scope: _Scope) -> None:
        if isinstance(s, ir.Assign):
            scope.bind(s.name, self.value(s.value, scope))
        elif isinstance(s, ir.Store):
            self.value(s.value, scope)
            self.site(s, s.array, s.indices, scope)
        elif isinstance(s, (ir.Eval, ir.Assert)):
            self.value(s.value if isinstance(s, ir.Eval) else s.cond, scope)
        elif isinstance(s, ir.Return) and s.value is not None:
            self.value(s.value, scope)
        elif isinstance(s, ir.If):
            self.if_(s, scope)
        elif isinstance(s, ir.ForRange):
            self.for_range(s, scope)
        elif isinstance(s, ir.While):
            assigned = _assigned(s.body)
            scope.kill(assigned)
            self.value(s.cond, scope)
            inner = _Scope(scope, self)
            if not _has_barrier(s):
                self.facts(s.cond, True, inner)
            self.block(s.body, inner)
            scope.kill(assigned)
        # Break, Continue, Return without a value, Barrier, tiles: no access, no local

    def if_(self, s: ir.If, scope: _Scope) -> None:
        self.value(s.cond, scope)
        uniform = _has_barrier(s)  # run once per workgroup: its condition is no fact
        for body, truth in ((s.body, True), (s.orelse, False)):
            inner = _Scope(scope, self)
            if not uniform:
                self.facts(s.cond, truth, inner)
            self.block(body, inner)
        scope.kill(_assigned(s.body) | _assigned(s.orelse))
        if not s.orelse and s.body and isinstance(s.body[-1], (ir.Return, ir.Break,
                                                               ir.Continue)) and not uniform:
            self.facts(s.cond, False, scope)  # the block goes on only where it was false

    def for_range(self, s: ir.ForRange, scope: _Scope) -> None:
        start, stop, step = (self.value(e, scope) for e in (s.start, s.stop, s.step))
        assigned = _assigned(s.body) | {s.var}
        scope.kill(assigned)
        inner = _Scope(scope, self)
        if s.var not in _assigned(s.body):
            inner.bind(s.var, self.loop_variable(s, start, stop, step, _has_barrier(s)))
        self.block(s.body, inner)
        scope.kill(assigned)

    def loop_variable(self, s: ir.ForRange, start: Bounds | None, stop: Bounds | None,
                      step: Bounds | None, uniform: bool) -> Bounds | None:
        """The bounds of a `range` loop's variable inside its body: an atom between the
        first and the last value it takes, and (unless the loop runs once per workgroup with
        one invocation's bounds) the forms of those values."""
        if start is None or stop is None or step is None:
            return None
        size = b.constant_value(step)
        requires = start.requires | stop.requires | step.requires
        if size is None:  # a run-time step: positive where the prologue finds it so
            if not step.lower:
                return None
            requires |= step.with_requirement(1, None).requires
            size = 1
        if size == 0:
            return None
        first, last = (start, b.shift(stop, -1)) if size > 0 else (b.shift(stop, 1), start)
        if not (first.lower and last.upper):
            return None
        self._visits += 1
        atom = self.atoms.get(b.LOOP, (self._visits, first.lower, last.upper))
        own = b.of_atom(atom)
        if uniform:
            return Bounds(own.lower, own.upper, requires)
        return own.widened(first.lower, last.upper, requires)

    # ------------------------------------------------------------ accesses

    def site(self, node: ir.Node, array: str, indices: tuple[ir.Expr, ...],
             scope: _Scope) -> None:
        found = [self.value(i, scope) for i in indices]
        key = (self.path, id(node))
        if not all(f is not None and f.known and _checkable(f) for f in found):
            self.proofs.record(key, None)
            return
        param = array in self.params
        sizes = tuple(self.dimension(array, k) for k in range(len(indices)))
        self.proofs.record(key, SiteProof(array, param, tuple(found), sizes))  # type: ignore

    def dimension(self, array: str, axis: int) -> Bounds:
        declared = self.declared.get(array)
        if declared is not None:
            return b.constant(declared.shape[axis])
        return b.of_atom(self.atoms.get(b.UNIFORM, ("dim", array, axis)))

    # ------------------------------------------------------------ expressions

    def value(self, e: ir.Expr, scope: _Scope, record: bool = True) -> Bounds | None:
        """The bounds of integer expression `e` where it is evaluated (None: unknown, or not
        an integer), with what facts add; when `record`, the accesses inside it are met
        (each evaluation of an expression is met once)."""
        found = self._value(e, scope, record)
        facts = scope.facts_about(e) if _is_int(e.type) else []
        if not facts:
            return found
        base = found if found is not None else Bounds((), ())
        for f in facts:
            base = base.widened(f.lower, f.upper, f.requires)
        return base

    def _value(self, e: ir.Expr, scope: _Scope, record: bool) -> Bounds | None:
        handler = _HANDLERS.get(type(e))
        if handler is not None:
            return handler(self, e, scope, record)
        for child in _child_exprs(e):  # math, bitcasts, subgroups: their operands' accesses
            self.value(child, scope, record)
        return None

    def facts(self, cond: ir.Expr, truth: bool, scope: _Scope) -> None:
        """Adds to `scope` what `cond` being `truth` says of integer values."""
        if isinstance(cond, ir.UnaryOp) and cond.op is ir.UnaryOpKind.NOT:
            self.facts(cond.operand, not truth, scope)
            return
        both = _both_parts(cond, truth)
        if both is not None:
            for part in both:
                self.facts(part, truth, scope)
            return
        if isinstance(cond, ir.BinOp) and cond.op in _FLIPPED and _is_int(cond.lhs.type):
            op = cond.op if truth else _NEGATED[cond.op]
            self.comparison(cond.lhs, op, cond.rhs, scope)

    def comparison(self, lhs: ir.Expr, op: ir.BinOpKind, rhs: ir.Expr, scope: _Scope) -> None:
        if op in (ir.BinOpKind.GT, ir.BinOpKind.GE):
            lhs, rhs, op = rhs, lhs, _FLIPPED[op]
        if op is ir.BinOpKind.NE:
            return
        left, right = self.value(lhs, scope, False), self.value(rhs, scope, False)
        deps = {name: scope.lookup(name)[0] for name in _locals_in(lhs) | _locals_in(rhs)}
        gap = 1 if op is ir.BinOpKind.LT else 0
        if right is not None and right.upper:  # lhs <= rhs - gap
            scope.facts.append(_Fact(lhs, (), b.shift(right, -gap).upper, right.requires,
                                     deps))
        if left is not None and left.lower:  # rhs >= lhs + gap
            scope.facts.append(_Fact(rhs, b.shift(left, gap).lower, (), left.requires, deps))
        if op is ir.BinOpKind.EQ:
            if right is not None and right.lower:
                scope.facts.append(_Fact(lhs, right.lower, (), right.requires, deps))
            if left is not None and left.upper:
                scope.facts.append(_Fact(rhs, (), left.upper, left.requires, deps))

    def derived(self, op: str, *operands: Bounds) -> Bounds | None:
        """An atom for a value made of `operands` by a non-affine `op`, bounded by numbers
        computed from theirs; and where some operand names the workgroup's id, a second one
        computed from their forms of the launch alone (looser, but the prologue can then
        prove a launch as a whole: `pykern.llvm.proofs`)."""
        if not all(o.known for o in operands):
            return None
        requires = frozenset().union(*(o.requires for o in operands))
        atoms = [self.atoms.get(b.DERIVED, (op, *((o.lower, o.upper) for o in operands)))]
        if any(self.atoms.names_group(f) for o in operands for f in (*o.lower, *o.upper)):
            alone = [(tuple(f for f in o.lower if not self.atoms.names_group(f)),
                      tuple(f for f in o.upper if not self.atoms.names_group(f)))
                     for o in operands]
            if all(lower and upper for lower, upper in alone):
                atoms.append(self.atoms.get(b.DERIVED, (op, *alone)))
        forms = tuple(b.Affine(0, ((atom, 1),)) for atom in atoms)
        return Bounds(forms, forms, requires)

    def call(self, e: ir.Call, scope: _Scope, record: bool) -> None:
        """A device function's body, analysed for this call (each call is emitted apart)."""
        args = [self.value(a, scope, record) for a in e.args]
        if not record:
            return
        fn = self.functions[e.function]
        inner = _Scope(None, self)  # the function's locals are its own
        for param, value in zip(fn.params, args, strict=True):
            inner.bind(param.name, value if _is_int(param.type) else None)
        saved, self.path = self.path, self.path + (id(e),)
        try:
            self.block(fn.body, inner)
        finally:
            self.path = saved


# ---------------------------------------------------------------- expression handlers

def _const(an: _Analysis, e: ir.Const, scope: _Scope, record: bool) -> Bounds | None:
    if e.type.kind == dt.BOOL:
        return b.constant(int(bool(e.value)))
    return b.constant(int(e.value)) if _is_int(e.type) else None  # type: ignore[arg-type]


def _local(an: _Analysis, e: ir.LocalRef, scope: _Scope, record: bool) -> Bounds | None:
    return scope.lookup(e.name)[1] if _is_int(e.type) else None


def _scalar(an: _Analysis, e: ir.ScalarParam, scope: _Scope, record: bool) -> Bounds | None:
    if not _is_int(e.type):
        return None
    key = ("scalar", e.name, e.type.kind == dt.INT, e.type.bits)
    return b.of_atom(an.atoms.get(b.UNIFORM, key))


def _dim(an: _Analysis, e: ir.ArrayDim, scope: _Scope, record: bool) -> Bounds | None:
    return an.dimension(e.array, e.axis)


def _builtin(an: _Analysis, e: ir.Builtin, scope: _Scope, record: bool) -> Bounds | None:
    k, d, size = e.kind, e.dim, an.kernel.workgroup[e.dim]
    local = b.of_atom(an.atoms.get(b.LOCAL, ("local", d, size)))
    group = b.of_atom(an.atoms.get(b.UNIFORM, ("group", d)))
    groups = b.of_atom(an.atoms.get(b.UNIFORM, ("groups", d)))
    # besides the workgroup's own forms, ones of the launch alone (a workgroup id lies in
    # [0, num_groups - 1]): the prologue can then prove a whole launch at once
    if k is ir.BuiltinKind.GLOBAL_ID and an.kernel.items == 1:
        last = b.shift(b.scale(groups, size), -1)
        return b.add(b.scale(group, size), local).widened((b.Affine(0),), last.upper)
    if k is ir.BuiltinKind.LOCAL_ID:
        return local
    if k is ir.BuiltinKind.GROUP_ID:
        return group.widened((b.Affine(0),), b.shift(groups, -1).upper)
    if k is ir.BuiltinKind.GROUP_SIZE:
        return b.constant(size)
    if k is ir.BuiltinKind.GRID:
        return b.of_atom(an.atoms.get(b.UNIFORM, ("grid", d)))
    if k is ir.BuiltinKind.NUM_GROUPS:
        return groups
    return None


def _binop(an: _Analysis, e: ir.BinOp, scope: _Scope, record: bool) -> Bounds | None:
    lhs, rhs = an.value(e.lhs, scope, record), an.value(e.rhs, scope, record)
    t = e.type
    if _is_int(t) and e.op in (ir.BinOpKind.MIN, ir.BinOpKind.MAX):
        # a clamp of an unknown value (an index read from memory) is bounded by its limits
        lhs, rhs = _within_type(lhs, t), _within_type(rhs, t)
    if not _is_int(t) or lhs is None or rhs is None:
        return None
    rule = _ARITHMETIC.get(e.op)
    return rule(an, t, lhs, rhs) if rule is not None else None


def _fits(value: Bounds | None, t: DType) -> Bounds | None:
    if value is None:
        return None
    low, high = _type_range(t)
    return value.with_requirement(low, high)


def _add(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    return _fits(b.add(x, y), t)


def _sub(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    return _fits(b.subtract(x, y), t)


def _mul(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    for value, factor in ((x, b.constant_value(y)), (y, b.constant_value(x))):
        if factor is not None:
            return _fits(b.scale(value, factor), t)
    if t.kind == dt.UINT and t.bits == 64:  # its products would not fit the prologue's i128
        return None
    return _fits(an.derived("mul", x, y), t)


def _floordiv(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    if t.bits == 64 and t.kind == dt.UINT:
        return None
    divisor = y.with_requirement(1, None)  # floors monotonically only by positive divisors
    return an.derived("div", x, divisor)


def _mod(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    if not y.upper:
        return None
    # Python's %: in [0, y - 1] for a positive y, whatever x is (wrapped or not); an atom of
    # its own too, so that `r = i % n` cancels in `(n - r) + r`
    divisor = y.with_requirement(1, None)
    own = an.derived("mod", x, divisor) if x.known else None
    lower = (*(own.lower if own is not None else ()), b.Affine(0))
    upper = (*(own.upper if own is not None else ()), *b.shift(divisor, -1).upper)
    return Bounds(lower, upper, divisor.requires)


def _within_type(value: Bounds | None, t: DType) -> Bounds | None:
    """`value` with the limits of its type `t` for the sides it does not know: a value of `t`
    lies within them whatever made it (so `min(max(k, 0), n - 1)` is in [0, n - 1] for a `k`
    read from memory). Only for types up to 32 bits, whose limits are small constants."""
    if t.bits > 32:
        return value
    low, high = _type_range(t)
    value = value if value is not None else Bounds((), ())
    return Bounds(value.lower or (b.Affine(low),), value.upper or (b.Affine(high),),
                  value.requires)


def _min(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    own = an.derived("min", x, y)
    lower = own.lower if own is not None else ()
    return Bounds(lower, b.upper_of_minimum(x, y), x.requires | y.requires)


def _max(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    own = an.derived("max", x, y)
    upper = own.upper if own is not None else ()
    return Bounds(b.lower_of_maximum(x, y), upper, x.requires | y.requires)


def _bit_and(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    for mask in (b.constant_value(y), b.constant_value(x)):
        if mask is not None and mask >= 0:  # in [0, mask], whatever the other operand is
            return Bounds((b.Affine(0),), (b.Affine(mask),))
    return None


def _rshift(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    count = b.constant_value(y)
    if count is None or not 0 <= count < t.bits:
        return None
    return _floordiv(an, t, x, b.constant(1 << count))


def _lshift(an: _Analysis, t: DType, x: Bounds, y: Bounds) -> Bounds | None:
    count = b.constant_value(y)
    if count is None or not 0 <= count < min(t.bits, 31):
        return None
    return _fits(b.scale(x, 1 << count), t)


_ARITHMETIC: dict[ir.BinOpKind, Callable[[_Analysis, DType, Bounds, Bounds], Bounds | None]] = {
    ir.BinOpKind.ADD: _add, ir.BinOpKind.SUB: _sub, ir.BinOpKind.MUL: _mul,
    ir.BinOpKind.FLOORDIV: _floordiv, ir.BinOpKind.MOD: _mod, ir.BinOpKind.MIN: _min,
    ir.BinOpKind.MAX: _max, ir.BinOpKind.BIT_AND: _bit_and, ir.BinOpKind.RSHIFT: _rshift,
    ir.BinOpKind.LSHIFT: _lshift,
}


def _unaryop(an: _Analysis, e: ir.UnaryOp, scope: _Scope, record: bool) -> Bounds | None:
    x = an.value(e.operand, scope, record)
    t = e.type
    if x is None or not _is_int(t):
        return None
    if e.op is ir.UnaryOpKind.NEG:
        return _fits(b.negate(x), t)
    if e.op is ir.UnaryOpKind.INVERT:  # ~x == -x - 1 (signed), 2**bits - 1 - x (unsigned)
        return b.shift(b.negate(x), -1 if t.kind == dt.INT else (1 << t.bits) - 1)
    if e.op is ir.UnaryOpKind.ABS:
        return _fits(an.derived("abs", x), t)
    return None


def _cast(an: _Analysis, e: ir.Cast, scope: _Scope, record: bool) -> Bounds | None:
    x = an.value(e.value, scope, record)
    source, target = e.value.type, e.type
    if x is None or not _is_int(target):
        return None
    if source.kind == dt.BOOL:
        return b.Bounds((b.Affine(0),), (b.Affine(1),))
    if not _is_int(source):
        return None
    (low, high), (source_low, source_high) = _type_range(target), _type_range(source)
    if low <= source_low and source_high <= high:
        return x  # widening: the same value
    return x.with_requirement(low, high)  # narrowing or a change of sign: the same where it fits


def _choice(an: _Analysis, e: ir.Select | ir.IfExp, scope: _Scope,
            record: bool) -> Bounds | None:
    an.value(e.cond, scope, record)
    if isinstance(e, ir.IfExp):  # only the chosen branch runs, where its condition holds
        branches = []
        for branch, truth in ((e.then, True), (e.orelse, False)):
            inner = _Scope(scope, an)
            an.facts(e.cond, truth, inner)
            branches.append(an.value(branch, inner, record))
        then, orelse = branches
    else:
        then, orelse = an.value(e.then, scope, record), an.value(e.orelse, scope, record)
    if then is None or orelse is None or not _is_int(e.type):
        return None
    return an.derived("union", then, orelse)


def _logical(an: _Analysis, e: ir.Logical, scope: _Scope, record: bool) -> Bounds | None:
    an.value(e.lhs, scope, record)
    inner = _Scope(scope, an)  # the right side runs only where the left did not decide
    an.facts(e.lhs, e.op is ir.LogicalKind.AND, inner)
    an.value(e.rhs, inner, record)
    return None


def _load(an: _Analysis, e: ir.ArrayLoad, scope: _Scope, record: bool) -> Bounds | None:
    if record:
        an.site(e, e.array, e.indices, scope)
    else:
        for i in e.indices:
            an.value(i, scope, record)
    return None


def _atomic(an: _Analysis, e: ir.Atomic, scope: _Scope, record: bool) -> Bounds | None:
    # the emitter evaluates the indices, then the comparator, then the value
    if record:
        an.site(e, e.array, e.indices, scope)
    if e.comparator is not None:
        an.value(e.comparator, scope, record)
    an.value(e.value, scope, record)
    return None


def _call(an: _Analysis, e: ir.Call, scope: _Scope, record: bool) -> Bounds | None:
    an.call(e, scope, record)
    return None


_HANDLERS: dict[type, Callable[..., Bounds | None]] = {
    ir.Const: _const, ir.LocalRef: _local, ir.ScalarParam: _scalar, ir.ArrayDim: _dim,
    ir.Builtin: _builtin, ir.BinOp: _binop, ir.UnaryOp: _unaryop, ir.Cast: _cast,
    ir.Select: _choice, ir.IfExp: _choice, ir.Logical: _logical, ir.ArrayLoad: _load,
    ir.Atomic: _atomic, ir.Call: _call,
}


# ---------------------------------------------------------------- helpers

_FLIPPED = {ir.BinOpKind.LT: ir.BinOpKind.GT, ir.BinOpKind.LE: ir.BinOpKind.GE,
            ir.BinOpKind.GT: ir.BinOpKind.LT, ir.BinOpKind.GE: ir.BinOpKind.LE,
            ir.BinOpKind.EQ: ir.BinOpKind.EQ, ir.BinOpKind.NE: ir.BinOpKind.NE}
_NEGATED = {ir.BinOpKind.LT: ir.BinOpKind.GE, ir.BinOpKind.LE: ir.BinOpKind.GT,
            ir.BinOpKind.GT: ir.BinOpKind.LE, ir.BinOpKind.GE: ir.BinOpKind.LT,
            ir.BinOpKind.EQ: ir.BinOpKind.NE, ir.BinOpKind.NE: ir.BinOpKind.EQ}


def _both_parts(cond: ir.Expr, truth: bool) -> tuple[ir.Expr, ir.Expr] | None:
    """The two conditions that both hold where `cond` is `truth`: `a and b` (or `a & b` of
    bools) true, `a or b` (or `a | b`) false; else None."""
    if isinstance(cond, ir.Logical):
        if (cond.op is ir.LogicalKind.AND) == truth:
            return cond.lhs, cond.rhs
        return None
    if isinstance(cond, ir.BinOp) and cond.type.kind == dt.BOOL:
        if (cond.op is ir.BinOpKind.BIT_AND and truth) or \
                (cond.op is ir.BinOpKind.BIT_OR and not truth):
            return cond.lhs, cond.rhs
    return None


def _checkable(value: Bounds) -> bool:
    """Whether the prologue can check every requirement of `value` (each has forms on the
    sides it limits): one it cannot would fail every workgroup's proof."""
    return all((need.low is None or need.lower) and (need.high is None or need.upper)
               for need in value.requires)


def _is_int(t: object) -> bool:
    return isinstance(t, DType) and not isinstance(t, ArrayType) and t.is_int


def _type_range(t: DType) -> tuple[int, int]:
    if t.kind == dt.BOOL:
        return 0, 1
    if t.kind == dt.UINT:
        return 0, (1 << t.bits) - 1
    return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1


def _assigned(body: tuple[ir.Stmt, ...]) -> set[str]:
    """The locals a block may assign (loop variables included)."""
    names: set[str] = set()
    for s in body:
        for n in ir.walk(s):
            if isinstance(n, ir.Assign):
                names.add(n.name)
            elif isinstance(n, ir.ForRange):
                names.add(n.var)
    return names


def _has_barrier(s: ir.Stmt) -> bool:
    return any(isinstance(n, ir.Barrier) for n in ir.walk(s))


def _locals_in(e: ir.Expr) -> set[str]:
    return {n.name for n in ir.walk(e) if isinstance(n, ir.LocalRef)}


def _child_exprs(e: ir.Expr) -> list[ir.Expr]:
    out: list[ir.Expr] = []
    for value in vars(e).values():
        for child in value if isinstance(value, tuple) else (value,):
            if isinstance(child, ir.Expr):
                out.append(child)
    return out
