"""`@pk.kernel`: the JIT — the user-facing kernel object. It compiles on first launch (or loads
from the disk cache), keeps one variant per argument signature and device, and launches."""

from __future__ import annotations

import contextlib
import functools
import inspect
import linecache
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pykern import __version__, ir
from pykern.jit.cache import DiskCache, cache_key
from pykern.config import config
from pykern.jit.binding import ArgBinder
from pykern.lang.dtypes import Array, ArrayType, constexpr
from pykern.errors import CompileError
from pykern.frontend import KernelSource, load_source, signature, translate
from pykern.frontend.source import check_function
from pykern.jit.arguments import (bind_keywords, check_tensor, check_writable, diagnose_buffers,
                     normalize_grid, scalar_value, specialize)
from pykern.runtime import get_device
from pykern.interpret import ArrayArg
from pykern.interpret import run as interpret_run
from pykern.spirv.debug import DEBUG_BYTES, DEBUG_WORDS
from pykern.spirv.debug import failure as debug_failure
from pykern.spirv.layout import DEBUG_BUFFER
from pykern.spirv.lower import SpirvModule, lower, strict_float_shortfall
from pykern.jit.loop_status import LoopStatus
from pykern.passes import decompose, first_missing, required_features
from pykern.tensor.tensor import Tensor
from pykern.spirv.target import Target, features_of, float_controls_of
from pykern.spirv.validate import disassemble, validate

# workgroup shapes by number of grid dimensions, when the kernel does not name one: 256
# invocations, as NVIDIA launches small workgroups too slowly to fill its memory bus (64-wide
# ones cap a one-element-per-invocation add at 29% of the H200's bandwidth)
DEFAULT_WORKGROUPS = {1: (256, 1, 1), 2: (16, 16, 1), 3: (8, 8, 4)}

# set by `strict_float()` for the launches of one thread (or asyncio task)
_STRICT_FLOAT: ContextVar[bool] = ContextVar("pykern_strict_float", default=False)


class StrictFloatWarning(UserWarning):
    """A strict-floating-point kernel runs on a device that cannot give all of it: the message
    names what (denormals, signed zeros/inf/NaN or round-to-nearest, per float width)."""


@contextlib.contextmanager
def strict_float() -> Iterator[None]:
    """Strict floating point for every kernel launched in the block, the op library's included:

        with pk.strict_float():
            y = (a / b).numpy()          # numpy's bits

    It holds for the thread (or asyncio task) that entered it; kernels compiled strict (with
    `@pk.kernel(strict_float=True)` or PYKERN_STRICT_FLOAT=1) are strict everywhere."""
    token = _STRICT_FLOAT.set(True)
    try:
        yield
    finally:
        _STRICT_FLOAT.reset(token)


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
                  loop_iteration_cap=limits.loop_iteration_cap)


