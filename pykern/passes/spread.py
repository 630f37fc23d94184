"""`spread`: a kernel made to run several logical invocations per invocation, for GPUs.

A GPU keeps its memory bus full only with enough loads in flight: on the H200, the natural
one-element kernel (`out[i] = x[i] + y[i]`, grid = n) reaches 0.77 of torch's bandwidth, the
same kernel hand-written with four elements per invocation, loads first, 1.00 — and a plain loop
over four elements (load, store, load, store) 0.85. So this pass rewrites a kernel whose body
only uses its global id along x into one where each invocation runs the body for `items`
logical invocations as far apart as the dispatch has invocations (`ir.BuiltinKind.SPREAD_BASE`
is the first, `SPREAD_STRIDE` the distance; `Kernel.items` tells the backend and the runtime,
which launches a workgroup per `workgroup[0] * items` of the grid). Where all `items` ids are
inside the grid (every invocation but the last few), the copies of the body run in lockstep:
each statement for every copy before the next statement, a store's index and value computed
for every copy before any copy stores, an `if` taken together when its condition agrees in
every copy (and copy by copy when not). Elsewhere the copies run one after the other, each
masked by the grid.

Invocations of a launch run in no defined order, so interleaving the statements of different
logical invocations changes nothing a kernel may rely on. Kernels that can tell — those with
barriers or tiles (not masked), subgroup operations, local or workgroup ids, shared or local
arrays, loops or early returns, debug mode — are left as they are.
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from typing import Protocol

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.passes.rewrite import rewrite

# logical invocations per invocation on a GPU, for every kernel that allows it (the op
# library's, users' and @pk.fuse's alike): on the H200 a one-element add runs at 0.77 of
# torch's bandwidth with one, at 1.00 with four whose loads come first
ITEMS_PER_INVOCATION = 4
_STRAIGHT = (ir.Assign, ir.Store, ir.Eval)  # statements copied as they are
# The largest body spread, in IR nodes, a math function counting as CALL_WEIGHT and a call of
# a device function as the nodes of its body: the rewrite holds 2 * items copies of the body,
# and a body beyond a few dozen nodes does enough work per element that more loads in flight
# no longer pay for that code (four inline sines are a thousand SPIR-V instructions).
MAX_WEIGHT = 64
CALL_WEIGHT = 16
_PER_INVOCATION = (ir.Subgroup, ir.Barrier, ir.CoopFill, ir.CoopLoad, ir.CoopMma, ir.CoopScale,
                   ir.CoopStore)


class SpreadFacts(Protocol):
    """What a target states about spreading (`pykern.spirv.Target` is one)."""

    items_per_invocation: int
    max_workgroup_span: int


def spread(kernel: ir.Kernel, items: int) -> ir.Kernel:
    """`kernel` running `items` logical invocations per invocation, or `kernel` itself where
    it cannot (see the module docstring) or `items` is 1."""
    if items <= 1 or not spreadable(kernel):
        return kernel
    return _Spreader(kernel, items).kernel()


def spread_for(kernel: ir.Kernel, target: SpreadFacts) -> ir.Kernel:
    """`spread` with the target's items per invocation, halved until a workgroup's span fits
    the target's limit."""
    items = target.items_per_invocation
    while items > 1 and kernel.workgroup[0] * items > target.max_workgroup_span:
        items //= 2
    return spread(kernel, items)


def spreadable(kernel: ir.Kernel) -> bool:
    """Whether `spread` can rewrite `kernel`: masked along x alone, its body after the mask
    made of assignments, stores, expression statements and `if`s of them, small (MAX_WEIGHT),
    and nothing in it or its functions that tells one invocation of a workgroup from another
    but the global id along x."""
    if kernel.debug or not kernel.masked or kernel.arrays or kernel.items != 1 \
            or kernel.workgroup[1:] != (1, 1) or not kernel.body \
            or kernel.body[0] != _x_mask():
        return False
    for node in ir.walk(kernel):
        if isinstance(node, _PER_INVOCATION):
            return False
        if isinstance(node, ir.Builtin) and node.kind is not ir.BuiltinKind.GRID and not (
                node.kind is ir.BuiltinKind.GLOBAL_ID and node.dim == 0):
            return False
    in_functions = (n for f in kernel.functions for n in ir.walk(f))
    if any(isinstance(n, ir.Builtin) and n.kind is ir.BuiltinKind.GLOBAL_ID
           for n in in_functions):
        return False  # a function's body is shared by the copies: it cannot be renamed
    functions = {f.name: f for f in kernel.functions}
    return all(_straight(s) for s in kernel.body[1:]) and \
        _weight(kernel.body, functions) <= MAX_WEIGHT


