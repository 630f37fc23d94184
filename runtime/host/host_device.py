"""`HostDevice`: the host CPU as a device of the runtime's shape, for the host backend's
native code (`pykern.llvm`). No Vulkan: it exists on every machine.

Its buffers are host memory (`HostBuffer`); a program is any object with
`run(grid, addresses, sizes, block, timeout)` (the host backend's compiled kernels), which runs
every workgroup of a launch over the cores before `launch` returns, each access kept inside
its buffer (`sizes` bytes at `addresses`), and raises `DeviceError` for a launch it stopped
after `timeout` seconds (PYKERN_TIMEOUT). Launches therefore run in the order they are made and
host access never waits; `sync()` has nothing to wait for, and a `timer()` measures the wall
time of the launches made inside it. The device knows nothing of kernels or of LLVM, as the
Vulkan device knows nothing of SPIR-V's source.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from importlib import metadata

from ..description import DescribedDevice, DeviceFeatures, DeviceInfo, DeviceLimits, FloatControls
from ..errors import DeviceError, GraphError, OutOfDeviceMemory
from ..grid import normalize_grid
from .host_buffer import HostBuffer
from .host_graph import HostGraph, copy_bytes
from ..submit.launch_profile import PROFILERS, profiled_launch
from ..stats import DeviceStats, MemoryStats

# Subgroups of the host backend: 8 lanes of consecutive invocations, the size the backend
# compiles for (`pykern.llvm.lanes.SUBGROUP_SIZE`, which the runtime may not import: a test
# checks that they agree), and the operations it lowers, named as Vulkan names them
HOST_SUBGROUP_SIZE = 8
HOST_SUBGROUP_OPERATIONS = frozenset({"basic", "vote", "arithmetic", "ballot", "shuffle"})
# workgroups as large as Vulkan devices allow, so that every kernel that runs there runs here;
# `pk.shared` lives on the stack of the thread running the workgroup
MAX_WORKGROUP_INVOCATIONS = 1024
MAX_SHARED_MEMORY = 64 * 1024
# indices are 32-bit in kernels that assume Vulkan's limits; buffers as large as 2 GiB
MAX_BUFFER_RANGE = 2**31 - 1
# freed blocks are kept for the next buffer of the same size, up to a total beyond which they
# all go back: an op's result then costs no allocation (small) and no page faults (large)
SPARE_LIMIT_BYTES = 512 << 20


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "CPU"


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def _llvmlite_version() -> str:
    try:
        return metadata.version("llvmlite")
    except metadata.PackageNotFoundError:
        return "not installed"


def host_info(index: int) -> DeviceInfo:
    """The host device as `devices()` lists it, at position `index`."""
    every_width = frozenset({16, 32, 64})
    features = DeviceFeatures(
        fp16=True, fp64=True, int64=True, int16=True, int8=True, storage8=True, storage16=True,
        uniform8=True, uniform16=True, push_constant8=True, push_constant16=True,
        float32_atomic_add=True, float32_atomic_min_max=True, float64_atomic_add=True,
        int64_atomics=True, subgroup_size=HOST_SUBGROUP_SIZE,
        subgroup_operations=HOST_SUBGROUP_OPERATIONS, cooperative_matrix=False,
        push_descriptor=False, timeline_semaphore=False, vulkan_memory_model=False,
        scalar_block_layout=True, subgroup_size_control=False,
        # no fast-math: IEEE arithmetic, subnormals kept, round to nearest even, every width
        float_controls=FloatControls(signed_zero_inf_nan_preserve=every_width,
                                     denorm_preserve=every_width, rounding_mode_rte=every_width,
                                     denorm_behavior_independence="all",
                                     rounding_mode_independence="all"),
    )
    big = 2**31 - 1
    limits = DeviceLimits(
        max_push_constants_size=256, max_workgroup_count=(big, big, big),
        max_workgroup_size=(MAX_WORKGROUP_INVOCATIONS,) * 3,
        max_workgroup_invocations=MAX_WORKGROUP_INVOCATIONS,
        max_storage_buffer_range=MAX_BUFFER_RANGE, max_uniform_buffer_range=MAX_BUFFER_RANGE,
        max_shared_memory=MAX_SHARED_MEMORY, min_storage_buffer_offset_alignment=1,
        min_uniform_buffer_offset_alignment=1, timestamp_period=1.0,
    )
    cores = _cores()
    return DeviceInfo(
        index=index, name=f"host ({_cpu_name()}, {cores} cores)", kind="host", vendor_id=0,
        device_id=0, api_version=(0, 0, 0), driver=f"pykern host backend, llvmlite "
        f"{_llvmlite_version()}", uuid="host", memory=_memory_bytes(), features=features,
        limits=limits, extensions=frozenset(),
    )


class HostTimer:
    """The wall time of the launches made between entering and leaving the `with` block (they
    have finished when it ends). `elapsed_ns` / `elapsed_s` as `GpuTimer`'s."""

    def __init__(self) -> None:
        self._start = 0
        self._ns: int | None = None

    def __enter__(self) -> HostTimer:
        if self._start or self._ns is not None:
            raise RuntimeError("a timer measures one block; make a new one")
        self._start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc: object) -> None:
        self._ns = time.perf_counter_ns() - self._start

    @property
    def elapsed_ns(self) -> float:
        if self._ns is None:
            raise RuntimeError("the timer has not measured a block yet")
        return float(self._ns)

    @property
    def elapsed_s(self) -> float:
        return self.elapsed_ns * 1e-9


