"""Lowering of IR statements and structured control flow: one method per statement class."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from pykern import ir
from pykern.ir import BinOpKind as B

from pykern.spirv import arith, arrays, coop, loopcap
from pykern.spirv.context import LoweringContext
from pykern.spirv.control import Loop, counted_loop, selection, while_loop
from pykern.spirv.expressions import ExpressionLowering
from pykern.spirv.encoding.grammar import MemorySemantics, Scope
from pykern.spirv.numerics import narrow_int
from pykern.spirv.numerics.pysemantics import range_length
from pykern.spirv.typemap import unsigned
from pykern.spirv.encoding.types import U32, IntType


class StatementLowering:
    """Emits statements into the kernel's function; keeps the stack of enclosing loops."""

    def __init__(self, ctx: LoweringContext) -> None:
        self.ctx = ctx
        self.fn = ctx.fn
        self.expr = ExpressionLowering(ctx)
        self._loops: list[Loop] = []

    def lower_block(self, stmts: Sequence[ir.Stmt]) -> None:
        """Emits `stmts` in order. Statements after one that left the block (return, break,
        continue, or an if whose every branch did) are dead and not emitted: SPIR-V has no
        place for instructions after a block's terminator."""
        for stmt in stmts:
            if not self.fn.is_open:
                return
            method = _DISPATCH.get(type(stmt))
            if method is None:
                raise AssertionError(f"no lowering for IR statement {type(stmt).__name__}")
            self.ctx.loc = stmt.loc
            method(self, stmt)

    def _assign(self, s: ir.Assign) -> None:
        self.fn.store(self.ctx.locals[s.name], self.expr.lower(s.value))

    def _store(self, s: ir.Store) -> None:
        # Python evaluates the value before the subscript of the target
        value = self.expr.lower(s.value)
        indices = tuple(self.expr.lower(i) for i in s.indices)
        array = self.ctx.arrays[s.array]

        def access() -> None:
            arrays.store(self.fn, self.ctx.module, array, self.ctx.local_indices(array, indices),
                         value)

        if self.ctx.debug is None:
            access()
        else:
            self.ctx.debug.checked_access(self.ctx, s, s.array, array, indices, access, None)

    def _coop_store(self, s: ir.CoopStore) -> None:
        value = self.expr.lower(s.value)
        coop.store(self.ctx, s, tuple(self.expr.lower(i) for i in s.indices), value)

    def _assert(self, s: ir.Assert) -> None:
        # asserts exist only in debug mode (the frontend drops them otherwise)
        assert self.ctx.debug is not None, "an assert outside debug mode"
        self.ctx.debug.check_assert(self.ctx, s, self.expr.lower(s.cond))

    def _eval(self, s: ir.Eval) -> None:
        self.expr.lower(s.value)

    def _barrier(self, s: ir.Barrier) -> None:
        # every invocation of the workgroup waits; shared and buffer writes become visible
        workgroup = self.ctx.const(U32, Scope.Workgroup)
        semantics = (MemorySemantics.AcquireRelease | MemorySemantics.WorkgroupMemory
                     | MemorySemantics.UniformMemory)
        if self.ctx.module.vulkan_memory_model:
            semantics |= MemorySemantics.MakeAvailable | MemorySemantics.MakeVisible
        self.fn.control_barrier(workgroup, workgroup, self.ctx.const(U32, semantics))

    def _if(self, s: ir.If) -> None:
        cond = self.expr.lower(s.cond)
        orelse = (lambda: self.lower_block(s.orelse)) if s.orelse else None
        selection(self.fn, cond, lambda: self.lower_block(s.body), orelse)

    def _while(self, s: ir.While) -> None:
        # a guarded while loop leaves on a flag, which is one of the shapes in which lavapipe
        # loses pk.local stores
        with self._local_indices_hidden(lambda: True):
            while_loop(self.ctx, lambda: self.expr.lower(s.cond),
                       lambda loop: self._loop_body(loop, s.body), loopcap.WHILE)

    def _for_range(self, s: ir.ForRange) -> None:
        # Python: bounds evaluated once, in order; the loop counts its iterations on a hidden
        # counter k and assigns start + k * step to `var` at the top of each (wrapping
        # arithmetic gives the exact value, which is inside the type), so assigning to `var`
        # in the body changes nothing, and no value past the range is ever computed
        fn, ctx = self.fn, self.ctx
        ty = ctx.type_of(s.start.type)
        assert isinstance(ty, IntType), f"range over {s.start.type.name}"
        uty = unsigned(ty)
        start, stop, step = (self.expr.lower(e) for e in (s.start, s.stop, s.step))
        known_step = s.step.value if isinstance(s.step, ir.Const) else None
        counter, trips = self._trip_count(ty, start, stop, step, known_step)
        var = ctx.locals[s.var]

        def body(loop: Loop, k: int) -> None:
            if counter != uty:  # the narrow type's k: its low bits (the value wraps the same)
                k = fn.u_convert(uty, k)
            done = k if ty == uty else fn.bitcast(ty, k)
            if known_step == 1:
                value = arith.on_ints(ctx, B.ADD, ty, start, done)
            elif known_step == -1:
                value = arith.on_ints(ctx, B.SUB, ty, start, done)
            else:
                value = arith.on_ints(ctx, B.ADD, ty, start,
                                      arith.on_ints(ctx, B.MUL, ty, done, step))
            fn.store(var, value)
            self._loop_body(loop, s.body)

        def needs() -> bool:
            return _leaves_early(s.body) or _runs_a_flag_loop(
                s.body, {f.name: f for f in ctx.kernel.functions})

        with self._local_indices_hidden(needs):
            counted_loop(ctx, counter, trips, body, f"{s.var}.k", loopcap.FOR)

    def _trip_count(self, ty: IntType, start: int, stop: int, step: int,
                    known_step: int | None) -> tuple[IntType, int]:
        """(the counter's type, the number of iterations) of a range over `ty`. A range over
        8- or 16-bit integers is counted in 32 bits, its bounds widened (exactly, keeping their
        sign): NVIDIA's driver (580) ran counted loops of 16-bit counters with run-time bounds
        past their end, and every device counts in 32 bits at least anyway."""
        ctx = self.ctx
        if ty.bits < 32:
            start, stop, step = (narrow_int.widen(ctx, ty, v) for v in (start, stop, step))
            ty = IntType(32, ty.signed)
        return unsigned(ty), range_length(ctx, ty, start, stop, step, known_step)

    @contextmanager
    def _local_indices_hidden(self, needs: Callable[[], bool]) -> Iterator[None]:
        """Inside the loop emitted in this block, `pk.local` indices get the guard's hidden
        zero added (on a target with a loop guard, where `needs()`, asked last: it walks the
        loop's body): see `pykern.spirv.loopcap`. The zero is loaded here, before the loop,
        so that it dominates the whole loop."""
        ctx = self.ctx
        if (ctx.loops is None or ctx.hidden_zero is not None
                or not any(a.space is ir.MemorySpace.LOCAL for a in ctx.kernel.arrays)
                or not needs()):
            yield
            return
        ctx.hidden_zero = ctx.loops.zero(ctx)
        try:
            yield
        finally:
            ctx.hidden_zero = None

    def _loop_body(self, loop: Loop, body: Sequence[ir.Stmt]) -> None:
        self._loops.append(loop)
        self.lower_block(body)
        self._loops.pop()

    def _break(self, s: ir.Break) -> None:
        self._loops[-1].break_()

    def _continue(self, s: ir.Continue) -> None:
        self._loops[-1].continue_()

    def _return(self, s: ir.Return) -> None:
        if s.value is None:
            self.fn.return_()
        else:
            self.fn.return_value(self.expr.lower(s.value))


