"""`HostKernel`: one typed-IR kernel compiled to native code, the packing of a launch's
arguments into its argument block, and (debug mode) the error its checks report.

A kernel is compiled without the copy of its body that checks every access
(`pykern.llvm.module`); a launch with a workgroup whose proof fails compiles that copy once
(`checked_entry`, logged at INFO on "pykern.jit") and runs the rest of the launch with it."""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import replace
from collections.abc import Callable, Mapping

import numpy as np

from pykern import ir
from pykern.ir.identity_cache import IdentityCache
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import ArrayType, DType
from pykern.llvm import mathfns
from pykern.llvm.debug import DebugSite
from pykern.llvm.engine import NativeModule, compile_object, load_object
from pykern.llvm.inline import prepare
from pykern.llvm.layout import arg_layout, array_slots
from pykern.llvm.module import ENTRY, build_module
from pykern.llvm.pool import Entry, StopWord, run_workgroups
from pykern.llvm.reports import LaunchReports, failure
from pykern.passes import decompose, lower_bf16, lower_complex
from pykern.passes.complex import lowered_arguments, lowered_param


LOG = logging.getLogger("pykern.jit")


class HostMath:
    """The host target's math facts for `pykern.passes.decompose`: every function lowers."""

    def lowers_math(self, fn: ir.MathFn, dtype: DType) -> bool:
        return mathfns.lowers_math(fn, dtype)


