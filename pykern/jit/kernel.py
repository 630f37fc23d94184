"""`@pk.kernel`: the user-facing kernel object. It compiles on first launch (or loads from the
disk cache), keeps one variant per argument signature and device, and launches.

The jobs behind it live in modules of their own: `variants` (which variant arguments select),
`pipeline` (compiling one), `binding` (packing arguments, fast), `debug_launch` (debug
launches), `interpreted` (interpreter launches) and `strict_float`.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from typing import Any, overload

import numpy as np

from pykern import ir
from pykern.config import config
from pykern.errors import CompileError, GraphError
from pykern.frontend import KernelSource, load_source, signature, translate
from pykern.frontend.source import check_function
from pykern.jit import capture
from pykern.jit.arguments import bind_keywords, diagnose_buffers, kernel_grid
from pykern.jit.compile_log import log_built, log_memory_hit
from pykern.jit.debug_launch import debug_launch
from pykern.jit.interpreted import interpret_launch
from pykern.jit.profile import name_program
from pykern.jit.pipeline import (CompiledVariant, KernelBuild, build_variant, disk_cache,
                                 target_for)
from pykern.jit.strict_float import STRICT_BLOCK, StrictFloatWarning, strict_float
from pykern.jit.variants import (DEFAULT_WORKGROUPS, VariantKey, fast_signature,
                                 normalize_workgroup, variant_key)
from pykern.lang.dtypes import Array, constexpr
from pykern.runtime import get_device
from pykern.runtime.selection import running_on
from pykern.passes import decompose, lower_bf16, lower_complex
from pykern.spirv.lower import SpirvModule, lower
from pykern.spirv.target import Target
from pykern.spirv.encoding.validate import disassemble

__all__ = ["DEFAULT_WORKGROUPS", "CompiledVariant", "Kernel", "StrictFloatWarning",
           "disk_cache", "kernel", "strict_float", "target_for"]


class Kernel:
    """A `@pk.kernel` function. Launch with `kernel[grid](*args)`."""

    def __init__(self, fn: Callable, workgroup: tuple[int, ...] | None = None,
                 debug: bool = False, interpret: bool = False, strict_float: bool = False):
        check_function(fn, "@pk.kernel")
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self.workgroup = normalize_workgroup(workgroup)
        # as asked here; the environment's PYKERN_* flags join them on first use (below)
        self._asked = {"debug": debug, "interpret": interpret, "strict_float": strict_float}
        self._source: KernelSource | None = None
        self._params: dict[str, object] | None = None
        self._irs: dict[tuple, ir.Kernel] = {}
        self._variants: dict[tuple, CompiledVariant] = {}
        # launches find their variant by (device, grid ndim, cheap signature, strict) without
        # specialising on the arguments; see `fast_signature`
        self._fast: dict[tuple, CompiledVariant] = {}
        self._launchers: dict[object, Callable[..., None]] = {}

    # The configuration is read on first use, not at decoration: the op library's kernels are
    # made during `import pykern`, before the user's program may set PYKERN_* variables.

    @functools.cached_property
    def debug(self) -> bool:
        """Bounds checks and asserts: `debug=True` or PYKERN_DEBUG=1."""
        return self._asked["debug"] or config().debug

    @functools.cached_property
    def interpret(self) -> bool:
        """Runs in the interpreter: `interpret=True` or PYKERN_INTERPRET=1."""
        return self._asked["interpret"] or config().interpret

    @functools.cached_property
    def strict_float(self) -> bool:
        """Strict everywhere (`strict_float=True` or PYKERN_STRICT_FLOAT=1); otherwise strict
        where launched inside `strict_float()`."""
        return self._asked["strict_float"] or config().strict_float

    # ------------------------------------------------------------ what it is

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

    @functools.cached_property
    def _constexpr_positions(self) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self._specs) if s is constexpr)

    @functools.cached_property
    def _defaults(self) -> dict[str, object]:
        """The default values of the parameters that have one."""
        return {p.name: p.default for p in inspect.signature(self.__wrapped__).parameters.values()
                if p.default is not p.empty}

    def _runtime_args(self, args: tuple) -> tuple:
        """The arguments the device sees: constexpr ones are compiled in, not passed."""
        return tuple(a for a, spec in zip(args, self._specs) if spec is not constexpr)

    def _by_name(self, args: tuple, kwargs: dict) -> tuple:
        """`args` with the keyword arguments and default values put in their parameters'
        places."""
        if not kwargs and (len(args) >= len(self._specs) or not self._defaults):
            return args
        return bind_keywords(self.__name__, list(self.params), args, kwargs, self._defaults)

    def _strict(self) -> bool:
        """Whether a launch from here is in strict floating point."""
        return self.strict_float or STRICT_BLOCK.get()

    # ------------------------------------------------------------ compiling

    def _key(self, args: tuple, grid_ndim: int) -> VariantKey:
        return variant_key(self.__name__, self.params, args, self.workgroup, grid_ndim,
                           self._strict())

    def _translate(self, key: VariantKey) -> ir.Kernel:
        """The typed IR of `key`'s variant, translated once per kernel object."""
        kernel_ir = self._irs.get(key.ir_key)
        if kernel_ir is None:
            kernel_ir = self._irs[key.ir_key] = translate(
                self.source, dict(key.types), key.workgroup, key.constant_values,
                debug=self.debug, grid_ndim=key.grid_ndim)
        return kernel_ir

    def _variant(self, args: tuple, grid_ndim: int = 1) -> CompiledVariant:
        key = self._key(args, grid_ndim)
        device = get_device()
        variant = self._variants.get((device, key))
        if variant is None:
            start = time.perf_counter()
            variant = self._variants[(device, key)] = self._build(key, device)
            name_program(variant.program, self.__name__)  # for pk.profile()
            log_built(self.__name__, key, device, variant, time.perf_counter() - start)
        else:
            log_memory_hit(self.__name__, key, device)
        return variant

    def _build(self, key: VariantKey, device: Any) -> CompiledVariant:
        """Compiles one variant for `device` (see `pipeline.build_variant`). The disk cache and
        the device's target are looked up here, at the edge, and passed down."""
        if device.info.kind == "host":  # llvmlite is imported when the host first compiles
            from pykern.jit.host_pipeline import build_host_variant

            return build_host_variant(self, key, device)  # type: ignore[return-value]
        disk = disk_cache() if not self.debug else None  # debug sites are not serialised
        build = KernelBuild(self.__name__, self.source, self.debug, self._translate)
        return build_variant(build, key, device, target_for(device), disk)

    def compile(self, *args: object, grid: object = 1, **kwargs: object) -> CompiledVariant:
        """Compiles (or fetches from the cache) the variant `args` select, without running it."""
        _, ndim = kernel_grid(self.__name__, grid)
        args = self._by_name(args, kwargs)
        try:
            return self._variant(args, ndim)
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
        """The SPIR-V binary of the variant `args` select, for the current device; where that is
        the host device, for a generic Vulkan device (every optional feature, Vulkan's minimum
        limits)."""
        if get_device().info.kind == "host":
            return self._generic_module(args, kwargs).words
        return self.compile(*args, **kwargs).module.words

    def _generic_module(self, args: tuple, kwargs: dict) -> SpirvModule:
        """The module for a device with every optional feature and Vulkan's minimum limits
        (`Target()`): what needs no device, so that kernels compile where none exists."""
        grid = kwargs.pop("grid", 1)
        _, ndim = kernel_grid(self.__name__, grid)
        args = self._by_name(args, kwargs)
        try:
            key = self._key(args, ndim)
            target = Target(strict_float=key.strict)
            return lower(decompose(lower_bf16(lower_complex(self._translate(key))), target),
                         target)
        except CompileError as e:
            raise e.with_traceback(None) from None

    def asm(self, *args: object, **kwargs: object) -> str:
        """The SPIR-V disassembly (spirv-dis) of the variant `args` select."""
        return disassemble(self.spirv(*args, **kwargs))

    # ------------------------------------------------------------ launching

    def __getitem__(self, grid: object) -> Callable[..., None]:
        try:
            return self._launchers[grid]  # launches reuse grids: skip re-checking them
        except (KeyError, TypeError):
            pass
        grid = _plain_ints(grid)
        dims, ndim = kernel_grid(self.__name__, grid)
        launcher = functools.partial(self._launch, dims, ndim)
        exact = type(grid) is int or (type(grid) is tuple and all(type(d) is int for d in grid))
        if exact and len(self._launchers) < 64:  # never let 2.0 or True hit 2's entry
            self._launchers[grid] = launcher
        return launcher

    def __call__(self, *args: object) -> None:
        raise TypeError(f"launch a kernel with a grid: {self.__name__}[n](...)")

    def _launch(self, grid: tuple[int, int, int], grid_ndim: int, *args: object,
                **kwargs: object) -> None:
        """One launch: the hot path (a warm launch finds its variant in `_fast`, binds the
        arguments and records; every call saved here counts)."""
        if kwargs or len(args) < len(self._specs):
            args = self._by_name(args, kwargs)
        if self.interpret:
            capture.mark_unrepeatable()
            return self._interpret(grid, grid_ndim, args)
        device = get_device()
        if len(args) != len(self._specs):
            sig = None
        elif self._specialises:
            sig = fast_signature(self._specs, args)
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
        given = args
        if self._constexpr_positions:
            args = self._runtime_args(args)
        block, buffers, copy_back = variant.binder.bind(args)  # type: ignore[arg-type]
        status = variant.loop_status
        if status is not None:
            buffers[status.slot] = status.buffer
        if capture.ACTIVE[0] is not None:  # an op's first call with its signature
            capture.note_launch(variant.program, grid, block, buffers,
                                not (self.debug or copy_back),
                                None if status is None else status.watch)
        try:
            if variant.module.debug_sites:
                debug_launch(self.__name__, variant, device, grid, buffers, block)
            else:
                device.launch(variant.program, grid, buffers, block)
                if status is not None:
                    status.watch()  # a loop cut short raises at the wait for the results
        except ValueError:
            # the runtime refuses a freed buffer or one of another device, before recording
            # anything. Tensors all on one other device: the launch runs there (a launch runs
            # on its tensors' device, as an op does); else name the parameter (the binder's
            # fast path does not look)
            elsewhere = _one_other_device(given, device)
            if elsewhere is not None:
                with running_on(elsewhere):
                    return self._launch(grid, grid_ndim, *given)
            diagnose_buffers(self.__name__, variant.params, args, device)
            raise
        for array, tensor in copy_back:
            np.copyto(array, tensor.numpy())

    def _interpret(self, grid: tuple[int, int, int], grid_ndim: int, args: tuple) -> None:
        if getattr(get_device(), "graph_recording", False):
            raise GraphError(f"kernel '{self.__name__}' runs in the interpreter (interpret=True "
                             "or PYKERN_INTERPRET=1) inside pk.graph(): a graph records device "
                             "launches only")
        try:
            kernel_ir = self._translate(self._key(args, grid_ndim))
        except CompileError as e:
            raise e.with_traceback(None) from None
        interpret_launch(self.__name__, kernel_ir, grid, self._runtime_args(args))

    def __repr__(self) -> str:
        return f"<pk.kernel {self.__module__}.{self.__qualname__}>"


