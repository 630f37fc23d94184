"""Launch arguments bound for the host device: the slot values of a host kernel's argument
block (`pykern.llvm.layout`), and the program that packs them and runs the workgroups.

`HostArgBinder.bind` has the Vulkan binder's contract (`binding.ArgBinder`): the same checks
and fast paths, then (block, buffers, copy_back). Its block is the list of slot values with
each array's address and buffer length left 0: the device fills them in from the buffers it
was given (refusing freed ones and those of another device) and calls `HostProgram.run`. The
length bounds every access of the kernel (`pykern.llvm.robust`), so it is always the bound
buffer's own, also where a replayed plan binds another buffer than the one it recorded.

A launch that runs longer than the device's timeout (PYKERN_TIMEOUT) is stopped and raises
`pk.DeviceError`, as a Vulkan device's wait does; Ctrl-C stops it with KeyboardInterrupt
(`pykern.llvm.pool`). Either way the device goes on working, and what the launch wrote is
unspecified.
"""

from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np

from pykern import ir
from pykern.jit.arguments import complex_fields
from pykern.jit.binding import _ArraySlot, _scalar_slot, _ScalarSlot, bound_tensor, scalar_values
from pykern.lang.dtypes import ArrayType, DType
from pykern.jit.host_launch_run import LaunchRun, NativeCopy
from pykern.llvm.compiled import HostKernel
from pykern.llvm.launch_list import entry_address
from pykern.llvm.layout import LENGTH, array_slots
from pykern.llvm.pool import (RUNNING, LaunchTimedOut, StopWord, run_watched, run_workgroups,
                              thread_stop_word)
from pykern.runtime.errors import DeviceError
from pykern.tensor.core.tensor import Tensor

# a scalar's bytes at the start of its 8-byte slot (little endian), as struct formats
_SCALAR_FORMATS = {"f16": "e6x", "f32": "f4x", "f64": "d", "i8": "b7x", "u8": "B7x",
                   "i16": "h6x", "u16": "H6x", "i32": "i4x", "u32": "I4x", "i64": "q",
                   "u64": "Q", "bool_": "B7x", "bf16": "f4x"}
# launches of kernels without loops this small run on the calling thread, where handing work
# to the pool costs more than it saves; a kernel with loops (a few long invocations, as a
# matmul's) goes to all the pool's threads over a grid where one run on one thread took longer
# than POOL_MIN_SECONDS (remembered for up to POOL_CHOICES grids per kernel), else to one of
# them (never the calling thread, which could not stop it)
POOL_MIN_INVOCATIONS = 1 << 14
POOL_MIN_SECONDS = 200e-6
POOL_CHOICES = 256


_ADDRESS_AND_LENGTH = (0, 0)


def _scalar_format(t: DType) -> str:
    return _SCALAR_FORMATS[t.name]


