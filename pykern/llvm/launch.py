"""`launch(kernel, grid, *args)`: a `@pk.kernel` run on the host through the LLVM backend,
over numpy arrays written in place, without the runtime. (The host device,
`pk.set_device("host")`, launches through `pykern.jit`, which compiles through
`load_or_compile` here.)

The kernel is specialised for the arguments as a launch on a device would (`kernel` is the
kernel object; its variant key and typed IR are what its own launches use), a construct the
backend does not lower yet is a located `pk.CompileError`, and a wrong argument a
`pk.LaunchError` naming the parameter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pykern import ir
from pykern.ir.identity_cache import IdentityCache
from pykern.errors import CompileError, LaunchError
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import ArrayType
from pykern.llvm import compiled
from pykern.llvm.compiled import HostKernel, compile_host
from pykern.llvm.diskcache import HostDiskCache, host_disk_cache
from pykern.llvm.support import first_unsupported
from pykern.runtime.grid import GridError, grid_dims


def launch(kernel: object, grid: int | tuple[int, ...], *args: object,
           threads: int | None = None, timeout: float | None = None) -> None:
    """Runs `kernel[grid](*args)` on the host: numpy arrays (any strides, read and written
    in place) and Python or numpy scalars; the workgroups on `threads` threads (default: one
    per core). A launch longer than `timeout` seconds is stopped (`pool.LaunchTimedOut`).

    >>> launch(saxpy, x.size, 2.0, x, y, out)  # doctest: +SKIP
    """
    host = compile_for(kernel, grid, *args)
    dims, _ = _grid(kernel, grid)
    runtime_args = kernel._runtime_args(args)  # type: ignore[attr-defined]
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, object] = {}
    for param, value in zip(host.source_kernel.params, runtime_args, strict=True):
        if isinstance(param.type, ArrayType):
            arrays[param.name] = _array_arg(kernel, param, value)
        else:
            scalars[param.name] = _scalar_arg(kernel, param, value)
    host.run(dims, arrays, scalars, threads, timeout)


def compile_for(kernel: object, grid: int | tuple[int, ...], *args: object) -> HostKernel:
    """The host-compiled variant of `kernel` that a launch over `grid` with `args` runs (its
    `llvm_ir` shows the optimised LLVM IR): from memory, else from the disk cache, else
    compiled (and stored there)."""
    _, ndim = _grid(kernel, grid)
    try:
        key = kernel._key(args, ndim)  # type: ignore[attr-defined]
    except CompileError as e:
        raise e.with_traceback(None) from None
    hit = _variants.get(kernel, key)
    if hit is not None:
        return hit
    return _variants.put(kernel, load_or_compile(kernel, key), compiled.CACHE_SIZE, key)


# each kernel object's compiled variants (see pykern.ir.identity_cache)
_variants: IdentityCache[HostKernel] = IdentityCache()


def load_or_compile(kernel: object, key: Any) -> HostKernel:
    """Variant `key` of the `@pk.kernel` object `kernel`, from the disk cache or compiled (and
    stored there); a located CompileError for what the backend does not lower."""
    disk = host_disk_cache() if not kernel.debug else None  # type: ignore[attr-defined]
    disk_key = HostDiskCache.key(kernel, key) if disk is not None else ""
    host = disk.load(disk_key, kernel.__name__, key.types, key.workgroup,  # type: ignore
                     lambda: checked_ir(kernel, key)) if disk is not None else None
    if host is None:
        host = compile_host(checked_ir(kernel, key))
        if disk is not None:
            disk.store(disk_key, host)
    return host


def checked_ir(kernel: object, key: Any) -> ir.Kernel:
    """The typed IR of variant `key`; a located CompileError where the backend lacks a
    construct it uses."""
    try:
        kernel_ir: ir.Kernel = kernel._translate(key)  # type: ignore[attr-defined]
        missing = first_unsupported(kernel_ir)
        if missing is not None and missing.feature is not None:
            raise kernel.source.error(  # type: ignore[attr-defined]
                missing.loc, f"{missing.what} need the device feature '{missing.feature}', "
                "which the host device lacks (the interpreter runs them)")
        if missing is not None:
            raise kernel.source.error(  # type: ignore[attr-defined]
                missing.loc, f"{missing.what} is not supported by the host backend yet")
    except CompileError as e:
        raise e.with_traceback(None) from None
    return kernel_ir


def _grid(kernel: object, grid: object) -> tuple[tuple[int, int, int], int]:
    name = getattr(kernel, "__name__", "kernel")
    try:
        dims = grid_dims(grid)
    except GridError as e:
        raise LaunchError(f"{name}[{grid!r}]: {e}") from None
    return dims + (1,) * (3 - len(dims)), len(dims)  # type: ignore[return-value]


def _array_arg(kernel: object, param: ir.Param, value: object) -> np.ndarray:
    name = getattr(kernel, "__name__", "kernel")
    where = f"{name}(): parameter '{param.name}'"
    if not isinstance(value, np.ndarray):
        raise LaunchError(f"{where}: the host backend takes numpy arrays, not "
                          f"{type(value).__name__}")
    t: ArrayType = param.type  # type: ignore[assignment]
    if dt.from_numpy(value.dtype) != t.dtype or value.ndim != t.ndim or \
            not value.dtype.isnative:
        raise LaunchError(f"{where}: expected {t!r}, got a {value.ndim}-D {value.dtype} array")
    if any(s % value.dtype.itemsize for s in value.strides):
        raise LaunchError(f"{where}: the array's strides are not whole elements")
    if param.access & ir.Access.WRITE and not value.flags.writeable:
        raise LaunchError(f"{where}: the kernel writes it but the array is read-only")
    return value


def _scalar_arg(kernel: object, param: ir.Param, value: object) -> object:
    """`value` checked to fit `param`'s type (the block holds it in that type's bytes)."""
    t = param.type
    assert not isinstance(t, ArrayType)
    if t.kind == dt.BOOL or t == dt.bf16:
        return value
    try:
        with np.errstate(over="ignore"):  # a float too large is inf, as on every backend
            np.asarray(value, dtype=t.numpy)
    except (OverflowError, ValueError, TypeError) as e:
        name = getattr(kernel, "__name__", "kernel")
        raise LaunchError(f"{name}(): parameter '{param.name}' ({t.name}): {value!r} does not "
                          f"fit ({e})") from None
    return value
