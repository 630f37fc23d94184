"""One kernel as an LLVM module: the entry `void pk_entry(ptr args, i64 first, i64 end)` runs
workgroups `first` to `end - 1` (linear, x fastest) of a launch whose arguments are in the
block `args` (`pykern.llvm.layout`); a thread pool hands ranges of workgroups to its threads
(`pykern.llvm.pool`).

Per workgroup: the launch's stop word is polled (`pykern.llvm.stopping`), `pk.shared` arrays
start at zero, the workgroup's proof that its accesses stay inside their arrays is evaluated
(`pykern.llvm.robust`), then its invocations run, in the copy of the body that the proof
picks (`pykern.llvm.invocations`, or `pykern.llvm.regions` for kernels with barriers or
subgroup exchanges). A kernel in debug mode also reads its report's address and checks its
accesses (`pykern.llvm.debug`) instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir as ll

from pykern import ir
from pykern.lang.dtypes import ArrayType
from pykern.llvm import proofs, stopping
from pykern.llvm.bound_analysis import Proofs, prove_accesses
from pykern.llvm.debug import DebugChecks, DebugSite
from pykern.llvm.emitter import ArrayView, Emitter
from pykern.llvm.invocations import Invocations, constant_view, zero_fill
from pykern.llvm.layout import ARRAY_HEAD, LENGTH, OFFSET, POINTER, arg_layout
from pykern.llvm.regions import Workgroup, synchronises
from pykern.llvm.types import I32, I64, PTR, memory_type

ENTRY = "pk_entry"


def build_module(kernel: ir.Kernel) -> tuple[ll.Module, tuple[DebugSite, ...]]:
    """The module of `kernel`, and in debug mode the sites its report can name (`()`
    otherwise)."""
    module = ll.Module(name=kernel.name)
    fn = ll.Function(module, ll.FunctionType(ll.VoidType(), (PTR, I64, I64)), name=ENTRY)
    args, first, end = fn.args
    fn.append_basic_block("entry")  # the stack slots (`Emitter.alloca`)
    em = Emitter(kernel, module, fn, ll.IRBuilder(fn.append_basic_block("start")))
    grid, num_groups = _read_arguments(em, args)
    found = prove_accesses(kernel) if em.debug is None else Proofs()
    inside = proofs.launch_facts(em, found)
    shared = {d.name: em.alloca(memory_type(d.dtype), d.name, count=max(1, math.prod(d.shape)))
              for d in kernel.arrays if d.space is ir.MemorySpace.SHARED}
    for decl in kernel.arrays:
        if decl.name in shared:
            em.arrays[decl.name] = constant_view(em, decl, shared[decl.name])
    synchronised = any(synchronises(s) for s in kernel.body)
    bld = em.builder
    before = bld.block
    head, body, done = em.block("group_head"), em.block("group_body"), em.block("done")
    bld.branch(head)
    bld.position_at_end(head)
    g = bld.phi(I64, name="group")
    g.add_incoming(first, before)
    bld.cbranch(bld.icmp_signed("<", g, end), body, done)
    bld.position_at_end(body)
    stopping.poll(em)
    group = _group_ids(em, g, num_groups)
    for decl in kernel.arrays:
        if decl.name in shared:
            zero_fill(em, shared[decl.name], decl.nbytes)
    if synchronised:
        workgroup = Workgroup(em, group, grid, num_groups)
        _versioned(em, found, inside, (group, grid, num_groups),
                   lambda: workgroup.run(kernel.body))
    else:
        invocations = Invocations(em, group, grid, num_groups)
        _versioned(em, found, inside, (group, grid, num_groups), invocations.run)
    g_next = bld.add(g, ll.Constant(I64, 1))
    g.add_incoming(g_next, bld.block)
    bld.branch(head)
    bld.position_at_end(done)
    bld.ret_void()
    em.finish()
    return module, tuple(em.debug.sites) if em.debug is not None else ()


def _versioned(em: Emitter, found: Proofs, inside: dict[str, ll.Value],
               ids: tuple[tuple, tuple, tuple], emit: Callable[[], None]) -> None:
    """`emit()`, the workgroup's code, twice where some accesses were proved inside their
    arrays: a copy without their checks, run where the proof holds for this workgroup, and
    one with every check (`pykern.llvm.robust`)."""
    if not found.sites:
        emit()
        return
    bld = em.builder
    holds = proofs.workgroup_holds(em, found, inside, *ids)
    fast, slow, done = em.block("proved"), em.block("checked_all"), em.block("workgroup_done")
    bld.cbranch(holds, fast, slow)
    for block, proven in ((fast, frozenset(found.sites)), (slow, frozenset())):
        bld.position_at_end(block)
        em.proven = proven
        emit()
        em.branch_if_open(done)
    em.proven = frozenset()
    bld.position_at_end(done)


def _slot(em: Emitter, args: ll.Value, index: int, t: ll.Type) -> ll.Value:
    pointer = em.builder.gep(args, [ll.Constant(I64, index)], source_etype=I64)
    return em.builder.load(pointer, typ=t)


def _read_arguments(em: Emitter, args: ll.Value) -> tuple[tuple, tuple]:
    """Every parameter's values from the argument block; (grid, num_groups)."""
    layout = arg_layout(em.kernel)
    bld = em.builder
    for p in em.kernel.params:
        at = layout.first_slot[p.name]
        if isinstance(p.type, ArrayType):
            n = p.type.ndim
            shape_at = at + ARRAY_HEAD
            em.arrays[p.name] = ArrayView(
                p.type.dtype, _slot(em, args, at + POINTER, PTR),
                _slot(em, args, at + OFFSET, I64),
                tuple(_slot(em, args, shape_at + k, I32) for k in range(n)),
                tuple(_slot(em, args, shape_at + n + k, I64) for k in range(n)),
                _slot(em, args, at + LENGTH, I64))
        else:
            value = _slot(em, args, at, memory_type(p.type))
            if value.type != ll.IntType(1) and p.type.kind == "b":
                value = bld.icmp_unsigned("!=", value, ll.Constant(value.type, 0))
            em.scalars[p.name] = value
    if layout.report_slot is not None:
        em.debug = DebugChecks(_slot(em, args, layout.report_slot, PTR))
    stopping.start(em, _slot(em, args, layout.stop_slot, PTR))
    grid = tuple(_slot(em, args, layout.grid_slot + d, I32) for d in range(3))
    num_groups = tuple(_slot(em, args, layout.grid_slot + 3 + d, I32) for d in range(3))
    return grid, num_groups


def _group_ids(em: Emitter, g: ll.Value, num_groups: tuple) -> tuple[ll.Value, ...]:
    """The workgroup id of linear workgroup `g` (x fastest), i32 per dimension."""
    bld = em.builder
    nx, ny = (bld.zext(n, I64) for n in num_groups[:2])
    x = bld.urem(g, nx)
    y = bld.urem(bld.udiv(g, nx), ny)
    z = bld.udiv(g, bld.mul(nx, ny))
    return tuple(bld.trunc(v, I32) for v in (x, y, z))