class HostProgram:
    """One compiled host kernel, as the host device runs it."""

    def __init__(self, host: HostKernel, pointer_slots: list[int]):
        self.host = host
        k = host.kernel
        self.workgroup = k.workgroup
        self.pointer_slots = pointer_slots
        arrays = [p for p in k.params if isinstance(p.type, ArrayType)]
        # which of the launch's buffers (the array parameters, in order) the kernel writes: a
        # recorded graph refuses host reads of those (runtime/host/host_graph.py)
        self.writes_mask = tuple(bool(p.access & ir.Access.WRITE) for p in arrays)
        # and which it reads (an array neither read nor written counts as read, as on Vulkan)
        self.reads_mask = tuple(bool(p.access & ir.Access.READ) or not p.access & ir.Access.WRITE
                                for p in arrays)
        # the bytes of one element of each, as the kernel indexes it (a complex array's part,
        # a bf16 array's 16-bit word)
        self.item_sizes = [p.type.dtype.itemsize for p in arrays]  # type: ignore[union-attr]
        formats = []
        for p in k.params:
            if isinstance(p.type, ArrayType):
                formats.append("q" * array_slots(p.type.ndim))
            else:
                formats.append(_scalar_format(p.type))
        self.debug = host.layout.report_slot is not None
        # the grid, the workgroup counts and the stop word's address; in debug mode the
        # report's address too, which `HostKernel.run_block` fills
        self.struct = struct.Struct("<" + "".join(formats) + ("8q" if self.debug else "7q"))
        self.entry = host.native.entry
        self.entry_address = entry_address(self.entry)  # for native launch lists
        self.loops = host.loops
        self.pool_choice: dict[tuple[int, int, int], bool] = {}  # grid -> on the pool
        self._first_times: dict[tuple[int, int, int], float] = {}  # grid -> its first run
        self._groups: dict[tuple[int, int, int],
                           tuple[tuple[int, int, int], int, bool | None]] = {}
        # the argument block, packed in place launch after launch (a launch nested in another
        # thread's, which finds it busy, packs into one of its own)
        self._block = ctypes.create_string_buffer(self.struct.size)
        self._block_address = ctypes.addressof(self._block)
        self._busy = False

    def run(self, grid: tuple[int, int, int], addresses: list[int], sizes: list[int],
            values: list, timeout: float | None = None) -> None:
        """Runs every workgroup of a launch over `grid` (called by the host device) with the
        buffers at `addresses`, of `sizes` bytes; a `DeviceError` where it runs longer than
        `timeout` seconds."""
        for slot, address, size, item in zip(self.pointer_slots, addresses, sizes,
                                             self.item_sizes):
            values[slot] = address
            values[slot + LENGTH] = size // item
        known = self._groups.get(grid)
        if known is None:
            known = self._grid_facts(grid)
        groups, total, pooled = known
        stop = thread_stop_word()
        try:
            if self.debug:  # reports per thread, raised as a pk.KernelIndexError & co.
                packed = bytearray(self.struct.pack(*values, *grid, *groups, 0, 0))
                self.host.run_block(np.frombuffer(packed, np.int64), grid,
                                    None if pooled else 1, stop, timeout)
                return
            if pooled is False and not self._busy:
                # the common small launch, on this thread: packed in place and run as `_launch`
                # would, without its layers (each costs a share of a tiny launch)
                self._busy = True
                try:
                    self.struct.pack_into(self._block, 0, *values, *grid, *groups,
                                          stop.address)
                    self._run_here(self._block_address, total, stop, timeout)
                finally:
                    self._busy = False
                return
            self._run(grid, total, pooled, values, groups, stop, timeout)
        except LaunchTimedOut as e:
            raise self._timed_out(e.seconds) from None

    def _run_here(self, address: int, total: int, stop: StopWord, timeout: float | None
                  ) -> None:
        """The workgroups of a launch whose block is at `address`, on the calling thread:
        watched where the kernel has loops (it may run long), else at once."""
        if self.loops:
            run_watched(self.entry, address, total, stop, timeout, self.host.checked_entry)
            return
        rest = self.entry(address, 0, total) if total else 0
        if rest < total:  # a workgroup whose proof failed: the checked entry runs the rest
            self.host.checked_entry()(address, rest, total)

    def _grid_facts(self, grid: tuple[int, int, int]
                    ) -> tuple[tuple[int, int, int], int, bool | None]:
        """The workgroup counts of `grid`, their product, and whether a launch over it runs on
        the pool (`_pooled`; None while timed runs decide), remembered for up to POOL_CHOICES
        grids once decided (a decision does not change)."""
        wx, wy, wz = self.workgroup
        groups = (-(-grid[0] // wx), -(-grid[1] // wy), -(-grid[2] // wz))
        total = groups[0] * groups[1] * groups[2]
        known = (groups, total, self._pooled(grid, total))
        if known[2] is not None and len(self._groups) < POOL_CHOICES:
            self._groups[grid] = known
        return known

    def prepare(self, grid: tuple[int, int, int], addresses: list[int], sizes: list[int],
                values: list) -> PreparedLaunch | None:
        """The launch `run` would make, packed once to be made again and again with
        `run_prepared` (a recorded graph's replays); None for a debug kernel, whose reports
        need `run`."""
        if self.debug:
            return None
        values = list(values)
        for slot, address, size, item in zip(self.pointer_slots, addresses, sizes,
                                             self.item_sizes):
            values[slot] = address
            values[slot + LENGTH] = size // item
        wx, wy, wz = self.workgroup
        groups = (-(-grid[0] // wx), -(-grid[1] // wy), -(-grid[2] // wz))
        stop = thread_stop_word()
        block = ctypes.create_string_buffer(
            self.struct.pack(*values, *grid, *groups, stop.address), self.struct.size)
        return PreparedLaunch(self, grid, groups[0] * groups[1] * groups[2], block, stop)

    def run_prepared(self, launch: PreparedLaunch, timeout: float | None = None) -> None:
        """Makes a launch `prepare` packed, on the thread that prepared it (its stop word's)."""
        launch.stop.word.value = RUNNING
        try:
            self._launch(launch.grid, launch.total, self._pooled(launch.grid, launch.total),
                         launch.address, launch.stop, timeout)
        except LaunchTimedOut as e:
            raise self._timed_out(e.seconds) from None

    def runs_here(self, launch: PreparedLaunch) -> bool | None:
        """Whether `launch` runs on the calling thread (True) or on the pool (False), or None
        while timed runs decide. Launches that run here may be made together by one native
        call (`launch_run`)."""
        pooled = self._pooled(launch.grid, launch.total)
        return None if pooled is None else not pooled

    @staticmethod
    def launch_run(steps: list[PreparedLaunch | tuple[int, int, int]]) -> LaunchRun:
        """`steps` made in order by one native call: launches, each of which `runs_here`, and
        byte copies given as (destination address, source address, number of bytes)."""
        return LaunchRun([NativeCopy(*s) if isinstance(s, tuple) else s for s in steps])

    def finish(self, launch: PreparedLaunch, rest: int) -> None:
        """Runs workgroups `rest` to the end of `launch` through the checked entry (those a
        launch list's call of the entry left: a failed proof), on this thread (watched by
        the caller)."""
        self.host.checked_entry()(launch.address, rest, launch.total)

    def _timed_out(self, seconds: float) -> DeviceError:
        """The error of a launch the host device stopped after `seconds` (PYKERN_TIMEOUT)."""
        return DeviceError(
            f"kernel '{self.host.source_kernel.name}' did not finish within {seconds:g} s "
            "(PYKERN_TIMEOUT): a kernel may not terminate. The host device stopped it and "
            "works on; what the launch wrote is unspecified, other tensors are intact")

    def _run(self, grid: tuple[int, int, int], total: int, pooled: bool | None, values: list,
             groups: tuple[int, int, int], stop: StopWord, timeout: float | None) -> None:
        if self._busy:  # another thread's launch of this program: a block of its own
            block = ctypes.create_string_buffer(
                self.struct.pack(*values, *grid, *groups, stop.address), self.struct.size)
            self._launch(grid, total, pooled, ctypes.addressof(block), stop, timeout)
            return
        self._busy = True
        try:
            self.struct.pack_into(self._block, 0, *values, *grid, *groups, stop.address)
            self._launch(grid, total, pooled, self._block_address, stop, timeout)
        finally:
            self._busy = False

    def _launch(self, grid: tuple[int, int, int], total: int, pooled: bool | None,
                address: int, stop: StopWord, timeout: float | None) -> None:
        # a kernel with loops may run long: only the pool's threads run it, stoppable, unless
        # it ran briefly over this grid before (`run_watched`: on this thread, watched)
        inline = not self.loops
        checked = self.host.checked_entry  # for workgroups whose proof fails
        if pooled is False and not inline:
            run_watched(self.entry, address, total, stop, timeout, checked)
            return
        if pooled is not None:
            run_workgroups(self.entry, address, total, None if pooled else 1, stop, timeout,
                           inline, checked)
            return
        # not known yet: run on one thread, timed; the second such run decides for the next
        # launches over this grid (the first may pay for what happens once: pages touched).
        # The time weighed is the workgroups' own: handing them to a pool thread and waiting
        # for it (which a loaded machine can stretch past the work) is what the choice is
        # about, not part of it
        seconds = run_workgroups(self.entry, address, total, 1, stop, timeout, inline, checked)
        first = self._first_times.pop(grid, None)
        if first is None and len(self._first_times) < POOL_CHOICES:
            self._first_times[grid] = seconds
        elif len(self.pool_choice) < POOL_CHOICES:
            self.pool_choice[grid] = min(seconds, first or seconds) > POOL_MIN_SECONDS

    def _pooled(self, grid: tuple[int, int, int], total: int) -> bool | None:
        """Whether a launch over `grid` runs on the pool (True) or one thread (False), or None
        where a timed run on one thread decides: handing work to the pool costs tens of
        microseconds, so it goes there when it takes longer than that."""
        if not self.loops:  # every invocation does about the same, little, work
            return total >= 2 and grid[0] * grid[1] * grid[2] >= POOL_MIN_INVOCATIONS
        choice = self.pool_choice.get(grid)
        return choice if choice is None or total >= 2 else False


class PreparedLaunch:
    """A launch of a `HostProgram` with its argument block packed (`HostProgram.prepare`)."""

    __slots__ = ("program", "grid", "total", "block", "address", "stop", "thread")

    def __init__(self, program: HostProgram, grid: tuple[int, int, int], total: int,
                 block: object, stop: StopWord) -> None:
        self.program = program
        self.grid = grid
        self.total = total
        self.block = block  # kept: the native code reads it at `address`
        self.address = ctypes.addressof(block)  # type: ignore[arg-type]
        self.stop = stop
        self.thread = threading.get_ident()  # whose stop word the block names


class HostArgBinder:
    """Binds the runtime arguments of one host variant (constexpr arguments removed), with
    `params` as translated (bf16 named as bf16) in the order of the kernel's slots."""

    def __init__(self, kernel_name: str, params: tuple[ir.Param, ...]):
        self.kernel_name = kernel_name
        self.plan: list[_ScalarSlot | _ArraySlot] = []  # one slot per parameter, in order
        self.pointer_slots: list[int] = []
        slot = 0
        for i, p in enumerate(params):
            t = p.type
            if isinstance(t, ArrayType):
                self.plan.append(_ArraySlot(i, p, t.dtype, t.ndim))
                self.pointer_slots.append(slot)
                slot += array_slots(t.ndim + t.dtype.is_complex)  # complex: the parts' axis
            else:
                self.plan.append(_scalar_slot(i, p.name, t))
                slot += 2 if t.is_complex else 1
        self.slots = slot

    def bind(self, args: list) -> tuple[list, list, list[tuple[np.ndarray, Tensor]]]:
        """The slot values (addresses left 0), the buffers of the array parameters in order,
        and the (numpy array, tensor) pairs to copy back after the launch; the checks and
        fast paths of `ArgBinder.bind`."""
        values: list = []
        buffers: list = []
        copy_back: list[tuple[np.ndarray, Tensor]] = []
        for s in self.plan:
            if type(s) is _ScalarSlot:
                v = args[s.arg]
                if type(v) is s.kind and s.lo <= v <= s.hi:
                    values.append(v)
                else:
                    values += scalar_values(self.kernel_name, s, v)
                continue
            t = args[s.arg]
            if not (type(t) is Tensor and t.dtype is s.dtype and len(t.shape) == s.ndim):
                t = bound_tensor(self.kernel_name, s, t, copy_back)  # type: ignore[arg-type]
            buffers.append(t.buffer)
            values += _ADDRESS_AND_LENGTH  # filled in by HostProgram.run
            if s.parts:
                values += complex_fields(t)
                continue
            values.append(t.offset)
            values += t.shape
            values += t._strides
        return values, buffers, copy_back


def host_program(host: HostKernel, binder: HostArgBinder) -> HostProgram:
    """The program the host device runs for `host`, with `binder`'s argument slots."""
    assert binder.slots == host.layout.grid_slot, "host argument slots disagree"
    return HostProgram(host, binder.pointer_slots)