def _weight(stmts: tuple[ir.Stmt, ...], functions: dict[str, ir.Function]) -> int:
    """The IR nodes of `stmts`, a math call as CALL_WEIGHT, a call as its function's body
    (functions never recurse)."""
    total = 0
    for s in stmts:
        for n in ir.walk(s):
            if isinstance(n, ir.MathCall):
                total += CALL_WEIGHT
            elif isinstance(n, ir.Call) and n.function in functions:
                total += 1 + _weight(functions[n.function].body, functions)
            else:
                total += 1
    return total


def _straight(s: ir.Stmt) -> bool:
    if isinstance(s, ir.If):
        return all(_straight(t) for t in s.body + s.orelse)
    return isinstance(s, _STRAIGHT)


def _x_mask() -> ir.Stmt:
    """The frontend's grid mask of a kernel launched over x (locations do not compare)."""
    past = ir.BinOp(op=ir.BinOpKind.GE, lhs=_builtin(ir.BuiltinKind.GLOBAL_ID),
                    rhs=_builtin(ir.BuiltinKind.GRID), type=dt.bool_)
    return ir.If(cond=past, body=(ir.Return(),))


def _builtin(kind: ir.BuiltinKind, loc: ir.Loc = ir.UNKNOWN_LOC) -> ir.Expr:
    return ir.Builtin(kind=kind, dim=0, type=dt.i32, loc=loc)


def _i32(value: int) -> ir.Expr:
    return ir.Const(value=value, type=dt.i32)


def _local(name: str, type_: dt.DType, loc: ir.Loc) -> ir.Expr:
    return ir.LocalRef(name=name, type=type_, loc=loc)