class HostDevice(DescribedDevice):
    """The host CPU as a device: buffers in host memory, launches run at once over the cores."""

    def __init__(self, info: DeviceInfo, timeout: float = 60.0) -> None:
        self.info = info
        self.timeout = timeout  # seconds a launch may run (PYKERN_TIMEOUT)
        self._closed = False
        self._commands = 0
        self._allocations = 0
        self._live_buffers = 0
        self._live_bytes = 0
        self._spares: dict[int, list] = {}  # freed blocks by size, for reuse
        self._spare_bytes = 0
        self._graph: HostGraph | None = None  # the graph recording launches (host_graph.py)

    def __repr__(self) -> str:
        return f"<Device {self.info.name}>"

    # ------------------------------------------------------------ memory

    def create_buffer(self, nbytes: int) -> HostBuffer:
        """A buffer of `nbytes` uninitialised bytes."""
        self._check_open()
        if nbytes < 0:
            raise ValueError(f"a buffer cannot hold {nbytes} bytes")
        try:
            buffer = HostBuffer(self, nbytes, self._spare_memory(nbytes))
        except MemoryError:
            raise OutOfDeviceMemory(
                f"the host cannot allocate {nbytes} bytes ({self._live_bytes} bytes are held by "
                f"{self._live_buffers} buffers)") from None
        self._counted(nbytes)
        graph = self._graph
        if graph is not None and graph.created is not None:
            graph.created.add(id(buffer))  # made while a logging graph records
        return buffer

    def wrap(self, array: object) -> HostBuffer:
        """A buffer whose memory is the numpy `array`'s (C-contiguous, writable), not a copy."""
        self._check_open()
        buffer = HostBuffer.wrapping(self, array)  # type: ignore[arg-type]
        self._counted(buffer.nbytes)
        return buffer

    def _counted(self, nbytes: int) -> None:
        self._allocations += 1
        self._live_buffers += 1
        self._live_bytes += nbytes

    def _released(self, nbytes: int, memory: object | None) -> None:
        """A buffer let go of its `nbytes` (`memory`: the device's own, to keep for reuse)."""
        self._live_buffers -= 1
        self._live_bytes -= nbytes
        if memory is None or nbytes == 0:
            return
        if self._spare_bytes + nbytes > SPARE_LIMIT_BYTES:
            self._spares.clear()  # the oldest go: the OS has them back
            self._spare_bytes = 0
            if nbytes > SPARE_LIMIT_BYTES:
                return
        self._spares.setdefault(nbytes, []).append(memory)
        self._spare_bytes += nbytes

    def _spare_memory(self, nbytes: int) -> tuple | None:
        """Memory of exactly `nbytes` freed before and its address, or None. Blocks are reused
        so that an op's result costs no allocation, and, when large, touches memory already
        mapped (a fresh block costs a page fault per page on its first write, about as much as
        the op itself)."""
        pool = self._spares.get(nbytes)
        if not pool:
            return None
        self._spare_bytes -= nbytes
        memory = pool.pop()
        if not pool:
            del self._spares[nbytes]
        return memory

    def memory_stats(self) -> MemoryStats:
        return MemoryStats(allocate_calls=self._allocations, driver_allocations=self._live_buffers,
                           blocks=0, dedicated=self._live_buffers,
                           reserved_bytes=self._live_bytes + self._spare_bytes,
                           used_bytes=self._live_bytes, spare_bytes=self._spare_bytes)

    # ------------------------------------------------------------ launches

    def create_program(self, words: bytes, layout: object, entry: str = "main") -> object:
        raise DeviceError("the host device runs the host backend's native code, not SPIR-V: "
                          "launch kernels on it (pk.set_device('host')) instead")

    def launch(self, program: object, grid: tuple[int, int, int],
               buffers: Sequence[HostBuffer | None], block: object) -> None:
        """Runs `program` over `grid` with `buffers` (in binding order) and the argument
        `block` its binder made. A ValueError (before anything runs) for a freed buffer or one
        of another device."""
        if PROFILERS:  # pk.profile() collects: time this launch (launch_profile.py)
            profiled_launch(self, program,
                            lambda: self._record_launch(program, grid, buffers, block))
            return
        self._record_launch(program, grid, buffers, block)

    def _record_launch(self, program: object, grid: tuple[int, int, int],
                       buffers: Sequence[HostBuffer | None], block: object) -> None:
        self._check_open()
        grid = normalize_grid(grid)  # a GridError (a ValueError) before anything runs
        addresses, sizes = [], []
        for b in buffers:
            if b is None:
                addresses.append(0)
                sizes.append(0)
                continue
            if b.device is not self:
                raise ValueError(f"{b!r} belongs to another device than {self.info.name}")
            if b._memory is None:
                raise ValueError("the buffer was freed")
            addresses.append(b.address)
            sizes.append(b.nbytes)
        self._commands += 1
        program.run(grid, addresses, sizes, block, self.timeout)  # type: ignore[attr-defined]
        if self._graph is not None:
            self._graph.record_launch(program, grid, buffers, block)

    def sync(self) -> None:
        """Nothing to wait for: every launch has finished when it returns."""
        if self._graph is not None:
            raise GraphError("sync() inside pk.graph(): it waits for the launches being "
                             "recorded, and a replay would not wait again; sync after the block")

    def flush(self) -> None:
        """Nothing to submit: every launch has run when it returns."""

    def record_graph(self) -> HostGraph:
        """Starts recording the launches and uploads made on this device into a graph until
        its `end()`; they still run as they are made."""
        self._check_open()
        if self._graph is not None:
            raise GraphError("pk.graph() inside pk.graph(): graphs do not nest")
        self._graph = HostGraph(self)
        return self._graph

    @property
    def graph_recording(self) -> bool:
        """Whether a graph records the launches made on this device now."""
        return self._graph is not None

    def _end_graph(self, graph: HostGraph) -> None:
        if self._graph is graph:
            self._graph = None
        graph.end()

    def _replay_graph(self, graph: HostGraph, submit: bool = True) -> None:
        self._check_open()
        graph.replay()

    def pause_graph(self) -> HostGraph | None:
        """Stops recording into the graph that records now (returned; None if none) until
        `resume_graph`: what is launched meanwhile runs, unrecorded."""
        graph, self._graph = self._graph, None
        return graph

    def resume_graph(self, graph: HostGraph | None) -> None:
        """Records into `graph` again (what `pause_graph` returned)."""
        if graph is not None and not graph.released and graph.recording:
            self._graph = graph

    def copy_buffer(self, src: HostBuffer, src_offset: int, dst: HostBuffer, dst_offset: int,
                    nbytes: int) -> None:
        """Copies `nbytes` bytes from `src` (at byte `src_offset`) into `dst`, as a launch
        would (launches before it have run, later ones see the copy)."""
        self._check_open()
        self._check_copy(src, src_offset, dst, dst_offset, nbytes)
        if not nbytes:
            return
        copy_bytes(src, src_offset, dst, dst_offset, nbytes)
        if self._graph is not None:
            self._graph.record_copy(src, src_offset, dst, dst_offset, nbytes)

    def _release_graph(self, graph: HostGraph) -> None:
        self._end_graph(graph)
        graph.release()

    def after(self, serial: int, check: Callable[[], None]) -> None:
        check()  # the work of `serial` has finished already

    def timer(self) -> HostTimer:
        return HostTimer()

    def stats(self) -> DeviceStats:
        return DeviceStats(commands=self._commands, barriers=0, submits=self._commands,
                           descriptor_set_hits=0, descriptor_set_misses=0,
                           memory=self.memory_stats())

    def save_pipeline_cache(self) -> bool:
        return False  # compiled kernels are in the host backend's own disk cache

    # ------------------------------------------------------------ life

    def close(self) -> None:
        self._closed = True
        self._spares.clear()
        self._spare_bytes = 0

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def hung(self) -> bool:
        return False

    @property
    def lost(self) -> bool:
        return False

    @property
    def usable(self) -> bool:
        return not self._closed

    @property
    def handle(self) -> object:
        return None if self._closed else self

    def disown(self, parent_pid: int) -> None:
        """A forked child keeps a copy of the host memory: the device stays usable there."""

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceError(f"{self.info.name} was closed; pk.set_device('host') opens it "
                              "again")