class HostKernel:
    """A kernel compiled for the host. `llvm_ir` is the optimised module's text,
    `object_code` its machine code as an object file (what the disk cache stores). A kernel
    in debug mode has `debug_sites`, the accesses and asserts its report can name (the disk
    cache never holds one: their table is not stored)."""

    debug_sites: tuple[DebugSite, ...]

    def __init__(self, kernel: ir.Kernel):
        self.source_kernel = kernel
        self.kernel = _lowered(kernel)
        self.layout = arg_layout(self.kernel)
        built = build_module(self.kernel, checked_copy=False)
        # a complex array's accesses report its own index, without the parts' axis
        parts = {p.name for p in kernel.params if p.is_array and p.type.dtype.is_complex}
        parts |= {a.name for a in kernel.arrays if a.dtype.is_complex}
        self.debug_sites = tuple(replace(s, ndim=s.ndim - 1) if s.array in parts else s
                                 for s in built.sites)
        self.unoptimised_ir = str(built.module)
        self.object_code, optimised = compile_object(self.unoptimised_ir)
        self.native: NativeModule = load_object(self.object_code, ENTRY, optimised)
        self.from_disk_cache = False
        # whether an invocation may run a loop: then even a launch of few invocations is
        # worth spreading over the cores (a matmul's few long ones)
        self.loops = any(isinstance(n, (ir.ForRange, ir.While)) for s in kernel.body
                         for n in ir.walk(s)) or bool(kernel.functions)
        self._checked_copy(built.bails, lambda: self.kernel)

    @classmethod
    def from_object(cls, name: str, params: tuple[ir.Param, ...],
                    workgroup: tuple[int, int, int], obj: bytes, ir_text: str,
                    loops: bool = True, bails: bool = False,
                    source: Callable[[], ir.Kernel] | None = None) -> HostKernel:
        """A kernel from its object code (the disk cache), for the parameters it was compiled
        for: the launch needs nothing of the body. Where its entry `bails` (leaves the
        workgroups whose proof fails), `source()` gives the kernel's typed IR, from which the
        checked copy is compiled if a launch needs it. A RuntimeError when `obj` does not
        link."""
        self = cls.__new__(cls)
        self.source_kernel = ir.Kernel(name=name, params=params, locals=(), body=(),
                                       workgroup=workgroup)
        # the parameters as the entry reads them
        self.kernel = lower_bf16(lower_complex(self.source_kernel))
        self.layout = arg_layout(self.kernel)
        self.unoptimised_ir = ""
        self.debug_sites = ()
        self.object_code = obj
        self.native = load_object(obj, ENTRY, ir_text)
        self.from_disk_cache = True
        self.loops = loops
        if bails and source is None:
            raise RuntimeError("a kernel whose entry bails needs its source")
        self._checked_copy(bails, lambda: _lowered(source()))  # type: ignore[misc]
        return self

    def _checked_copy(self, bails: bool, lowered: Callable[[], ir.Kernel]) -> None:
        self.bails = bails
        self._lowered_kernel = lowered
        self._checked: NativeModule | None = None
        self._checked_lock = threading.Lock()

    @property
    def llvm_ir(self) -> str:
        return self.native.ir_text

    def checked_entry(self) -> Entry:
        """The entry of the kernel's module with both copies of the body: it runs the
        workgroups whose proof failed (`pykern.llvm.module`). Compiled on first use, once."""
        with self._checked_lock:
            if self._checked is None:
                start = time.perf_counter()
                built = build_module(self._lowered_kernel(), checked_copy=True)
                obj, optimised = compile_object(str(built.module))
                self._checked = load_object(obj, ENTRY, optimised)
                LOG.info("kernel '%s': a workgroup's accesses were not proved inside their "
                         "arrays; its checked copy compiled in %.1f ms",
                         self.source_kernel.name, (time.perf_counter() - start) * 1e3)
        return self._checked.entry

    def run(self, grid: tuple[int, int, int], arrays: Mapping[str, np.ndarray],
            scalars: Mapping[str, object], threads: int | None = None,
            timeout: float | None = None) -> None:
        """Runs every workgroup of a launch of `grid` (three ints) on `threads` threads
        (default: one per core, `pykern.llvm.pool`): numpy arrays are read and written in
        place. The caller checked the arguments' dtypes and ndims. No access reaches outside
        an array's memory (`pykern.llvm.robust`). A launch that runs longer than `timeout`
        seconds is stopped (`pool.LaunchTimedOut`), as is one interrupted by Ctrl-C
        (KeyboardInterrupt); what it wrote by then is unspecified.

        In debug mode, raises `pk.KernelIndexError` / `pk.KernelAssertionError` after the
        launch ran to its end when a check failed: the first failure in launch order
        (`pykern.llvm.reports`), with the Vulkan debug path's message. The failing access
        itself touched no memory; every other access of the launch was made."""
        self.run_block(self._argument_block(grid, arrays, scalars), grid, threads,
                       timeout=timeout)

    def run_block(self, block: np.ndarray, grid: tuple[int, int, int],
                  threads: int | None = None, stop: StopWord | None = None,
                  timeout: float | None = None) -> None:
        """`run` from an argument block already filled (`pykern.llvm.layout`: int64 slots,
        the stop word's and in debug mode the report's address left for this to fill), whose
        pointers stay valid until it returns; raises as `run` does."""
        groups = block[self.layout.grid_slot + 3:self.layout.grid_slot + 6]
        total = math.prod(int(g) for g in groups)
        stop = StopWord() if stop is None else stop
        block[self.layout.stop_slot] = stop.address
        # a kernel with loops may run long: only the pool's threads run it, stoppable
        inline = not self.loops
        if self.layout.report_slot is None:
            run_workgroups(self.native.entry, block.ctypes.data, total, threads, stop, timeout,
                           inline, self.checked_entry)
            return
        reports = LaunchReports(block, self.layout.report_slot)  # debug mode: no proofs
        run_workgroups(reports.entry(self.native.entry), block.ctypes.data, total, threads,
                       stop, timeout, inline)
        report = reports.first_failure()
        if report is not None:
            k = self.source_kernel
            error = failure(k.name, self.debug_sites, report, None if k.masked else grid)
            raise error.with_traceback(None)

    def _argument_block(self, grid: tuple[int, int, int], arrays: Mapping[str, np.ndarray],
                        scalars: Mapping[str, object]) -> np.ndarray:
        """The argument block of a launch (`pykern.llvm.layout`); the arrays it points into
        must stay alive until the launch returns."""
        k = self.kernel
        block = np.zeros(self.layout.size, np.int64)
        # complex arrays as real views, complex scalars as parts (pykern.passes.complex)
        arrays, scalars = lowered_arguments(self.source_kernel.params, arrays, scalars)
        declared_types = {q.name: p.type for p in self.source_kernel.params
                          for q in lowered_param(p)}
        for p in k.params:
            declared_type = declared_types[p.name]
            at = self.layout.first_slot[p.name]
            if isinstance(p.type, ArrayType):
                a = _as_stored(arrays[p.name])  # a view of the caller's array, no copy
                block[at:at + array_slots(a.ndim)] = _array_slots(a)
            else:
                value = scalars[p.name]
                if declared_type == dt.bf16:  # an f32 parameter now: its bf16 value
                    value = dt.round_to_bf16(float(value))  # type: ignore[arg-type]
                block[at:at + 1].view(np.uint8)[:p.type.itemsize] = np.frombuffer(
                    _scalar_bytes(p.type, value), np.uint8)
        groups = [-(-g // w) for g, w in zip(grid, k.workgroup, strict=True)]
        block[self.layout.grid_slot:self.layout.grid_slot + 3] = grid
        block[self.layout.grid_slot + 3:self.layout.grid_slot + 6] = groups
        return block


def _array_slots(a: np.ndarray) -> list[int]:
    """A numpy array's slots: its memory is the span its elements cover (a view's strides
    may be negative), which bounds every access (`pykern.llvm.robust`)."""
    item = a.dtype.itemsize
    strides = [s // item for s in a.strides]
    if a.size == 0:
        return [0, 0, 0, *a.shape, *strides]
    low = sum(min(0, (n - 1) * s) for n, s in zip(a.shape, strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(a.shape, strides))
    return [a.ctypes.data + low * item, high - low + 1, -low, *a.shape, *strides]


def _lowered(kernel: ir.Kernel) -> ir.Kernel:
    """`kernel` as the backend lowers it: complex and bf16 values lowered, math decomposed,
    barrier functions inlined."""
    lowered, problem = prepare(decompose(lower_bf16(lower_complex(kernel)), HostMath()))
    assert problem is None, f"unsupported: {problem}"  # the caller checked `support`
    return lowered


def _as_stored(array: np.ndarray) -> np.ndarray:
    """bf16 arrays as their 16-bit words, as the lowered kernel sees them."""
    if dt.from_numpy(array.dtype) == dt.bf16:
        return array.view(np.uint16)
    return array


def _scalar_bytes(t: DType, value: object) -> bytes:
    if t.kind == dt.BOOL:
        return bytes([1 if value else 0])
    return np.asarray(value, dtype=t.numpy).tobytes()


# per kernel object (see pykern.ir.identity_cache): the kernel object keeps its IR per variant
_cache: IdentityCache[HostKernel] = IdentityCache()
CACHE_SIZE = 256


def compile_host(kernel: ir.Kernel) -> HostKernel:
    """The host-compiled form of `kernel`, compiled once per kernel object (a small LRU)."""
    hit = _cache.get(kernel)
    return hit if hit is not None else _cache.put(kernel, HostKernel(kernel), CACHE_SIZE)