def _leaves_early(body: Sequence[ir.Stmt]) -> bool:
    """Whether a loop with this body has an exit besides its test: a `break` of its own or a
    `return` anywhere inside."""
    for stmt in body:
        if isinstance(stmt, (ir.Break, ir.Return)):
            return True
        if isinstance(stmt, ir.If) and (_leaves_early(stmt.body) or _leaves_early(stmt.orelse)):
            return True
        if isinstance(stmt, (ir.While, ir.ForRange)) and any(
                isinstance(node, ir.Return) for node in ir.walk(stmt)):
            return True
    return False


def _runs_a_flag_loop(body: Sequence[ir.Stmt], functions: dict[str, ir.Function]) -> bool:
    """Whether a loop with this body runs a loop that leaves on a flag (a guarded while loop)
    inside: a `while`, or an expression lowered to one (an integer `**`, a float `%` or `//`,
    a float atomic's compare-and-swap, a device function with any of these). lavapipe lost a
    `pk.local` store in the outer loop of such a pair too (a bubble pass over an array beside
    an integer `**`, found by random kernels)."""
    seen: set[str] = set()
    pending: list[ir.Node] = list(body)
    while pending:
        for node in ir.walk(pending.pop()):
            if isinstance(node, ir.While):
                return True
            if isinstance(node, ir.BinOp) and (
                    (node.op is ir.BinOpKind.POW and node.type.is_int)
                    or (node.op in (ir.BinOpKind.MOD, ir.BinOpKind.FLOORDIV)
                        and node.type.is_float)):
                return True
            if isinstance(node, ir.Atomic) and node.type.is_float:
                return True
            if isinstance(node, ir.Call) and node.function not in seen \
                    and node.function in functions:
                seen.add(node.function)
                pending.extend(functions[node.function].body)
    return False


_DISPATCH: dict[type, Callable[[StatementLowering, ir.Stmt], None]] = {
    ir.Assign: StatementLowering._assign,
    ir.Store: StatementLowering._store,
    ir.If: StatementLowering._if,
    ir.While: StatementLowering._while,
    ir.ForRange: StatementLowering._for_range,
    ir.Break: StatementLowering._break,
    ir.Continue: StatementLowering._continue,
    ir.Return: StatementLowering._return,
    ir.Eval: StatementLowering._eval,
    ir.Barrier: StatementLowering._barrier,
    ir.Assert: StatementLowering._assert,
    ir.CoopStore: StatementLowering._coop_store,
}
