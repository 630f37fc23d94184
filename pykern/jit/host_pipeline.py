"""The compile pipeline of one variant for the host device: typed IR → host backend
(`pykern.llvm`, with its disk cache) → a program the host device runs.

The host variant answers what launches ask of a `CompiledVariant` (the binder, the program,
the parameters, no loop status: the host cuts no loops short) and shows the LLVM IR where the
Vulkan variant shows SPIR-V.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pykern import ir
from pykern.jit.host_binding import HostArgBinder, HostProgram, host_program
from pykern.jit.limits import check_limits
from pykern.jit.variants import VariantKey
from pykern.lang.dtypes import ArrayType
from pykern.llvm.compiled import HostKernel
from pykern.llvm.launch import load_or_compile


@dataclass(frozen=True)
class HostModule:
    """What launches read of a compiled module: a host kernel reports no debug sites through
    a buffer and cuts no loops short."""

    llvm_ir: str
    debug_sites: tuple = ()
    loop_sites: tuple = ()


@dataclass(frozen=True)
class HostVariant:
    """One specialisation of a kernel compiled for the host device."""

    params: tuple[ir.Param, ...]
    module: HostModule
    program: HostProgram
    compile_seconds: float  # lowering and LLVM, or the disk-cache load
    from_disk_cache: bool
    binder: HostArgBinder
    array_ndims: dict[str, int]
    host: HostKernel
    pipeline_seconds: float = 0.0
    loop_status: None = None


# the workgroup of a kernel that does not depend on its own (`workgroup_free`) over a 2-D or
# 3-D grid on the host: rows of 64 invocations, the loop LLVM vectorises (16 x 16, the
# default for GPUs, leaves it 16 iterations, too short to vectorise)
HOST_ROWS_WORKGROUP = (64, 4, 1)
# the invocation ids, operations and arrays whose meaning depends on the workgroup's shape
_WORKGROUP_BUILTINS = frozenset({ir.BuiltinKind.LOCAL_ID, ir.BuiltinKind.GROUP_ID,
                                 ir.BuiltinKind.GROUP_SIZE, ir.BuiltinKind.NUM_GROUPS})


def workgroup_free(kernel_ir: ir.Kernel) -> bool:
    """Whether `kernel_ir` computes the same whatever its workgroup: it (with the functions it
    calls) reads no local or group id, group size or count, has no barrier, subgroup
    operation or shared array, and runs one invocation per grid point (`items`)."""
    if kernel_ir.items != 1:
        return False
    for node in ir.walk(kernel_ir):
        if isinstance(node, (ir.Barrier, ir.Subgroup)):
            return False
        if isinstance(node, ir.Builtin) and node.kind in _WORKGROUP_BUILTINS:
            return False
        if isinstance(node, ir.ArrayDecl) and node.space is ir.MemorySpace.SHARED:
            return False
    return True


def host_key(kernel: Any, key: VariantKey) -> VariantKey:
    """The variant the host compiles for `key`: with `HOST_ROWS_WORKGROUP` where the grid has
    two or three dimensions, `key`'s workgroup has rows shorter than it, and the kernel is
    `workgroup_free` (so the results are the same: the same invocations run, in rows)."""
    if key.grid_ndim < 2 or key.workgroup[0] >= HOST_ROWS_WORKGROUP[0] or kernel.debug:
        return key
    wide = key._replace(workgroup=HOST_ROWS_WORKGROUP)
    return wide if workgroup_free(kernel._translate(wide)) else key


def build_host_variant(kernel: Any, key: VariantKey, device: Any) -> HostVariant:
    """Variant `key` of the `@pk.kernel` object `kernel` for the host `device`: limits checked
    as on Vulkan (a located CompileError), compiled or loaded from the disk cache; a kernel
    that does not depend on its workgroup runs in rows (`host_key`)."""
    start = time.perf_counter()
    key = host_key(kernel, key)
    host = load_or_compile(kernel, key)
    if not host.from_disk_cache:  # the host's limits are fixed: a cached one passed them
        check_limits(kernel.source, kernel._translate(key), device.info.limits)
    params = host.source_kernel.params
    binder = HostArgBinder(kernel.__name__, params)
    ndims = {p.name: p.type.ndim for p in params if isinstance(p.type, ArrayType)}
    return HostVariant(params, HostModule(host.llvm_ir), host_program(host, binder),
                       time.perf_counter() - start, host.from_disk_cache, binder, ndims, host)
