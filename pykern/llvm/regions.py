"""Kernels with `pk.barrier()` or subgroup exchanges: the work-item-loop technique of CPU
OpenCL implementations.

The body is cut into regions at its barriers and exchanges (`pykern.llvm.hoist` made each
exchange a statement). Each region runs as one loop over the workgroup's invocations (x
fastest), so every invocation finishes a region before any starts the next: exactly what a
barrier promises, and what an exchange needs (all operands stored before it runs,
`pykern.llvm.subgroups`). Control flow that contains a barrier (`if`, `for`, `while` around
one) runs once per workgroup; its condition or bounds are evaluated by every live invocation
in a loop of their own, and the last one's value decides (the language requires them uniform,
as Vulkan does). Control flow that contains exchanges but no barrier may diverge: it runs with
a mask per invocation (`pykern.llvm.divergence`), and a region or exchange inside it takes
only the invocations that every enclosing mask lets through.

Every kernel local and `pk.local` array lives in a per-invocation array for the workgroup,
so values survive from one region to the next. An invocation that returns is marked finished
and skips every later region, as a GPU invocation that exits no longer takes part in barriers.
Until one has (or where none lies past the grid: a subgroup kernel's grid mask is done before
its first region), a region outside divergent code runs in a loop that asks no invocation
whether it is alive, which LLVM vectorises; the loop that asks is kept plain (not vectorised).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir as ll

from pykern import ir
from pykern.llvm import divergence, exprs, stmts, stopping, subgroups
from pykern.llvm.emitter import Emitter, Loop, ReturnTarget
from pykern.llvm.hoist import contains_exchange, exchange_of, is_exchange
from pykern.llvm.lanes import SUBGROUP_SIZE
from pykern.llvm.invocations import (constant_view, counted_loop, grid_mask_dims,
                                      invocation_ids, zero_fill)
from pykern.llvm.types import I1, I8, I32, memory_type, value_type


def contains_barrier(node: ir.Node) -> bool:
    return any(isinstance(n, ir.Barrier) for n in ir.walk(node))


def synchronises(node: ir.Node) -> bool:
    """Whether `node` holds a barrier or a subgroup exchange (it needs `Workgroup`)."""
    return any(isinstance(n, ir.Barrier) or is_exchange(n) for n in ir.walk(node))


class Workgroup:
    """The per-invocation storage of one workgroup and the emission of its regions."""

    def __init__(self, em: Emitter, group: tuple[ll.Value, ...], grid: tuple[ll.Value, ...],
                 num_groups: tuple[ll.Value, ...]) -> None:
        self.em, self.group, self.grid, self.num_groups = em, group, grid, num_groups
        kernel = em.kernel
        wx, wy, wz = kernel.workgroup
        self.size = wx * wy * wz
        # per-invocation slots for whole subgroups: a partial last one's missing lanes exist
        # (never alive), so an exchange reads 8 lanes of every subgroup
        self.padded = -(-self.size // SUBGROUP_SIZE) * SUBGROUP_SIZE
        self.alive = em.alloca(I8, "alive", count=self.padded)
        zero_fill(em, self.alive, self.padded)
        zero_fill(em, self.alive, self.size, value=1)
        # no invocation has returned (or is past the grid): regions need not ask each one
        self.everyone = em.alloca(I1, "everyone_alive")
        em.builder.store(ll.Constant(I1, 1), self.everyone)
        self.storage: dict[str, ll.Value] = {}
        self.types = {local.name: local.type for local in kernel.locals}
        for local in kernel.locals:
            t = value_type(local.type)
            self.storage[local.name] = slot = em.alloca(t, local.name, count=self.padded)
            zero_fill(em, slot, self.padded * local.type.itemsize)
        self.privates: dict[str, tuple[ir.ArrayDecl, ll.Value, int]] = {}
        for decl in kernel.arrays:
            if decl.space is ir.MemorySpace.LOCAL:
                count = max(1, math.prod(decl.shape))
                pointer = em.alloca(memory_type(decl.dtype), decl.name, count=count * self.size)
                zero_fill(em, pointer, count * self.size * decl.dtype.itemsize)
                self.privates[decl.name] = (decl, pointer, count)
        # the masks (one i8 per invocation) of the divergent control flow being emitted,
        # outermost first, and of the innermost divergent loop: (its own, its iteration's),
        # which `break` and `continue` clear
        self.masks: list[ll.Value] = []
        self.loop_masks: list[tuple[ll.Value, ll.Value]] = []
        self.current: ll.Value = ll.Constant(I32, 0)  # the invocation being emitted

    # ------------------------------------------------------------ regions

    def run(self, body: tuple[ir.Stmt, ...]) -> None:
        """The kernel's body; its grid mask, where it has one, done before the first region
        (the invocations past the grid are not alive), so that a workgroup inside the grid
        runs its regions without asking each invocation."""
        dims = grid_mask_dims(body[0]) if self.em.kernel.masked and body else None
        if dims is not None:
            body = body[1:]
            self.mask_grid(dims)
        self.block(body)

    def mask_grid(self, dims: tuple[int, ...]) -> None:
        """Marks the invocations past the grid in `dims` not alive (and not everyone alive)."""
        em = self.em
        bld = em.builder
        wg = em.kernel.workgroup
        left = {d: bld.sub(self.grid[d], bld.mul(self.group[d], em.i32(wg[d]))) for d in dims}
        inside = ll.Constant(I1, 1)
        for d in dims:
            inside = bld.and_(inside, bld.icmp_signed(">=", left[d], em.i32(wg[d])))
        bld.store(inside, self.everyone)
        partial, done = em.block("partial_group"), em.block("partial_group_done")
        bld.cbranch(inside, done, partial)
        bld.position_at_end(partial)

        def mark(linear: ll.Value, _: ll.Block) -> None:
            local = (bld.urem(linear, em.i32(wg[0])),
                     bld.urem(bld.udiv(linear, em.i32(wg[0])), em.i32(wg[1])),
                     bld.udiv(linear, em.i32(wg[0] * wg[1])))
            within = ll.Constant(I1, 1)
            for d in dims:
                within = bld.and_(within, bld.icmp_signed("<", local[d], left[d]))
            bld.store(bld.zext(within, I8), bld.gep(self.alive, [linear], source_etype=I8))

        counted_loop(em, "grid_mask", em.i32(self.size), mark)
        bld.branch(done)
        bld.position_at_end(done)

    def block(self, body: tuple[ir.Stmt, ...]) -> None:
        run: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.Barrier) or contains_barrier(s):
                self.region(tuple(run))
                run = []
                if not isinstance(s, ir.Barrier):
                    self.uniform(s)
            elif contains_exchange(s):
                self.region(tuple(run))
                run = []
                if exchange_of(s) is not None:
                    self.exchange(s)
                else:
                    divergence.masked(self, s)
            else:
                run.append(s)
        self.region(tuple(run))

    def exchange(self, s: ir.Stmt) -> None:
        sg = exchange_of(s)
        assert sg is not None and isinstance(s, ir.Assign)
        subgroups.exchange(self.em, sg, s.name, self.padded // SUBGROUP_SIZE, self.active,
                           self.slot)

    def slot(self, name: str, linear: ll.Value) -> ll.Value:
        """The pointer to kernel local `name` of invocation `linear`."""
        t = value_type(self.types[name])
        return self.em.builder.gep(self.storage[name], [linear], source_etype=t)

    def active(self, linear: ll.Value) -> ll.Value:
        """i1: invocation `linear` has not returned and every enclosing mask lets it through."""
        bld = self.em.builder
        live = bld.icmp_unsigned("!=", self.flag(self.alive, linear), ll.Constant(I8, 0))
        for mask in self.masks:
            live = bld.and_(live, bld.icmp_unsigned("!=", self.flag(mask, linear),
                                                    ll.Constant(I8, 0)))
        return live

    def flag(self, flags: ll.Value, linear: ll.Value) -> ll.Value:
        bld = self.em.builder
        return bld.load(bld.gep(flags, [linear], source_etype=I8), typ=I8)

    def set_flag(self, flags: ll.Value, value: ll.Value) -> None:
        """Stores i1 `value` as the current invocation's flag in `flags`."""
        bld = self.em.builder
        bld.store(bld.zext(value, I8), bld.gep(flags, [self.current], source_etype=I8))

    def new_mask(self, name: str) -> ll.Value:
        """An i8 per invocation (of whole subgroups), zero."""
        mask = self.em.alloca(I8, name, count=self.padded)
        zero_fill(self.em, mask, self.padded)
        return mask

    def any_active(self) -> ll.Value:
        """i1: some invocation is active under the current masks."""
        em = self.em
        found = em.alloca(I1, "any_active")
        em.builder.store(ll.Constant(I1, 0), found)
        self.each_invocation(lambda: em.builder.store(ll.Constant(I1, 1), found))
        return em.builder.load(found, typ=I1)

    def region(self, body: tuple[ir.Stmt, ...]) -> None:
        if body:
            self.each_invocation(lambda: stmts.block(self.em, body))

    def each_invocation(self, emit: Callable[[], None]) -> None:
        """`emit()`'s code run by every live invocation, one after the other: outside
        divergent code, while no invocation has returned, in a loop that asks none whether it
        is alive (which LLVM can vectorise), else in one that does."""
        em = self.em
        if self.masks:
            self.invocation_loop(emit, checked=True)
            return
        bld = em.builder
        unchecked, checked, done = em.block("all_alive"), em.block("some_alive"), \
            em.block("alive_done")
        bld.cbranch(bld.load(self.everyone, typ=I1), unchecked, checked)
        for block, ask in ((unchecked, False), (checked, True)):
            bld.position_at_end(block)
            self.invocation_loop(emit, checked=ask)
            bld.branch(done)
        bld.position_at_end(done)

    def invocation_loop(self, emit: Callable[[], None], checked: bool) -> None:
        em = self.em
        wx, wy, _ = em.kernel.workgroup

        def invocation(linear: ll.Value, latch: ll.Block) -> None:
            bld = em.builder
            alive_at = bld.gep(self.alive, [linear], source_etype=I8)
            if checked:
                live = em.block("live")
                bld.cbranch(self.active(linear), live, latch)
                bld.position_at_end(live)
            self.current = linear
            x = bld.urem(linear, em.i32(wx))
            y = bld.urem(bld.udiv(linear, em.i32(wx)), em.i32(wy))
            z = bld.udiv(linear, em.i32(wx * wy))
            em.ids = invocation_ids(em, self.group, (x, y, z), self.grid, self.num_groups)
            em.locals = {local.name: bld.gep(self.storage[local.name], [linear],
                                             source_etype=value_type(local.type))
                         for local in em.kernel.locals}
            for name, (decl, pointer, count) in self.privates.items():
                start = bld.mul(linear, ll.Constant(I32, count))
                em.arrays[name] = constant_view(
                    em, decl, bld.gep(pointer, [start], source_etype=memory_type(decl.dtype)))

            def finished(em: Emitter) -> None:
                em.builder.store(ll.Constant(I8, 0), alive_at)
                em.builder.store(ll.Constant(I1, 0), self.everyone)

            em.returns = [ReturnTarget(latch, on_return=finished)]
            saved_loops, em.loops = em.loops, self.loop_exits(latch)
            emit()
            em.loops = saved_loops

        counted_loop(em, "invocation", em.i32(self.size), invocation, plain=checked)

    def loop_exits(self, latch: ll.Block) -> list[Loop]:
        """Where `break` and `continue` of the innermost divergent loop go in the current
        invocation's code: they clear its mask of the loop (or of this iteration), then the
        invocation is done with the region."""
        if not self.loop_masks:
            return []
        targets = []
        for mask, name in zip(self.loop_masks[-1], ("break", "continue"), strict=True):
            block = self.em.block(f"divergent_{name}")
            bld = ll.IRBuilder(block)
            bld.store(ll.Constant(I8, 0), bld.gep(mask, [self.current], source_etype=I8))
            bld.branch(latch)
            targets.append(block)
        return [Loop(targets[0], targets[1])]

    def uniform_values(self, values: tuple[ir.Expr, ...]) -> list[ll.Value]:
        """`values` as every live invocation computes them; the last one's."""
        em = self.em
        slots = [em.alloca(value_type(v.type), "uniform") for v in values]
        for slot, v in zip(slots, values, strict=True):
            em.builder.store(ll.Constant(value_type(v.type), None), slot)

        def emit() -> None:
            for slot, v in zip(slots, values, strict=True):
                em.builder.store(exprs.expr(em, v), slot)

        self.each_invocation(emit)
        return [em.builder.load(slot, typ=value_type(v.type)) for slot, v in zip(slots, values)]

    # ------------------------------------------------------------ control flow around barriers

    def uniform(self, s: ir.Stmt) -> None:
        em = self.em
        bld = em.builder
        if isinstance(s, ir.If):
            (cond,) = self.uniform_values((s.cond,))
            then_block, else_block, done = em.block("u_then"), em.block("u_else"), \
                em.block("u_done")
            bld.cbranch(cond, then_block, else_block)
            for block, body in ((then_block, s.body), (else_block, s.orelse)):
                bld.position_at_end(block)
                self.block(body)
                em.branch_if_open(done)
            bld.position_at_end(done)
        elif isinstance(s, ir.ForRange):
            start, stop, step = self.uniform_values((s.start, s.stop, s.step))

            def body(counter: ll.Value) -> None:
                self.each_invocation(lambda: em.builder.store(counter, em.locals[s.var]))
                self.block(s.body)

            stmts.range_loop(em, s.start.type, start, stop, step, body,
                             stopping.EVERY_ITERATION)
        elif isinstance(s, ir.While):
            head, body_block, done = em.block("u_while"), em.block("u_body"), em.block("u_end")
            bld.branch(head)
            bld.position_at_end(head)
            stopping.poll(em)
            (cond,) = self.uniform_values((s.cond,))
            bld.cbranch(cond, body_block, done)
            bld.position_at_end(body_block)
            self.block(s.body)
            em.branch_if_open(head)
            bld.position_at_end(done)
        else:
            raise AssertionError(f"a barrier inside {type(s).__name__} at {s.loc}")