def _plain_ints(grid: object) -> object:
    """`grid` with int subclasses (a tensor's `t.size` is one: `pykern.tensor.core.size`) as plain
    ints, so that the launcher made for it is kept for the next launch over the same grid."""
    if isinstance(grid, int) and type(grid) is not int and not isinstance(grid, bool):
        return int(grid)
    if type(grid) is tuple and any(type(d) is not int and isinstance(d, int)
                                   and not isinstance(d, bool) for d in grid):
        return tuple(int(d) if isinstance(d, int) and not isinstance(d, bool) else d
                     for d in grid)
    return grid


def _one_other_device(args: tuple, device: object) -> object:
    """The device every tensor among `args` lives on, where that is not `device` (and they
    share one); else None."""
    found = {id(d): d for d in (getattr(getattr(a, "buffer", None), "device", None)
                                for a in args) if d is not None}
    if len(found) != 1:
        return None
    (other,) = found.values()
    return None if other is device or not getattr(other, "usable", False) else other


@overload
def kernel(fn: Callable, *, workgroup: tuple[int, ...] | None = None, debug: bool = False,
           interpret: bool = False, strict_float: bool = False) -> Kernel: ...
@overload
def kernel(fn: None = None, *, workgroup: tuple[int, ...] | None = None, debug: bool = False,
           interpret: bool = False, strict_float: bool = False) -> Callable[[Callable], Kernel]:
    ...
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
