"""The compile pipeline of one variant: frontend → checks → SPIR-V backend → validation →
disk cache → device program.

`build_variant` takes what the kernel object decided at its edge (the device, the target, the
disk cache or None) and returns a `CompiledVariant`: from the disk cache when it has the module
(no parsing, no lowering), else translated, checked against the device, lowered and stored.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pykern import __version__, ir
from pykern.config import config
from pykern.frontend import KernelSource
from pykern.jit.binding import ArgBinder
from pykern.jit.tile_shapes import check_tile_shapes
from pykern.runtime.feature import Feature
from pykern.jit.cache import CacheEntry, DiskCache, cache_key
from pykern.jit.limits import check_limits
from pykern.jit.loop_status import LoopStatus
from pykern.jit.strict_float import warn_shortfall
from pykern.jit.variants import VariantKey
from pykern.passes.spread import ITEMS_PER_INVOCATION
from pykern.lang.dtypes import ArrayType
from pykern.passes import (decompose, first_missing, lower_bf16, lower_complex,
                           required_features, spread_for)
from pykern.spirv.lower import SpirvModule, lower
from pykern.spirv.target import Target, features_of, float_controls_of
from pykern.spirv.encoding.validate import validate


@dataclass(frozen=True)
class CompiledVariant:
    """One specialisation of a kernel on one device: its parameters (as the IR has them), SPIR-V
    module and device program, how to bind arguments, and what building it cost."""

    params: tuple[ir.Param, ...]
    module: SpirvModule
    program: Any
    compile_seconds: float  # frontend + lowering + spirv-val, or the disk-cache load
    pipeline_seconds: float  # the driver's shader module and pipeline creation
    from_disk_cache: bool
    binder: ArgBinder
    array_ndims: dict[str, int]  # of every array the kernel names (for debug reports)
    loop_status: LoopStatus | None = None  # where the device cuts loops short and it has some


@functools.lru_cache(maxsize=1)
def disk_cache() -> DiskCache | None:
    """The process's compile cache, or None when PYKERN_CACHE=0 (read once)."""
    cfg = config()
    if not cfg.cache_enabled:
        return None
    validate_loaded = validate if cfg.cache_validate else None
    cache = DiskCache(cfg.cache_dir, validate_loaded)
    return cache if cache.enabled else None


@functools.lru_cache(maxsize=8)
def target_for(device: Any) -> Target:
    """What the compiler needs to know of a device: its limits and the optional features it
    has (and the runtime enabled)."""
    limits, features = device.info.limits, device.info.features
    return Target(max_push_constants_size=limits.max_push_constants_size,
                  features=features_of(features),
                  float_controls=float_controls_of(features.float_controls),
                  loop_iteration_cap=limits.loop_iteration_cap,
                  coop_shapes=device.info.coop_shapes,
                  items_per_invocation=ITEMS_PER_INVOCATION,
                  max_workgroup_span=min(limits.max_workgroup_invocations,
                                         limits.max_workgroup_size[0]))


@dataclass(frozen=True)
class KernelBuild:
    """What the pipeline needs of the kernel object: its name and source, debug mode, and
    how it translates a key (it keeps the typed IR per key)."""

    name: str
    source: KernelSource
    debug: bool
    translate: Callable[[VariantKey], ir.Kernel]


def build_variant(kernel: KernelBuild, key: VariantKey, device: Any, target: Target,
                  disk: DiskCache | None) -> CompiledVariant:
    """Compiles one variant for `device` (whose `target` it is); `disk` is None when the
    cache is off (or the kernel in debug mode: debug sites are not serialised)."""
    start = time.perf_counter()
    if key.strict:
        target = replace(target, strict_float=True)
    # keyed on kernel.source: the very text translation parses, read once per kernel object
    disk_key = cache_key(kernel.source, (key, kernel.debug), target, __version__) \
        if disk is not None else ""
    push_size = target.max_push_constants_size
    entry = disk.load(disk_key, key.types, key.workgroup, push_size) if disk is not None \
        else None
    if entry is not None:
        module, params, ndims = _from_entry(entry)
    else:
        translated = kernel.translate(key)
        # first as written, so that what bf16 needs is named as bf16, not as its u16 words
        check_features(kernel.source, translated, target)
        kernel_ir = spread_for(decompose(lower_bf16(lower_complex(translated)), target),
                               target)
        # the parameters as translated: launches check arguments against them (bf16 and c64,
        # not the u16 words, f32 values and pairs the backend sees)
        module, params = lower_checked(kernel.source, kernel_ir, device, target), \
            translated.params
        ndims = {a.name: len(a.shape) for a in kernel_ir.arrays}
        # reports name complex arrays' indices, not those of their parts' real arrays
        ndims.update({a.name: len(a.shape) for a in translated.arrays})
        if disk is not None:
            disk.store(disk_key, module.words, params, module.layout, push_size, module.items)
    ndims.update({p.name: p.type.ndim for p in params if isinstance(p.type, ArrayType)})
    if key.strict:
        warn_shortfall(kernel.name, module, target, device)
    compiled = time.perf_counter()
    program = device.create_program(module.words, module.layout)
    return CompiledVariant(params, module, program, compiled - start,
                           time.perf_counter() - compiled, entry is not None,
                           ArgBinder(kernel.name, params, module.layout), ndims,
                           loop_status_of(kernel.name, module, device))


def lower_checked(source: KernelSource, kernel_ir: ir.Kernel, device: Any,
                  target: Target) -> SpirvModule:
    """`kernel_ir` lowered for `target`, once the device's limits and features were checked
    (`pk.CompileError`, located in `source`)."""
    check_limits(source, kernel_ir, device.info.limits)
    check_features(source, kernel_ir, target)
    if Feature.COOPERATIVE_MATRIX in target.features:
        check_tile_shapes(source, kernel_ir, device.info.name,
                          tuple(getattr(device.info, "coop_shapes", ())))
    return lower(kernel_ir, target)


def check_features(source: KernelSource, kernel_ir: ir.Kernel, target: Target) -> None:
    """A CompileError at the first place `kernel_ir` needs a feature `target` lacks."""
    missing = first_missing(required_features(kernel_ir, target), target.features)
    if missing is not None:
        raise source.error(missing.loc, f"{missing.what} needs the device feature "
                                         f"'{missing.feature}', which this device lacks")


def _from_entry(entry: CacheEntry) -> tuple[SpirvModule, tuple[ir.Param, ...], dict[str, int]]:
    """The module and parameters of a disk-cache hit (a non-debug module names no arrays
    beyond its parameters)."""
    return SpirvModule(entry.words, entry.layout, loop_sites=entry.loop_sites,
                       items=entry.items), entry.params, {}


def loop_status_of(kernel_name: str, module: SpirvModule, device: Any) -> LoopStatus | None:
    """The status buffer of a module whose loops report being cut short (from the disk cache
    too: `CacheEntry.loop_sites`)."""
    slot = LoopStatus.slot_of(module.layout)
    if slot is None:
        return None
    return LoopStatus(device, kernel_name, module.loop_sites, slot)