class Kernel:
    """A `@pk.kernel` function. Launch with `kernel[grid](*args)`."""

    def __init__(self, fn: Callable, workgroup: tuple[int, ...] | None = None,
                 debug: bool = False, interpret: bool = False, strict_float: bool = False):
        check_function(fn, "@pk.kernel")
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        if workgroup is not None:
            workgroup = tuple(workgroup) + (1,) * (3 - len(workgroup))
            if len(workgroup) != 3 or not all(isinstance(w, int) and w >= 1 for w in workgroup):
                raise ValueError(f"workgroup must be 1 to 3 positive ints, got {workgroup!r}")
        self.workgroup = workgroup
        self.debug = debug or config().debug
        self.interpret = interpret or config().interpret
        # strict everywhere; otherwise strict where launched inside `strict_float()`
        self.strict_float = strict_float or config().strict_float
        self._source: KernelSource | None = None
        self._params: dict[str, object] | None = None
        self._irs: dict[tuple, ir.Kernel] = {}
        self._variants: dict[tuple, CompiledVariant] = {}
        # launches find their variant by (device, grid ndim, cheap signature) without
        # specialising on the arguments; see _signature
        self._fast: dict[tuple, CompiledVariant] = {}
        self._launchers: dict[object, Callable[..., None]] = {}

    # ------------------------------------------------------------ compiling

    @property
    def source(self) -> KernelSource:
        if self._source is None:
            self._source = load_source(self.__wrapped__)
        return self._source

    @property
    def params(self) -> dict[str, object]:
        """Each parameter's annotation (a type, `pk.Array` or `pk.constexpr`)."""
        if self._params is None:
            self._params = signature(self.__wrapped__)
        return self._params

    @functools.cached_property
    def _specs(self) -> tuple:
        return tuple(self.params.values())

    @functools.cached_property
    def _specialises(self) -> bool:
        """Whether variants depend on the arguments (pk.Array or constexpr parameters)."""
        return any(s is constexpr or s is Array for s in self._specs)

    def _runtime_args(self, args: tuple) -> tuple:
        """The arguments the device sees: constexpr ones are compiled in, not passed."""
        return tuple(a for a, spec in zip(args, self._specs) if spec is not constexpr)

    @functools.cached_property
    def _constexpr_positions(self) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self._specs) if s is constexpr)

    def _workgroup(self, grid_ndim: int) -> tuple[int, int, int]:
        return self.workgroup or DEFAULT_WORKGROUPS[grid_ndim]  # type: ignore[return-value]

    def _strict(self) -> bool:
        """Whether a launch from here is in strict floating point."""
        return self.strict_float or _STRICT_FLOAT.get()

    def _key(self, args: tuple, grid_ndim: int) -> tuple:
        """Which variant `args` select: workgroup shape, parameter types (`pk.Array` ones take
        the argument's dtype and ndim), constexpr values, and strict floating point or not."""
        types, constants = specialize(self.__name__, self.params, args)
        return (self._workgroup(grid_ndim), grid_ndim, tuple(types.items()),
                tuple((k, type(v).__name__, v) for k, v in constants.items()), self._strict())

    def _translate(self, key: tuple) -> ir.Kernel:
        key = key[:4]  # strict and default variants share their IR
        kernel_ir = self._irs.get(key)
        if kernel_ir is None:
            workgroup, grid_ndim, types, constants = key
            kernel_ir = self._irs[key] = translate(self.source, dict(types), workgroup,
                                                   {k: v for k, _, v in constants},
                                                   debug=self.debug, grid_ndim=grid_ndim)
        return kernel_ir

    def _variant(self, args: tuple, grid_ndim: int = 1) -> CompiledVariant:
        key = self._key(args, grid_ndim)
        device = get_device()
        variant = self._variants.get((device, key))
        if variant is None:
            variant = self._variants[(device, key)] = self._build(key, device)
        return variant

    def _build(self, key: tuple, device: Any) -> CompiledVariant:
        """Compiles one variant for `device`: from the disk cache when it has it (no parsing,
        no lowering), else through the frontend and the SPIR-V layer."""
        start = time.perf_counter()
        target = target_for(device)
        workgroup, _, types, _, strict = key
        if strict:
            target = replace(target, strict_float=True)
        disk = disk_cache() if not self.debug else None  # debug sites are not serialised
        # keyed on self.source: the very text _translate parses, read once per kernel object
        disk_key = cache_key(self.source, (key, self.debug), target, __version__) \
            if disk is not None else ""
        push_size = target.max_push_constants_size
        entry = disk.load(disk_key, types, workgroup, push_size) if disk is not None else None
        ndims: dict[str, int] = {}
        if entry is not None:
            module = SpirvModule(entry.words, entry.layout, loop_sites=entry.loop_sites)
            params = entry.params
        else:
            kernel_ir = decompose(self._translate(key), target)
            self._check_limits(kernel_ir, device)
            _check_features(kernel_ir, target)
            module, params = lower(kernel_ir, target), kernel_ir.params
            ndims = {a.name: len(a.shape) for a in kernel_ir.arrays}
            if disk is not None:
                disk.store(disk_key, module.words, params, module.layout, push_size)
        ndims.update({p.name: p.type.ndim for p in params if isinstance(p.type, ArrayType)})
        if strict:
            self._warn_strict_shortfall(module, target, device)
        compiled = time.perf_counter()
        program = device.create_program(module.words, module.layout)
        return CompiledVariant(params, module, program, compiled - start,
                               time.perf_counter() - compiled, entry is not None,
                               ArgBinder(self.__name__, params, module.layout), ndims,
                               self._loop_status(module, device))

    def _loop_status(self, module: SpirvModule, device: Any) -> LoopStatus | None:
        """The status buffer of a module whose loops report being cut short (from the disk
        cache too: `CacheEntry.loop_sites`)."""
        slot = LoopStatus.slot_of(module.layout)
        if slot is None:
            return None
        return LoopStatus(device, self.__name__, module.loop_sites, slot)

    def _warn_strict_shortfall(self, module: SpirvModule, target: Target, device: Any) -> None:
        """Says, once per variant, which float controls strict mode could not have."""
        missing = strict_float_shortfall(module.words, target)
        if missing:
            warnings.warn(StrictFloatWarning(
                f"kernel {self.__name__!r}: strict floating point on {device.info.name} "
                f"without {', '.join(missing)}: the device does not allow them"),
                stacklevel=_caller_outside_pykern())

    def _check_limits(self, kernel_ir: ir.Kernel, device: Any) -> None:
        """Workgroup size and shared memory against the device's limits, as compile errors."""
        limits = device.info.limits
        wg = kernel_ir.workgroup
        if any(w > m for w, m in zip(wg, limits.max_workgroup_size)) or \
                wg[0] * wg[1] * wg[2] > limits.max_workgroup_invocations:
            raise self.source.error(self.source.tree, f"workgroup {wg} exceeds the device's "
                                    f"limits ({limits.max_workgroup_invocations} invocations, "
                                    f"sizes up to {limits.max_workgroup_size})")
        shared = sum(a.nbytes for a in kernel_ir.arrays if a.space is ir.MemorySpace.SHARED)
        if shared > limits.max_shared_memory:
            big = max((a for a in kernel_ir.arrays if a.space is ir.MemorySpace.SHARED),
                      key=lambda a: a.nbytes)
            raise self.source.error(big.loc, f"pk.shared arrays take {shared} bytes, more than "
                                             f"the device's {limits.max_shared_memory}")

    def compile(self, *args: object, grid: object = 1, **kwargs: object) -> CompiledVariant:
        """Compiles (or fetches from the cache) the variant `args` select, without running it."""
        normalize_grid(self.__name__, grid)
        args = self._by_name(args, kwargs)
        try:
            return self._variant(args, len(grid) if isinstance(grid, tuple) else 1)
        except CompileError as e:
            raise e.with_traceback(None) from None

    def ir(self, *args: object, **kwargs: object) -> ir.Kernel:
        """The typed IR of the variant `args` select (no device needed)."""
        args = self._by_name(args, kwargs)
        try:
            return self._translate(self._key(args, 1))
        except CompileError as e:
            raise e.with_traceback(None) from None

    def spirv(self, *args: object, **kwargs: object) -> bytes:
        """The SPIR-V binary of the variant `args` select."""
        return self.compile(*args, **kwargs).module.words

    def asm(self, *args: object, **kwargs: object) -> str:
        """The SPIR-V disassembly (spirv-dis) of the variant `args` select."""
        return disassemble(self.spirv(*args, **kwargs))

    def _by_name(self, args: tuple, kwargs: dict) -> tuple:
        """`args` with the keyword arguments and default values put in their parameters'
        places."""
        if not kwargs and (len(args) >= len(self._specs) or not self._defaults):
            return args
        return bind_keywords(self.__name__, list(self.params), args, kwargs, self._defaults)

    @functools.cached_property
    def _defaults(self) -> dict[str, object]:
        """The default values of the parameters that have one."""
        return {p.name: p.default for p in inspect.signature(self.__wrapped__).parameters.values()
                if p.default is not p.empty}

    # ------------------------------------------------------------ launching

    def __getitem__(self, grid: object) -> Callable[..., None]:
        try:
            return self._launchers[grid]  # launches reuse grids: skip re-checking them
        except (KeyError, TypeError):
            pass
        dims = normalize_grid(self.__name__, grid)
        ndim = len(grid) if isinstance(grid, tuple) else 1
        launcher = functools.partial(self._launch, dims, ndim)
        exact = type(grid) is int or (type(grid) is tuple and all(type(d) is int for d in grid))
        if exact and len(self._launchers) < 64:  # never let 2.0 or True hit 2's entry
            self._launchers[grid] = launcher
        return launcher

    def __call__(self, *args: object) -> None:
        raise TypeError(f"launch a kernel with a grid: {self.__name__}[n](...)")

    def _signature(self, args: tuple) -> tuple | None:
        """A cheap key for the variant `args` select — the dtype and ndim of tensors passed for
        `pk.Array` parameters, the values of constexpr ones — or None when only the thorough
        path (`specialize`) can tell (numpy arrays for generic parameters, odd values)."""
        sig = []
        for spec, a in zip(self._specs, args):
            if spec is constexpr:
                if type(a) not in (int, float, bool, str):
                    return None
                sig.append((type(a), a))  # the type too: 1, 1.0 and True are equal keys
            elif spec is Array:
                if type(a) is not Tensor:
                    return None
                sig.append((a.dtype, len(a.shape)))
        return tuple(sig)

    def _launch(self, grid: tuple[int, int, int], grid_ndim: int, *args: object,
                **kwargs: object) -> None:
        if kwargs or len(args) < len(self._specs):
            args = self._by_name(args, kwargs)
        if self.interpret:
            return self._interpret(grid, grid_ndim, args)
        device = get_device()
        specs = self._specs
        if len(args) != len(specs):
            sig = None
        elif self._specialises:
            sig = self._signature(args)
        else:
            sig = ()  # concretely typed parameters: one variant per device and grid ndim
        fast_key = (device, grid_ndim, sig, self._strict())
        variant = self._fast.get(fast_key) if sig is not None else None
        if variant is None:
            try:
                variant = self._variant(args, grid_ndim)
            except CompileError as e:
                raise e.with_traceback(None) from None
            if sig is not None:
                self._fast[fast_key] = variant
        if self._constexpr_positions:
            args = self._runtime_args(args)
        block, buffers, copy_back = variant.binder.bind(args)  # type: ignore[arg-type]
        status = variant.loop_status
        if status is not None:
            buffers[status.slot] = status.buffer
        try:
            if variant.module.debug_sites:
                self._debug_launch(variant, device, grid, buffers, block)
            else:
                device.launch(variant.program, grid, buffers, block)
                if status is not None:
                    status.watch()  # a loop cut short raises at the wait for the results
        except ValueError:
            # the runtime refuses a freed buffer or one of another device, before recording
            # anything: name the parameter (the binder's fast path does not look)
            diagnose_buffers(self.__name__, variant.params, args, device)
            raise
        for array, tensor in copy_back:
            np.copyto(array, tensor.numpy())

    def _debug_launch(self, variant: CompiledVariant, device: Any, grid: tuple[int, int, int],
                      buffers: list, block: bytearray) -> None:
        """A debug launch: a zeroed report buffer in the DEBUG_BUFFER slot, read back after the
        launch (debug launches are synchronous) and raised as KernelIndexError /
        KernelAssertionError."""
        report = device.create_buffer(DEBUG_BYTES)
        report.upload(np.zeros(DEBUG_WORDS, np.uint32))
        slot = variant.module.layout.buffer_index(DEBUG_BUFFER)
        assert slot is not None, "a debug module has a debug buffer"
        buffers[slot] = report
        device.launch(variant.program, grid, buffers, block)
        if variant.loop_status is not None:
            variant.loop_status.watch()
        words = np.empty(DEBUG_WORDS, np.uint32)
        report.read_into(words)
        report.free()
        error = debug_failure(self.__name__, variant.module.debug_sites, words,
                              variant.array_ndims.__getitem__,
                              None if variant.module.masked else grid)
        if error is not None:
            raise error.with_traceback(None)

    def _interpret(self, grid: tuple[int, int, int], grid_ndim: int, args: tuple) -> None:
        """Runs the kernel in the interpreter: numpy arrays in place; tensors are read, run on
        and written back."""
        try:
            kernel_ir = self._translate(self._key(args, grid_ndim))
        except CompileError as e:
            raise e.with_traceback(None) from None
        runtime_args = self._runtime_args(args)
        arrays: dict[str, ArrayArg] = {}
        scalars: dict[str, object] = {}
        written: list[tuple[Tensor, np.ndarray]] = []
        for param, value in zip(kernel_ir.params, runtime_args):
            if not isinstance(param.type, ArrayType):
                scalars[param.name] = scalar_value(self.__name__, param.name, param.type, value)
            elif isinstance(value, Tensor):
                check_tensor(self.__name__, param.name, value, None)
                flat = np.empty(value.buffer.nbytes // value.dtype.itemsize, value.dtype.numpy)
                value.buffer.read_into(flat)
                arrays[param.name] = ArrayArg(flat, value.offset, value.shape,
                                              value.element_strides)
                if param.access & ir.Access.WRITE:
                    written.append((value, flat))
            else:
                check_writable(self.__name__, param, value)
                arrays[param.name] = ArrayArg.of(value)  # type: ignore[arg-type]
        interpret_run(kernel_ir, grid, arrays, scalars)  # type: ignore[arg-type]
        for tensor, flat in written:
            tensor.buffer.upload(flat)

    def __repr__(self) -> str:
        return f"<pk.kernel {self.__module__}.{self.__qualname__}>"


def _check_features(kernel_ir: ir.Kernel, target: Target) -> None:
    """A CompileError at the first place `kernel_ir` needs a feature `target` lacks."""
    missing = first_missing(required_features(kernel_ir, target), target.features)
    if missing is not None:
        loc = missing.loc
        raise CompileError(f"{missing.what} needs the device feature '{missing.feature}', "
                           "which this device lacks", loc.file, loc.line, loc.col,
                           linecache.getline(loc.file, loc.line) or None)


def _caller_outside_pykern() -> int:
    """The `stacklevel` that makes a warning issued by the caller name the first line outside
    pykern (the user's launch, or the tensor op they called)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def kernel(fn: Callable | None = None, *, workgroup: tuple[int, ...] | None = None,
           debug: bool = False, interpret: bool = False, strict_float: bool = False) -> Any:
    """Makes a Python function a kernel: `@pk.kernel` or `@pk.kernel(workgroup=(16, 16))`.

    `debug=True` (or PYKERN_DEBUG=1) checks every array index and evaluates asserts;
    `interpret=True` (or PYKERN_INTERPRET=1) runs the body as Python over numpy instead of on
    the device, with the same semantics, for debugging; `strict_float=True` (or
    PYKERN_STRICT_FLOAT=1, or a launch inside `pk.strict_float()`) gives numpy's bits for
    `+ - * / sqrt fma` and conversions (IEEE 754 rounding, subnormals, signed zeros)."""
    if fn is None:
        return lambda f: Kernel(f, workgroup=workgroup, debug=debug, interpret=interpret,
                                strict_float=strict_float)
    return Kernel(fn, workgroup=workgroup, debug=debug, interpret=interpret,
                  strict_float=strict_float)
