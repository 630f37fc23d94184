"""One kernel as an LLVM module: the entry `i64 pk_entry(ptr args, i64 first, i64 end)` runs
workgroups `first` to `end - 1` (linear, x fastest) of a launch whose arguments are in the
block `args` (`pykern.llvm.layout`); a thread pool hands ranges of workgroups to its threads
(`pykern.llvm.pool`). It returns the first workgroup it did not run: `end`, or where it
bailed out (below).

Per workgroup: the launch's stop word is polled (`pykern.llvm.stopping`), `pk.shared` arrays
start at zero, the workgroup's proof that its accesses stay inside their arrays is evaluated
(`pykern.llvm.robust`), then its invocations run, in the copy of the body that the proof
picks (`pykern.llvm.invocations`, or `pykern.llvm.regions` for kernels with barriers or
subgroup exchanges). A kernel in debug mode also reads its report's address and checks its
accesses (`pykern.llvm.debug`) instead.

The copy that checks every access runs only where a proof fails, which a kernel that stays
inside its arrays may never meet; compiling it doubles the compile time. So a kernel is
first built without it (`checked_copy=False`), proving each launch as a whole: where that
fails, the entry returns the index of its first workgroup before it ran anything of it, and
the launcher runs the range through the module built with both copies, compiled then
(`HostKernel.checked_entry`), which proves each workgroup on its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

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
from pykern.llvm.robust import view_inside_buffer
from pykern.llvm.types import I8, I32, I64, PTR, memory_type

ENTRY = "pk_entry"


@dataclass(frozen=True)
class BuiltModule:
    """A kernel's module; in debug mode the sites its report can name (`()` otherwise);
    whether its entry may bail out of a workgroup whose proof fails (`checked_copy=False`
    where some access was proved)."""

    module: ll.Module
    sites: tuple[DebugSite, ...]
    bails: bool


def build_module(kernel: ir.Kernel, checked_copy: bool = True) -> BuiltModule:
    """The module of `kernel`: with the copy of the body that checks every access, or where
    `checked_copy` is False without it (the entry bails out where it would run)."""
    module = ll.Module(name=kernel.name)
    fn = ll.Function(module, ll.FunctionType(I64, (PTR, I64, I64)), name=ENTRY)
    args, first, end = fn.args
    fn.append_basic_block("entry")  # the stack slots (`Emitter.alloca`)
    em = Emitter(kernel, module, fn, ll.IRBuilder(fn.append_basic_block("start")))
    grid, num_groups = _read_arguments(em, args, end)
    found = prove_accesses(kernel) if em.debug is None else Proofs()
    checks = proofs.plan(proofs.conditions(found))
    launch_holds, flags = _launch_holds(em, args, found, checks)
    # without the checked copy, a launch is proved as a whole or not at all: each condition
    # that names the workgroup must hold by its hoisted part (`grid(0) <= n` rather than
    # `group * 256 + 255 < n`); else the entry bails out at once and the module with both
    # copies (which checks them per workgroup) runs the launch. A check that varies from
    # workgroup to workgroup nearly doubles what LLVM makes of a small kernel.
    bail = not checked_copy and bool(found.sites) and all(f is not None for f in flags)
    shared = {d.name: em.alloca(memory_type(d.dtype), d.name, count=max(1, math.prod(d.shape)))
              for d in kernel.arrays if d.space is ir.MemorySpace.SHARED}
    for decl in kernel.arrays:
        if decl.name in shared:
            em.arrays[decl.name] = constant_view(em, decl, shared[decl.name])
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
    if not found.sites:
        holds = None
    elif bail:
        holds = launch_holds
        for flag in flags:
            holds = bld.and_(holds, flag)
    else:  # the workgroup's proof: the launch's part, and the conditions naming the workgroup
        holds = proofs.all_hold(em, checks.workgroup, launch_holds, group, grid, num_groups,
                                flags)
    _versioned(em, holds, frozenset(found.sites), _workgroup_code(em, group, grid, num_groups),
               g if bail else None)
    g.add_incoming(bld.add(g, ll.Constant(I64, 1)), bld.block)
    bld.branch(head)
    bld.position_at_end(done)
    bld.ret(end)
    em.finish()
    sites = tuple(em.debug.sites) if em.debug is not None else ()
    return BuiltModule(module, sites, bails=bail)


def _workgroup_code(em: Emitter, group: tuple, grid: tuple,
                    num_groups: tuple) -> Callable[[], None]:
    """What emits the invocations of workgroup `group` (its stack slots made already)."""
    kernel = em.kernel
    if any(synchronises(s) for s in kernel.body):
        workgroup = Workgroup(em, group, grid, num_groups)
        return lambda: workgroup.run(kernel.body)
    return Invocations(em, group, grid, num_groups).run


def _versioned(em: Emitter, holds: ll.Value | None, proven: frozenset,
               emit: Callable[[], None], bail: ll.Value | None) -> None:
    """`emit()`, the workgroup's code, twice where some accesses were proved inside their
    arrays (`holds`: the workgroup's proof holds): a copy without the checks of the `proven`
    accesses, and one with every check (`pykern.llvm.robust`); where `bail` (the workgroup's
    index) is given, the entry returns it instead of running the second copy."""
    if holds is None:
        emit()
        return
    bld = em.builder
    fast, slow, done = em.block("proved"), em.block("checked_all"), em.block("workgroup_done")
    branch = bld.cbranch(holds, fast, slow)
    branch.set_weights([1 << 10, 1])
    bld.position_at_end(fast)
    em.proven = proven
    emit()
    em.proven = frozenset()
    em.branch_if_open(done)
    bld.position_at_end(slow)
    if bail is not None:
        bld.ret(bail)
    else:
        emit()
        em.branch_if_open(done)
    bld.position_at_end(done)


def _slot(em: Emitter, args: ll.Value, index: int, t: ll.Type) -> ll.Value:
    pointer = em.builder.gep(args, [ll.Constant(I64, index)], source_etype=I64)
    return em.builder.load(pointer, typ=t)


def _read_arguments(em: Emitter, args: ll.Value, end: ll.Value) -> tuple[tuple, tuple]:
    """Every parameter's values from the argument block, the stop word's address and in
    debug mode the report's; (grid, num_groups)."""
    layout = arg_layout(em.kernel)
    grid, num_groups = _read_values(em, args)
    if layout.report_slot is not None:
        em.debug = DebugChecks(_slot(em, args, layout.report_slot, PTR))
    stopping.start(em, _slot(em, args, layout.stop_slot, PTR), end)
    return grid, num_groups


def _read_values(em: Emitter, args: ll.Value) -> tuple[tuple, tuple]:
    """Every parameter's values from the argument block (into `em`); (grid, num_groups)."""
    layout = arg_layout(em.kernel)
    bld = em.builder
    for p in em.kernel.params:
        at = layout.first_slot[p.name]
        if isinstance(p.type, ArrayType):
            em.arrays[p.name] = _array_view(em, args, p.type, at)
        else:
            value = _slot(em, args, at, memory_type(p.type))
            if value.type != ll.IntType(1) and p.type.kind == "b":
                value = bld.icmp_unsigned("!=", value, ll.Constant(value.type, 0))
            em.scalars[p.name] = value
    grid = tuple(_slot(em, args, layout.grid_slot + d, I32) for d in range(3))
    num_groups = tuple(_slot(em, args, layout.grid_slot + 3 + d, I32) for d in range(3))
    return grid, num_groups


class _Lazily(dict):
    """Values of the argument block read where first asked for (a helper that needs few of
    them emits no more)."""

    def __init__(self, read: Callable[[str], ll.Value]) -> None:
        super().__init__()
        self.read = read

    def __missing__(self, name: str) -> ll.Value:
        value = self[name] = self.read(name)
        return value


def _read_lazily(em: Emitter, args: ll.Value) -> tuple[tuple, tuple]:
    """`_read_values`, each parameter read where it is first used; (grid, num_groups)."""
    layout = arg_layout(em.kernel)
    params = {p.name: p for p in em.kernel.params}

    def scalar(name: str) -> ll.Value:
        p = params[name]
        return _slot(em, args, layout.first_slot[name], memory_type(p.type))  # type: ignore

    em.scalars = _Lazily(scalar)
    em.arrays = _Lazily(lambda name: _array_view(  # type: ignore[assignment]
        em, args, params[name].type, layout.first_slot[name]))  # type: ignore[arg-type]
    grid = tuple(_slot(em, args, layout.grid_slot + d, I32) for d in range(3))
    num_groups = tuple(_slot(em, args, layout.grid_slot + 3 + d, I32) for d in range(3))
    return grid, num_groups


def _array_view(em: Emitter, args: ll.Value, t: ArrayType, at: int) -> ArrayView:
    """The view of the array whose slots start at `at` (`pykern.llvm.layout`)."""
    n, shape_at = t.ndim, at + ARRAY_HEAD
    return ArrayView(t.dtype, _slot(em, args, at + POINTER, PTR),
                     _slot(em, args, at + OFFSET, I64),
                     tuple(_slot(em, args, shape_at + k, I32) for k in range(n)),
                     tuple(_slot(em, args, shape_at + n + k, I64) for k in range(n)),
                     _slot(em, args, at + LENGTH, I64))


def _launch_holds(em: Emitter, args: ll.Value, found: Proofs,
                  checks: proofs.Plan) -> tuple[ll.Value, list[ll.Value | None]]:
    """What the proofs need of the launch alone: i1, the array parameters they rely on lie
    inside their buffers (`robust.view_inside_buffer`) and the launch's conditions hold; and
    i1 flags of the workgroups' conditions' hoisted parts (`proofs.Plan`). Evaluated once per
    call of the entry, by a function of its own that LLVM neither inlines nor optimises (the
    flags pass through memory): optimising these conditions took longer than the kernel's
    own code, and they run once."""
    i1 = ll.IntType(1)
    if not found.params and not checks.launch and not any(checks.hoisted):
        return ll.Constant(i1, 1), [None] * len(checks.hoisted)
    fn = ll.Function(em.module, ll.FunctionType(i1, (PTR, PTR)), name="pk_launch_holds")
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    sub = Emitter(em.kernel, em.module, fn, ll.IRBuilder(fn.append_basic_block("entry")))
    bld = sub.builder
    grid, num_groups = _read_lazily(sub, fn.args[0])
    holds: ll.Value = ll.Constant(i1, 1)
    for name in found.params:
        holds = bld.and_(holds, view_inside_buffer(sub, sub.arrays[name]))
    holds = proofs.all_hold(sub, checks.launch, holds, (), grid, num_groups)
    flags, exact = proofs.each_holds(sub, checks.hoisted, grid, num_groups)
    holds = bld.and_(holds, exact)
    for k, flag in enumerate(flags):
        if flag is not None:
            bld.store(bld.zext(flag, I8), bld.gep(fn.args[1], [ll.Constant(I32, k)],
                                                  source_etype=I8))
    bld.ret(holds)
    stored = em.alloca(I8, "launch_flags", count=max(1, len(checks.hoisted)))
    holds = em.builder.call(fn, (args, stored))
    return holds, [None if need is None else em.builder.icmp_unsigned(
        "!=", em.builder.load(em.builder.gep(stored, [ll.Constant(I32, k)], source_etype=I8),
                              typ=I8), ll.Constant(I8, 0))
        for k, need in enumerate(checks.hoisted)]


def _group_ids(em: Emitter, g: ll.Value, num_groups: tuple) -> tuple[ll.Value, ...]:
    """The workgroup id of linear workgroup `g` (x fastest), i32 per dimension."""
    bld = em.builder
    nx, ny = (bld.zext(n, I64) for n in num_groups[:2])
    x = bld.urem(g, nx)
    y = bld.urem(bld.udiv(g, nx), ny)
    z = bld.udiv(g, bld.mul(nx, ny))
    return tuple(bld.trunc(v, I32) for v in (x, y, z))
