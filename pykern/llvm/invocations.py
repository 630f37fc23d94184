"""The loops over a workgroup's invocations, emitted so that LLVM's loop vectoriser can turn
the innermost one into SIMD code.

A kernel without barriers runs each invocation to its end, x fastest, as nested counted loops
over local z, y and x. For a masked kernel the grid mask at the start of the body (`if
global_id(d) >= grid(d): return`) becomes the bounds of these loops instead, so the innermost
loop is a plain counted loop with no early exit, the shape the vectoriser wants. Locals are
stack slots that LLVM promotes to registers; each invocation starts them at zero, as the
interpreter does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir as ll

from pykern import ir
from pykern.llvm import stmts
from pykern.llvm.emitter import ArrayView, Emitter, Ids, ReturnTarget
from pykern.llvm.types import I8, I32, I64, PTR, memory_type, value_type


def counted_loop(em: Emitter, name: str, count: ll.Value,
                 body: Callable[[ll.Value, ll.Block], None], plain: bool = False) -> None:
    """`for i in range(count)` over i32 (a phi counter); `body(i, latch)` may branch to
    `latch` to end an iteration early. A `plain` loop is neither vectorised nor unrolled by
    LLVM: for loops whose iterations are already wide or branchy, where either would only
    multiply the code (and the compile time)."""
    bld = em.builder
    before = bld.block
    head, body_block, latch, done = (em.block(f"{name}_{part}")
                                     for part in ("head", "body", "latch", "done"))
    bld.branch(head)
    bld.position_at_end(head)
    i = bld.phi(I32, name=name)
    i.add_incoming(ll.Constant(I32, 0), before)
    bld.cbranch(bld.icmp_signed("<", i, count), body_block, done)
    bld.position_at_end(body_block)
    body(i, latch)
    em.branch_if_open(latch)
    bld.position_at_end(latch)
    following = bld.add(i, ll.Constant(I32, 1), name=f"{name}_next", flags=("nsw", "nuw"))
    i.add_incoming(following, latch)
    back = bld.branch(head)
    if plain:
        back.set_metadata("llvm.loop", _plain_loop(em))
    bld.position_at_end(done)


def _plain_loop(em: Emitter) -> ll.MDValue:
    """Loop metadata that turns LLVM's vectoriser and unroller off for one loop (its first
    operand itself, as loop metadata must be; a name of its own keeps it unique)."""
    m = em.module
    off = [m.add_metadata([ll.MetaDataString(m, hint), ll.Constant(ll.IntType(1), 0)])
           for hint in ("llvm.loop.vectorize.enable",)]
    off.append(m.add_metadata([ll.MetaDataString(m, "llvm.loop.unroll.disable")]))
    node = m.add_metadata([ll.MetaDataString(m, f"pykern.plain.{len(m.metadata)}"), *off])
    node.operands = (node, *off)
    return node


def grid_mask_dims(stmt: ir.Stmt) -> tuple[int, ...] | None:
    """The dimensions of `stmt` if it is the frontend's grid mask (`pykern.frontend`'s
    `grid_mask`), else None."""
    if not (isinstance(stmt, ir.If) and not stmt.orelse and len(stmt.body) == 1
            and isinstance(stmt.body[0], ir.Return)):
        return None
    dims: list[int] = []
    pending = [stmt.cond]
    while pending:
        e = pending.pop()
        if isinstance(e, ir.BinOp) and e.op is ir.BinOpKind.BIT_OR:
            pending += [e.lhs, e.rhs]
        elif (isinstance(e, ir.BinOp) and e.op is ir.BinOpKind.GE
              and isinstance(e.lhs, ir.Builtin) and e.lhs.kind is ir.BuiltinKind.GLOBAL_ID
              and isinstance(e.rhs, ir.Builtin) and e.rhs.kind is ir.BuiltinKind.GRID
              and e.lhs.dim == e.rhs.dim):
            dims.append(e.lhs.dim)
        else:
            return None
    return tuple(sorted(dims))


def zero_fill(em: Emitter, pointer: ll.Value, nbytes: int, value: int = 0) -> None:
    memset = em.intrinsic("llvm.memset.p0.i64", ll.VoidType(), (PTR, I8, I64, ll.IntType(1)))
    if pointer.type != PTR:  # llvmlite's allocas carry their element type
        pointer = em.builder.bitcast(pointer, PTR)
    em.builder.call(memset, (pointer, ll.Constant(I8, value), ll.Constant(I64, nbytes),
                             ll.Constant(ll.IntType(1), 0)))


def invocation_ids(em: Emitter, group: tuple[ll.Value, ...], local: tuple[ll.Value, ...],
                   grid: tuple[ll.Value, ...], num_groups: tuple[ll.Value, ...]) -> Ids:
    bld = em.builder
    wg = em.kernel.workgroup
    # no wrap: a launch's grid fits in i32 (so LLVM may widen the ids to i64 addresses)
    exact = ("nsw", "nuw")
    global_id = tuple(bld.add(bld.mul(group[d], em.i32(wg[d]), flags=exact), local[d],
                              flags=exact) for d in range(3))
    return Ids(global_id, local, group, grid, num_groups)  # type: ignore[arg-type]


class Invocations:
    """Every invocation of the workgroup `group`, one after the other, x fastest: their
    stack slots (made once), and the loops that run them (`run`, emitted once per copy of
    the workgroup's code: `pykern.llvm.robust`)."""

    def __init__(self, em: Emitter, group: tuple[ll.Value, ...], grid: tuple[ll.Value, ...],
                 num_groups: tuple[ll.Value, ...]) -> None:
        self.em, self.group, self.grid, self.num_groups = em, group, grid, num_groups
        kernel = em.kernel
        self.body = kernel.body
        dims = grid_mask_dims(self.body[0]) if kernel.masked and self.body else None
        self.bounds = [em.i32(w) for w in kernel.workgroup]
        if dims is not None:
            self.body = self.body[1:]
            bld = em.builder
            for d in dims:  # the invocations left in this workgroup before the grid ends
                left = bld.sub(grid[d], bld.mul(group[d], em.i32(kernel.workgroup[d])))
                self.bounds[d] = bld.select(bld.icmp_signed("<", left, self.bounds[d]), left,
                                            self.bounds[d])
        self.slots = {local.name: em.local_slot(local.type, local.name)
                      for local in kernel.locals}
        self.privates = {a.name: em.alloca(memory_type(a.dtype), a.name,
                                           count=max(1, math.prod(a.shape)))
                         for a in kernel.arrays if a.space is ir.MemorySpace.LOCAL}

    def run(self) -> None:
        em, kernel, bounds = self.em, self.em.kernel, self.bounds

        def invocation(local: tuple[ll.Value, ...], latch: ll.Block) -> None:
            em.ids = invocation_ids(em, self.group, local, self.grid, self.num_groups)
            em.locals = dict(self.slots)
            for local_var in kernel.locals:
                t = value_type(local_var.type)
                em.builder.store(ll.Constant(t, None), self.slots[local_var.name])
            for decl in kernel.arrays:
                if decl.space is ir.MemorySpace.LOCAL:
                    zero_fill(em, self.privates[decl.name], decl.nbytes)
                    em.arrays[decl.name] = constant_view(em, decl, self.privates[decl.name])
            em.returns = [ReturnTarget(latch)]
            stmts.block(em, self.body)

        counted_loop(em, "lz", bounds[2], lambda z, _: counted_loop(
            em, "ly", bounds[1], lambda y, _: counted_loop(
                em, "lx", bounds[0], lambda x, latch: invocation((x, y, z), latch))))


def constant_view(em: Emitter, decl: ir.ArrayDecl, pointer: ll.Value) -> ArrayView:
    """The view of a declared (shared or local) array: row-major, constant shape."""
    strides, step = [], 1
    for s in reversed(decl.shape):
        strides.append(step)
        step *= s
    return ArrayView(decl.dtype, pointer, ll.Constant(I64, 0),
                     tuple(em.i32(s) for s in decl.shape),
                     tuple(ll.Constant(I64, s) for s in reversed(strides)),
                     ll.Constant(I64, math.prod(decl.shape)))
