"""Kernels with `pk.barrier()`: the work-item-loop technique of CPU OpenCL implementations.

The body is cut into regions at its barriers. Each barrier-free region runs as one loop over
the workgroup's invocations (x fastest), so every invocation finishes a region before any
starts the next: exactly what a barrier promises. Control flow that contains a barrier (`if`,
`for`, `while` around one) runs once per workgroup; its condition or bounds are evaluated by
every live invocation in a loop of their own, and the last one's value decides (the language
requires them uniform, as Vulkan does).

Every kernel local and `pk.local` array lives in a per-invocation array for the workgroup,
so values survive from one region to the next. An invocation that returns is marked finished
and skips every later region, as a GPU invocation that exits no longer takes part in barriers.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir as ll

from pykern import ir
from pykern.llvm import exprs, stmts
from pykern.llvm.emitter import Emitter, ReturnTarget
from pykern.llvm.invocations import constant_view, counted_loop, invocation_ids, zero_fill
from pykern.llvm.types import I8, I32, memory_type, value_type


def contains_barrier(node: ir.Node) -> bool:
    return any(isinstance(n, ir.Barrier) for n in ir.walk(node))


class Workgroup:
    """The per-invocation storage of one workgroup and the emission of its regions."""

    def __init__(self, em: Emitter, group: tuple[ll.Value, ...], grid: tuple[ll.Value, ...],
                 num_groups: tuple[ll.Value, ...]) -> None:
        self.em, self.group, self.grid, self.num_groups = em, group, grid, num_groups
        kernel = em.kernel
        wx, wy, wz = kernel.workgroup
        self.size = wx * wy * wz
        self.alive = em.alloca(I8, "alive", count=self.size)
        zero_fill(em, self.alive, self.size, value=1)
        self.storage: dict[str, ll.Value] = {}
        for local in kernel.locals:
            t = value_type(local.type)
            self.storage[local.name] = slot = em.alloca(t, local.name, count=self.size)
            zero_fill(em, slot, self.size * local.type.itemsize)
        self.privates: dict[str, tuple[ir.ArrayDecl, ll.Value, int]] = {}
        for decl in kernel.arrays:
            if decl.space is ir.MemorySpace.LOCAL:
                count = max(1, math.prod(decl.shape))
                pointer = em.alloca(memory_type(decl.dtype), decl.name, count=count * self.size)
                zero_fill(em, pointer, count * self.size * decl.dtype.itemsize)
                self.privates[decl.name] = (decl, pointer, count)

    # ------------------------------------------------------------ regions

    def block(self, body: tuple[ir.Stmt, ...]) -> None:
        run: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.Barrier) or contains_barrier(s):
                self.region(tuple(run))
                run = []
                if not isinstance(s, ir.Barrier):
                    self.uniform(s)
            else:
                run.append(s)
        self.region(tuple(run))

    def region(self, body: tuple[ir.Stmt, ...]) -> None:
        if body:
            self.each_invocation(lambda: stmts.block(self.em, body))

    def each_invocation(self, emit: Callable[[], None]) -> None:
        """`emit()`'s code run by every live invocation, one after the other."""
        em = self.em
        wx, wy, _ = em.kernel.workgroup

        def invocation(linear: ll.Value, latch: ll.Block) -> None:
            bld = em.builder
            alive_at = bld.gep(self.alive, [linear], source_etype=I8)
            live = em.block("live")
            bld.cbranch(bld.icmp_unsigned("!=", bld.load(alive_at, typ=I8), ll.Constant(I8, 0)),
                        live, latch)
            bld.position_at_end(live)
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

            em.returns = [ReturnTarget(latch, on_return=finished)]
            saved_loops, em.loops = em.loops, []
            emit()
            em.loops = saved_loops

        counted_loop(em, "invocation", em.i32(self.size), invocation)

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

            stmts.range_loop(em, s.start.type, start, stop, step, body)
        elif isinstance(s, ir.While):
            head, body_block, done = em.block("u_while"), em.block("u_body"), em.block("u_end")
            bld.branch(head)
            bld.position_at_end(head)
            (cond,) = self.uniform_values((s.cond,))
            bld.cbranch(cond, body_block, done)
            bld.position_at_end(body_block)
            self.block(s.body)
            em.branch_if_open(head)
            bld.position_at_end(done)
        else:
            raise AssertionError(f"a barrier inside {type(s).__name__} at {s.loc}")