class _Spreader:
    """The rewrite of one kernel: copy j of a local `x` is `x#j` (no Python name has a '#'),
    copy j's global id `#gidj`, the distance between copies `#stride`; `temps` are the locals
    the lockstep stores and ifs add (`#t0`, `#t1`, ...)."""

    def __init__(self, kernel: ir.Kernel, items: int) -> None:
        self.k, self.items = kernel, items
        self.temps: list[ir.Local] = []

    def kernel(self) -> ir.Kernel:
        k, loc = self.k, self.k.loc
        body = k.body[1:]
        ids: list[ir.Stmt] = [
            ir.Assign(name="#gid0", value=_builtin(ir.BuiltinKind.SPREAD_BASE, loc), loc=loc),
            ir.Assign(name="#stride", value=_builtin(ir.BuiltinKind.SPREAD_STRIDE, loc),
                      loc=loc)]
        for j in range(1, self.items):
            ids.append(ir.Assign(name=f"#gid{j}", value=ir.BinOp(
                op=ir.BinOpKind.ADD, lhs=_local("#gid0", dt.i32, loc), rhs=self.apart(j),
                type=dt.i32, loc=loc), loc=loc))
        lockstep = self.lockstep(body)
        # one by one past the grid's end: copy j runs where #gid0 + j * #stride < grid
        one_by_one = tuple(ir.If(cond=self.inside(j), body=self.copy_block(body, j), loc=loc)
                           for j in range(self.items))
        every = ir.If(cond=self.inside(self.items - 1), body=tuple(lockstep),
                      orelse=one_by_one, loc=loc)
        locals_ = tuple(replace(v, name=f"{v.name}#{j}") for j in range(self.items)
                        for v in k.locals)
        locals_ += tuple(ir.Local(name=f"#gid{j}", type=dt.i32, loc=loc)
                         for j in range(self.items))
        locals_ += (ir.Local(name="#stride", type=dt.i32, loc=loc),)
        return replace(k, locals=locals_ + tuple(self.temps), body=(*ids, every),
                       items=self.items)

    def apart(self, j: int) -> ir.Expr:
        """How far copy j's global id is from copy 0's: `j * #stride`."""
        loc = self.k.loc
        return ir.BinOp(op=ir.BinOpKind.MUL, lhs=_i32(j), rhs=_local("#stride", dt.i32, loc),
                        type=dt.i32, loc=loc)

    def inside(self, j: int) -> ir.Expr:
        """Whether copy j is inside the grid, as `#gid0 < grid(0) - j * #stride` (which does
        not overflow near 2^31)."""
        loc = self.k.loc
        limit = ir.BinOp(op=ir.BinOpKind.SUB, lhs=_builtin(ir.BuiltinKind.GRID, loc),
                         rhs=self.apart(j), type=dt.i32, loc=loc)
        return ir.BinOp(op=ir.BinOpKind.LT, lhs=_local("#gid0", dt.i32, loc), rhs=limit,
                        type=dt.bool_, loc=loc)

    # ---- copies

    def copy(self, node: ir.Node, j: int) -> ir.Node:
        """Copy `j` of `node`: its locals and its global id renamed."""
        def visit(n: ir.Node) -> ir.Node:
            if isinstance(n, ir.LocalRef):
                return replace(n, name=f"{n.name}#{j}")
            if isinstance(n, ir.Assign):
                return replace(n, name=f"{n.name}#{j}")
            if isinstance(n, ir.Builtin) and n.kind is ir.BuiltinKind.GLOBAL_ID:
                return ir.LocalRef(name=f"#gid{j}", type=dt.i32, loc=n.loc)
            return n

        return rewrite(node, visit)

    def copy_block(self, stmts: tuple[ir.Stmt, ...], j: int) -> tuple[ir.Stmt, ...]:
        return tuple(self.copy(s, j) for s in stmts)  # type: ignore[misc]

    # ---- lockstep

    def lockstep(self, stmts: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
        """Every copy of each statement of `stmts` before the next statement."""
        out: list[ir.Stmt] = []
        for s in stmts:
            if isinstance(s, ir.If):
                out += self.lockstep_if(s)
            elif isinstance(s, ir.Store):
                out += self.lockstep_store(s)
            else:
                out += [self.copy(s, j) for j in range(self.items)]  # type: ignore[misc]
        return out

    def lockstep_store(self, s: ir.Store) -> list[ir.Stmt]:
        """Every copy's indices and value (their loads), then every copy's store."""
        first: list[ir.Stmt] = []
        stores: list[ir.Stmt] = []
        for j in range(self.items):
            c: ir.Store = self.copy(s, j)  # type: ignore[assignment]
            indices = tuple(self.temp(first, e) for e in c.indices)
            stores.append(replace(c, indices=indices, value=self.temp(first, c.value)))
        return first + stores

    def lockstep_if(self, s: ir.If) -> list[ir.Stmt]:
        """The condition of every copy; the branch together where all hold, else copy by
        copy."""
        first: list[ir.Stmt] = []
        conds = [self.temp(first, self.copy(s.cond, j)) for j in range(self.items)]  # type: ignore[arg-type]
        every = reduce(lambda a, b: ir.BinOp(op=ir.BinOpKind.BIT_AND, lhs=a, rhs=b,
                                             type=dt.bool_, loc=s.loc), conds)
        one_by_one = tuple(ir.If(cond=c, body=self.copy_block(s.body, j),
                                 orelse=self.copy_block(s.orelse, j), loc=s.loc)
                           for j, c in enumerate(conds))
        return first + [ir.If(cond=every, body=tuple(self.lockstep(s.body)), orelse=one_by_one,
                              loc=s.loc)]

    def temp(self, out: list[ir.Stmt], e: ir.Expr) -> ir.Expr:
        """`e`, computed into a new local by a statement appended to `out` — except where it
        is as cheap to name again, or of a type narrower than 32 bits (whose locals may need
        a device feature that its loads and stores do not)."""
        if isinstance(e, (ir.Const, ir.LocalRef, ir.ScalarParam)) or \
                (e.type != dt.bool_ and e.type.bits < 32):
            return e
        name = f"#t{len(self.temps)}"
        self.temps.append(ir.Local(name=name, type=e.type, loc=e.loc))
        out.append(ir.Assign(name=name, value=e, loc=e.loc))
        return _local(name, e.type, e.loc)
