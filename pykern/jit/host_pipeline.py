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


def build_host_variant(kernel: Any, key: VariantKey, device: Any) -> HostVariant:
    """Variant `key` of the `@pk.kernel` object `kernel` for the host `device`: limits checked
    as on Vulkan (a located CompileError), compiled or loaded from the disk cache."""
    start = time.perf_counter()
    host = load_or_compile(kernel, key)
    if not host.from_disk_cache:  # the host's limits are fixed: a cached one passed them
        check_limits(kernel.source, kernel._translate(key), device.info.limits)
    params = host.source_kernel.params
    binder = HostArgBinder(kernel.__name__, params)
    ndims = {p.name: p.type.ndim for p in params if isinstance(p.type, ArrayType)}
    return HostVariant(params, HostModule(host.llvm_ir), host_program(host, binder),
                       time.perf_counter() - start, host.from_disk_cache, binder, ndims, host)
