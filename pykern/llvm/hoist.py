"""Subgroup exchanges moved out of expressions into statements of their own, so that the
region splitter (`pykern.llvm.regions`) can cut the kernel at each one.

An exchange needs every lane's operand before any lane gets its result, and the host runs
invocations one after another: so each exchanging operation (every `pk.subgroup_*` but
`subgroup_lane` and `subgroup_size`, which are per-invocation values) becomes a statement

    _pk_sg<N> = pk.subgroup_<op>(a, b)        # a, b: locals

(its operands first assigned to locals of their own where they are not locals already) and
the expression that used it reads `_pk_sg<N>`. The same goes for a call of a `@pk.func` that
exchanges, which the inliner (`pykern.llvm.inline`) then replaces by its body. A `while` whose
condition exchanges becomes `while True:` that evaluates the condition first and breaks when
it is false. Operands are evaluated in the order the interpreter evaluates them (children
first, in field order).

An exchange in a branch of `a if c else b`, or on the right of `and`/`or`, runs only for the
invocations that evaluate it: there the expression becomes an `if` statement (`t = c; if t:
t = <rhs>` for `and`), which the region splitter runs divergently like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from pykern import ir
from pykern.lang import dtypes as dt

# the operations that exchange values between lanes (lane and size are per-invocation)
EXCHANGING = frozenset(op for op in ir.SubgroupOp
                       if op not in (ir.SubgroupOp.LANE, ir.SubgroupOp.SIZE))
PREFIX = "_pk_sg"


def is_exchange(node: ir.Node) -> bool:
    return isinstance(node, ir.Subgroup) and node.op in EXCHANGING


def exchange_of(s: ir.Stmt) -> ir.Subgroup | None:
    """The exchange of `s` if `s` is one in the form this pass leaves: `t = op(locals)`, `t`
    none of them (lanes' results are stored while other lanes' operands are still read)."""
    if isinstance(s, ir.Assign) and is_exchange(s.value):
        sg: ir.Subgroup = s.value  # type: ignore[assignment]
        if all(isinstance(a, ir.LocalRef) and a.name != s.name for a in sg.args):
            return sg
    return None


def contains_exchange(node: ir.Node) -> bool:
    return any(is_exchange(n) for n in ir.walk(node))


def exchanging_functions(kernel: ir.Kernel) -> set[str]:
    """The functions that exchange or call one that does (callees come first)."""
    found: set[str] = set()
    for f in kernel.functions:
        if any(is_exchange(n) or (isinstance(n, ir.Call) and n.function in found)
               for n in ir.walk(f)):
            found.add(f.name)
    return found


def hoist_exchanges(kernel: ir.Kernel) -> ir.Kernel:
    """`kernel` with every exchange, and every call of an exchanging function, a statement of
    its own (see the module docstring), in its body and in its exchanging functions' bodies;
    the same object where there is none."""
    calls = exchanging_functions(kernel)
    if not calls and not any(contains_exchange(s) for s in kernel.body):
        return kernel
    functions = []
    for f in kernel.functions:
        if f.name in calls:
            hoister = _Hoister(calls, {local.name for local in (*f.params, *f.locals)})
            body = hoister.block(f.body)
            f = replace(f, body=body, locals=f.locals + tuple(hoister.new_locals))
        functions.append(f)
    hoister = _Hoister(calls, {local.name for local in kernel.locals})
    body = hoister.block(kernel.body)
    return replace(kernel, body=body, locals=kernel.locals + tuple(hoister.new_locals),
                   functions=tuple(functions))


@dataclass
class _Hoister:
    calls: set[str]
    taken: set[str]
    new_locals: list[ir.Local] = field(default_factory=list)

    def block(self, body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        return tuple(new for s in body for new in self.stmt(s))

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if exchange_of(s) is not None:
            return [s]
        if isinstance(s, (ir.Assign, ir.Eval, ir.Return)) and s.value is not None:
            pre, value = self.expr(s.value, top=True)
            return [*pre, replace(s, value=value)]
        if isinstance(s, ir.Store):
            pre, indices = self.exprs(s.indices)
            more, value = self.expr(s.value)
            return [*pre, *more, replace(s, indices=indices, value=value)]
        if isinstance(s, ir.If):
            pre, cond = self.expr(s.cond)
            return [*pre, replace(s, cond=cond, body=self.block(s.body),
                                  orelse=self.block(s.orelse))]
        if isinstance(s, ir.ForRange):
            pre, (start, stop, step) = self.exprs((s.start, s.stop, s.step))
            return [*pre, replace(s, start=start, stop=stop, step=step,
                                  body=self.block(s.body))]
        if isinstance(s, ir.While):
            return self.while_loop(s)
        return [s]

    def while_loop(self, s: ir.While) -> list[ir.Stmt]:
        pre, cond = self.expr(s.cond)
        if not pre:
            return [replace(s, body=self.block(s.body))]
        if any(isinstance(n, ir.Barrier) for n in ir.walk(s)):
            # runs once per workgroup (`regions.Workgroup.uniform`), where `break` is refused:
            # `<c's exchanges>; while c: ...; <c's exchanges>` (nor is `continue` there)
            return [*pre, replace(s, cond=cond, body=(*self.block(s.body), *pre))]
        # `while c:` -> `while True: <c's exchanges>; if not c: break; ...`
        leave = ir.If(cond=ir.UnaryOp(op=ir.UnaryOpKind.NOT, operand=cond, type=dt.bool_,
                                      loc=s.cond.loc),
                      body=(ir.Break(loc=s.loc),), loc=s.loc)
        return [replace(s, cond=ir.Const(value=True, type=dt.bool_, loc=s.cond.loc),
                        body=(*pre, leave, *self.block(s.body)))]

    def exprs(self, values: tuple[ir.Expr, ...]) -> tuple[list[ir.Stmt], tuple[ir.Expr, ...]]:
        pre: list[ir.Stmt] = []
        out = []
        for v in values:
            more, new = self.expr(v)
            pre += more
            out.append(new)
        return pre, tuple(out)

    def expr(self, e: ir.Expr, top: bool = False) -> tuple[list[ir.Stmt], ir.Expr]:
        """The statements that compute `e`'s exchanges, and `e` reading their results. At
        the top of an assignment or `Eval`, a call of an exchanging function stays (the
        inliner takes it from there); only its arguments move."""
        pre: list[ir.Stmt] = []
        if top and isinstance(e, ir.Call) and e.function in self.calls:
            return pre, replace(e, args=tuple(self.lower(a, pre) for a in e.args))
        return pre, self.lower(e, pre)

    def lower(self, e: ir.Expr, pre: list[ir.Stmt]) -> ir.Expr:
        """`e` with the statements of its exchanges appended to `pre` (children first, in
        field order); a conditional expression or and/or whose lazy part exchanges becomes an
        `if`, so that only the invocations that evaluate that part take part."""
        if not self.synchronises(e):
            return e
        if isinstance(e, ir.IfExp) and (self.synchronises(e.then) or
                                        self.synchronises(e.orelse)):
            return self.conditional(e, pre)
        if isinstance(e, ir.Logical) and self.synchronises(e.rhs):
            return self.short_circuit(e, pre)
        changes: dict[str, Any] = {}
        for f in fields(e):
            value = getattr(e, f.name)
            if isinstance(value, ir.Expr):
                changes[f.name] = self.lower(value, pre)
            elif isinstance(value, tuple) and value and isinstance(value[0], ir.Expr):
                changes[f.name] = tuple(self.lower(v, pre) for v in value)
        e = replace(e, **changes) if changes else e
        if isinstance(e, ir.Subgroup):  # an exchange: `synchronises` said so
            args = tuple(a if isinstance(a, ir.LocalRef) else self.temp(a, pre)
                         for a in e.args)
            return self.temp(replace(e, args=args), pre)
        if isinstance(e, ir.Call) and e.function in self.calls:
            return self.temp(e, pre)
        return e

    def synchronises(self, e: ir.Expr) -> bool:
        return any(is_exchange(n) or (isinstance(n, ir.Call) and n.function in self.calls)
                   for n in ir.walk(e))

    def conditional(self, e: ir.IfExp, pre: list[ir.Stmt]) -> ir.LocalRef:
        """`then if cond else orelse` as `if cond: t = then else: t = orelse`; `t`."""
        cond = self.lower(e.cond, pre)
        result = self.new_local(e.type, e.loc)
        branches = []
        for part in (e.then, e.orelse):
            inner: list[ir.Stmt] = []
            value = self.lower(part, inner)
            branches.append((*inner, ir.Assign(name=result.name, value=value, loc=part.loc)))
        pre.append(ir.If(cond=cond, body=branches[0], orelse=branches[1], loc=e.loc))
        return result

    def short_circuit(self, e: ir.Logical, pre: list[ir.Stmt]) -> ir.LocalRef:
        """`lhs and rhs` as `t = lhs; if t: t = rhs` (`or`: `if not t`); `t`."""
        t = self.temp(self.lower(e.lhs, pre), pre)
        inner: list[ir.Stmt] = []
        rhs = self.lower(e.rhs, inner)
        cond: ir.Expr = t if e.op is ir.LogicalKind.AND else \
            ir.UnaryOp(op=ir.UnaryOpKind.NOT, operand=t, type=dt.bool_, loc=e.loc)
        pre.append(ir.If(cond=cond, body=(*inner, ir.Assign(name=t.name, value=rhs,
                                                            loc=e.rhs.loc)), loc=e.loc))
        return t

    def new_local(self, t: dt.DType, loc: ir.Loc) -> ir.LocalRef:
        n = len(self.new_locals)
        while f"{PREFIX}{n}" in self.taken:
            n += 1
        name = f"{PREFIX}{n}"
        self.taken.add(name)
        self.new_locals.append(ir.Local(name=name, type=t, loc=loc))
        return ir.LocalRef(name=name, type=t, loc=loc)

    def temp(self, value: ir.Expr, pre: list[ir.Stmt]) -> ir.LocalRef:
        """A new local assigned `value` (appended to `pre`), read back."""
        ref = self.new_local(value.type, value.loc)
        pre.append(ir.Assign(name=ref.name, value=value, loc=value.loc))
        return ref
