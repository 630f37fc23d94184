"""`Device`: one logical Vulkan device with a compute queue, and everything made on it."""

from __future__ import annotations

import dataclasses
import operator
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence

from . import _vk
from ._vk import ffi, lib
from ..submit.batch import Batch, BatchQueue
from ..memory.buffer import MIN_SIZE, STORAGE_USAGE, Buffer, BufferMaker, RawBuffer
from ..config import Config
from ..submit.descriptors import DescriptorAllocator, DescriptorSetCache, UniformArena
from ..errors import FORK_ADVICE, DeviceError, GraphError
from .features import build_enable_chain, query_supported
from ..submit.graph import GraphPins, VulkanGraph
from ..description import DescribedDevice
from ..transfer.host_import import EXTENSION as IMPORT_EXTENSION
from ..transfer.host_import import HostImport
from .info import DeviceInfo, memory_properties
from .instance import API_VERSION, Instance
from .objects import DeviceQueue
from ..submit.launch import Launcher
from ..submit.launch_profile import PROFILERS, profiled_launch
from ..layout import BindingLayout
from ..memory.device_memory import STORAGE, Allocator, MemoryStats
from ..programs.pipeline_cache import PipelineCache
from ..programs.program import Program, check_words
from ..memory.recycle import BufferRecycler
from ..memory.staging import CHUNK, StagingPool
from ..stats import DeviceStats
from ..submit.timing import BOTTOM, GpuTimer, QueryPools
from ..transfer.transfers import Transfers, import_alignment, pick_transfer_queue
from ..transfer.transfer_queue import SEMAPHORE_FUNCTIONS

DEVICE_FUNCTIONS = [
    "vkGetDeviceQueue",
    "vkDestroyDevice",
    "vkDeviceWaitIdle",
    "vkCreateBuffer",
    "vkDestroyBuffer",
    "vkGetBufferMemoryRequirements",
    "vkBindBufferMemory",
    "vkAllocateMemory",
    "vkFreeMemory",
    "vkMapMemory",
    "vkCreateShaderModule",
    "vkDestroyShaderModule",
    "vkCreateDescriptorSetLayout",
    "vkDestroyDescriptorSetLayout",
    "vkCreatePipelineLayout",
    "vkDestroyPipelineLayout",
    "vkCreateComputePipelines",
    "vkDestroyPipeline",
    "vkCreateDescriptorPool",
    "vkDestroyDescriptorPool",
    "vkResetDescriptorPool",
    "vkAllocateDescriptorSets",
    "vkUpdateDescriptorSets",
    "vkCreateCommandPool",
    "vkDestroyCommandPool",
    "vkResetCommandPool",
    "vkAllocateCommandBuffers",
    "vkBeginCommandBuffer",
    "vkEndCommandBuffer",
    "vkCmdPipelineBarrier",
    "vkCmdBindPipeline",
    "vkCmdBindDescriptorSets",
    "vkCmdPushConstants",
    "vkCmdDispatch",
    "vkCmdCopyBuffer",
    "vkCmdExecuteCommands",
    "vkCreateFence",
    "vkDestroyFence",
    "vkWaitForFences",
    "vkResetFences",
    "vkGetFenceStatus",
    "vkQueueSubmit",
    "vkFreeDescriptorSets",
    "vkCreatePipelineCache",
    "vkDestroyPipelineCache",
    "vkGetPipelineCacheData",
    "vkCreateQueryPool",
    "vkDestroyQueryPool",
    "vkGetQueryPoolResults",
    "vkCmdResetQueryPool",
    "vkCmdWriteTimestamp",
]


PUSH_DESCRIPTOR = "VK_KHR_push_descriptor"


class Device(DescribedDevice):
    """A Vulkan device ready to run compute shaders. Get one with `get_device()`.

    All methods are thread-safe (one lock per device). Launches are recorded and returned at
    once; `sync()` or reading a buffer submits and waits.
    """

    def __init__(
        self, instance: Instance, info: DeviceInfo, physical_device: object, config: Config
    ) -> None:
        if info.api_version[:2] < (1, 2):
            raise DeviceError(
                f"{info.name} supports Vulkan {info.api_version[0]}.{info.api_version[1]}; "
                "pykern needs 1.2"
            )
        self.info = info
        self.config = config
        self._instance = instance  # keeps the instance alive as long as the device
        self._lock = threading.RLock()
        self._closed = False
        self._closed_reason = f"device {info.name} is closed"
        self._programs: dict[tuple[bytes, BindingLayout, str], Program] = {}
        self._live: set[RawBuffer] = set()
        self.family, timestamp_bits = _compute_family(physical_device, info.name)
        # (family, index) of the DMA queue, None where copies go on the compute queue
        self.transfer_queue = (
            pick_transfer_queue(physical_device, self.family, config.transfer_queue)
            if info.features.timeline_semaphore
            else None
        )
        self.handle = self._create(physical_device, info)
        self.push_descriptors = (
            config.push_descriptors and PUSH_DESCRIPTOR in self.enabled_extensions
        )
        names = DEVICE_FUNCTIONS + (["vkCmdPushDescriptorSetKHR"] if self.push_descriptors else [])
        if self.transfer_queue is not None:
            names += SEMAPHORE_FUNCTIONS
        fn = self.fn = _vk.load_device_functions(self.handle, names)
        self.queue = self._get_queue(self.family, 0)
        self.allocator = self._create_allocator(physical_device)
        families = {self.family} | ({self.transfer_queue[0]} if self.transfer_queue else set())
        self._maker = BufferMaker(self.handle, fn, self.allocator, tuple(sorted(families)))
        self._storage_type = self.allocator.type_for(STORAGE)
        self._recycled = BufferRecycler(
            config.buffer_cache_bytes,
            self.allocator.heap_sizes[self.allocator.types[self._storage_type][1]])
        self._staging = StagingPool(self._maker)
        self._descriptors = DescriptorAllocator(self.handle, fn)
        self.pipeline_cache = PipelineCache(self.handle, fn, info, config.cache_dir)
        self._queries = QueryPools(self.handle, fn, timestamp_bits)
        self._uniforms = UniformArena(self._maker, info.limits.min_uniform_buffer_offset_alignment)
        self._batches = self._create_batches()
        self._set_cache = DescriptorSetCache(self.handle, fn, lambda: self._batches.completed)
        self._launcher = Launcher(self, fn, self.handle, self._batches, self._descriptors,
                                  self._set_cache, self._uniforms,
                                  info.limits.max_workgroup_count)
        self._copy_region = ffi.new("VkBufferCopy*")
        self._graph_state()
        self._transfers = self._create_transfers(physical_device)

    def _graph_state(self) -> None:
        """Recorded graphs (runtime/submit/graph.py): the one recording, all of them, what they
        hold."""
        self._graph: VulkanGraph | None = None
        self._graphs: weakref.WeakSet[VulkanGraph] = weakref.WeakSet()
        self._pins = GraphPins()

    def _get_queue(self, family: int, index: int) -> object:
        queue = ffi.new("VkQueue*")
        self.fn.vkGetDeviceQueue(self.handle, family, index, queue)
        return queue[0]

    def _create_transfers(self, physical_device: object) -> Transfers | None:
        """The DMA path of host-device copies, where a transfer queue is used (see transfer.py)."""
        if self.transfer_queue is None:
            return None
        family, index = self.transfer_queue
        host_import = None
        if IMPORT_EXTENSION in self.enabled_extensions:
            host_import = HostImport(self.handle, self.fn, import_alignment(physical_device))
        return Transfers(
            DeviceQueue(self.handle, self.fn, self._get_queue(family, index), family),
            self._batches,
            self._maker,
            self.config.timeout,
            host_import,
        )

    def _create_allocator(self, physical_device: object) -> Allocator:
        """The memory allocator, its blocks aligned for storage and uniform buffers alike."""
        limits, config = self.info.limits, self.config
        return Allocator(
            self.handle,
            memory_properties(physical_device),
            self.fn,
            force_staging=config.force_staging,
            reclaim=self._reclaim,
            block_size=config.memory_block_size,
            offset_alignment=max(
                limits.min_storage_buffer_offset_alignment,
                limits.min_uniform_buffer_offset_alignment,
            ),
        )

    def _create_batches(self) -> BatchQueue:
        """The queue of command batches that launches and copies are recorded into."""
        config = self.config
        return BatchQueue(
            DeviceQueue(self.handle, self.fn, self.queue, self.family),
            timeout=config.timeout,
            batch_launches=config.batch_launches,
            max_in_flight=config.max_in_flight,
            descriptors=self._descriptors,
            uniforms=self._uniforms,
            hung_advice=f"Until that work finishes the device refuses every use; "
            f"{self._reopen_advice()}.",
        )

    def __repr__(self) -> str:
        return f"<Device {self.info.index}: {self.info.name}{' (closed)' if self._closed else ''}>"

    # ---- public API ----

    def create_buffer(self, nbytes: int) -> Buffer:
        """A storage buffer of `nbytes` bytes (0 allowed), contents undefined.

        Raises OutOfDeviceMemory, before asking the driver, when it does not fit the memory
        heap next to what is allocated already; DeviceError when it exceeds the device's
        maxStorageBufferRange (a kernel could not address it).
        """
        buffer = self._create_buffer(nbytes)
        graph = self._graph
        if graph is not None and graph.created is not None:
            graph.created.add(id(buffer))  # made while a logging graph records
        return buffer

    def _create_buffer(self, nbytes: int) -> Buffer:
        nbytes = operator.index(nbytes)
        if nbytes < 0:
            raise ValueError(f"a buffer cannot have {nbytes} bytes")
        size = max(MIN_SIZE, -(-nbytes // 16) * 16)
        with self._lock:
            self._check_open()
            kept = self._recycled.take(nbytes)
            if kept is not None:  # a freed buffer of this size (see runtime/memory/recycle.py)
                buffer = Buffer(self, nbytes, kept[0])
                buffer.use_serial = buffer.write_serial = kept[1]
                return buffer
            self.allocator.ensure_fits(size, self._storage_type)
            limit = self.info.limits.max_storage_buffer_range
            if nbytes > limit:
                raise DeviceError(
                    f"a buffer of {nbytes:,} bytes exceeds the device's maxStorageBufferRange of "
                    f"{limit:,} bytes ({self.info.name})"
                )
            raw = self._maker.make(size, STORAGE_USAGE, STORAGE)
            self._live.add(raw)
        return Buffer(self, nbytes, raw)

    def create_program(self, words: bytes, layout: BindingLayout, entry: str = "main") -> Program:
        """A compute pipeline for SPIR-V `words` whose resources `layout` describes; cached, so
        asking again for the same words, layout and entry point returns the same Program."""
        data = check_words(words)
        key = (data, layout, entry)
        with self._lock:
            self._check_open()
            program = self._programs.get(key)
            if program is None:
                program = Program(
                    self.handle,
                    self.fn,
                    self.info.limits,
                    data,
                    layout,
                    entry,
                    push_descriptors=self.push_descriptors,
                    pipeline_cache=self.pipeline_cache.handle,
                )
                self._programs[key] = program
            return program

    def launch(
        self,
        program: Program,
        grid: Sequence[int] | int,
        buffers: Sequence[Buffer],
        args: bytes | bytearray | memoryview = b"",
    ) -> None:
        """Records a launch of `program` over `grid` logical invocations and returns at once.

        `buffers[i]` is bound at `layout.buffers[i].binding`; `args` is the argument block
        packed with `layout.pack` (the runtime writes the grid and each dispatch's base
        invocation into the layout's grid/base fields of its own copy). Launches run in the
        order they were recorded, each seeing what the earlier ones wrote. A grid dimension of 0
        dispatches nothing; one that is negative or >= 2**31 raises ValueError.
        """
        if PROFILERS:  # pk.profile() collects: time this launch (launch_profile.py)
            profiled_launch(self, program,
                            lambda: self._record_launch(program, grid, buffers, args))
            return
        with self._lock:
            self._check_open()
            self._launcher.launch(program, grid, buffers, args)
            if self._graph is not None:
                self._graph.record_launch(program, grid, buffers, args)

    def _record_launch(self, program: Program, grid: Sequence[int] | int,
                       buffers: Sequence[Buffer], args: bytes | bytearray | memoryview) -> None:
        """`launch` without its profiling test (the profiled path calls it)."""
        with self._lock:
            self._check_open()
            self._launcher.launch(program, grid, buffers, args)
            if self._graph is not None:
                self._graph.record_launch(program, grid, buffers, args)

    def sync(self) -> None:
        """Submits what was recorded and waits until the device has finished all of it."""
        with self._lock:
            self._check_open()
            if self._graph is not None:
                raise GraphError(
                    "sync() inside pk.graph(): it waits for the launches being recorded, and "
                    "a replay would not wait again; sync after the block"
                )
            self._batches.wait_all()
            if self._transfers is not None:
                self._transfers.sync()

    def flush(self) -> None:
        """Submits the launches recorded so far without waiting for them: the device starts
        on them while the host records more (launches are otherwise submitted in batches, when
        one fills or something waits). Inside `pk.graph()` it does nothing."""
        with self._lock:
            self._check_open()
            if self._graph is None:
                self._batches.submit()

    def record_graph(self) -> VulkanGraph:
        """Starts recording the launches and uploads made on this device into a graph
        (runtime/submit/graph.py) until its `end()`; they still run as they are made."""
        with self._lock:
            self._check_open()
            if self._graph is not None:
                raise GraphError("pk.graph() inside pk.graph(): graphs do not nest")
            graph = VulkanGraph(self)
            self._graphs.add(graph)
            self._graph = graph
            self._batches.hold_checks = True
            return graph

    @property
    def graph_recording(self) -> bool:
        """Whether a graph records the launches made on this device now."""
        return self._graph is not None

    def _end_graph(self, graph: VulkanGraph) -> None:
        with self._lock:
            if self._graph is graph:
                self._graph = None
                self._batches.hold_checks = False
            if not self._closed:
                graph.end()

    def _replay_graph(self, graph: VulkanGraph, submit: bool = True) -> None:
        """Executes `graph` again from the open batch, and submits the batch unless `submit`
        is False (more commands follow: `flush` submits them together)."""
        with self._lock:
            self._check_open()
            graph.replay()
            if submit:
                self._batches.submit()

    def pause_graph(self) -> VulkanGraph | None:
        """Stops recording into the graph that records now (returned; None if none) until
        `resume_graph`: what is launched meanwhile runs, unrecorded."""
        with self._lock:
            graph, self._graph = self._graph, None
            return graph

    def resume_graph(self, graph: VulkanGraph | None) -> None:
        """Records into `graph` again (what `pause_graph` returned)."""
        with self._lock:
            if graph is not None and not graph.released and graph.recording:
                self._graph = graph

    def copy_buffer(self, src: Buffer, src_offset: int, dst: Buffer, dst_offset: int,
                    nbytes: int) -> None:
        """Queues a copy of `nbytes` bytes from `src` (at byte `src_offset`) into `dst`, ordered
        after the launches recorded before it and before those after it, like a launch."""
        self._check_copy(src, src_offset, dst, dst_offset, nbytes)
        if not nbytes:
            return
        with self._lock:
            self._check_open()
            if self._graph is not None:
                self._graph.record_copy(src, src_offset, dst, dst_offset, nbytes)
            batch = self._batches.current()
            src.use_serial = dst.use_serial = dst.write_serial = batch.serial
            self._record_copy(batch, src._raw, src_offset, dst._raw, dst_offset, nbytes)
            self._batches.submit_if_full(batch)

    def _release_graph(self, graph: VulkanGraph) -> None:
        with self._lock:
            self._end_graph(graph)
            if not self._closed:
                graph.release()

    def after(self, serial: int, check: Callable[[], None]) -> None:
        """Runs `check` once the batch `serial` has finished (a launch's batch is the
        `use_serial` its buffers got), at the end of the next wait for the device's work
        (`sync`, reading a buffer, ...); an exception `check` raises is raised by that wait,
        after everything the wait did is accounted for. For reports from a launch: whatever
        went wrong surfaces where the results are waited for."""
        with self._lock:
            self._check_open()
            self._batches.after(serial, check)

    def timer(self) -> GpuTimer:
        """A context manager measuring the device time of the work recorded inside it:

            with device.timer() as t:
                device.launch(program, grid, buffers, args)
            print(t.elapsed_ns)      # waits for that work; GPU time between the timestamps
        """
        return GpuTimer(self)

    def stats(self) -> DeviceStats:
        """Counters of commands, barriers, submits, descriptor sets and memory (see
        `DeviceStats`)."""
        with self._lock:
            return DeviceStats(
                commands=self._batches.commands,
                barriers=self._batches.barriers,
                submits=self._batches.submits,
                descriptor_set_hits=self._set_cache.hits,
                descriptor_set_misses=self._set_cache.misses,
                memory=self.memory_stats(),
            )

    def memory_stats(self) -> MemoryStats:
        """What the memory allocator holds (see `MemoryStats`); buffers freed and kept for
        reuse count as `cached_bytes`, not `used_bytes`."""
        with self._lock:
            stats = self.allocator.stats()
            cached = self._recycled.bytes
            return dataclasses.replace(stats, used_bytes=stats.used_bytes - cached,
                                       cached_bytes=cached)

    def save_pipeline_cache(self) -> bool:
        """Writes the pipeline cache to disk now if it changed (it is also saved at close);
        True if a file was written."""
        with self._lock:
            self._check_open()
            return self.pipeline_cache.save()

    def close(self) -> None:
        """Waits (at most the timeout) for the device, then destroys everything made on it.

        If the device does not finish in time (a kernel that never ends), nothing is destroyed:
        vkDestroyDevice would block forever."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if not self._batches.drain():
                return
            if self._transfers is not None and not self._transfers.drain():
                return
            for graph in list(self._graphs):
                graph.destroy()
            self.pipeline_cache.save()
            for raw in list(self._live):
                self._maker.destroy(raw)
            self._live.clear()
            for program in self._programs.values():
                program.destroy()
            self._programs.clear()
            self._staging.trim()
            if self._transfers is not None:
                self._transfers.destroy()
            self._uniforms.destroy()
            self._set_cache.destroy()
            self._descriptors.destroy()
            self._queries.destroy()
            self.pipeline_cache.destroy()
            self._batches.destroy()
            self.allocator.destroy()
            self.fn.vkDestroyDevice(self.handle, ffi.NULL)
            self.handle = None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def hung(self) -> bool:
        """True once a wait timed out: the device may still be running a kernel, and refuses
        every use meanwhile. The next use (or `usable`) that finds the work finished clears it."""
        return self._batches.hung

    @property
    def usable(self) -> bool:
        """False once the device is closed, lost, or hung on work that still runs;
        `set_device` then opens a fresh device in its place."""
        with self._lock:
            return not (self._closed or self._batches.lost) and self._batches.recover()

    def disown(self, parent_pid: int) -> None:
        """Marks the device as the parent's, in a child made by os.fork(): its Vulkan objects
        are the parent's (the driver's threads did not come along), so using or destroying
        them here could hang. Every use raises DeviceError; close() does nothing."""
        self._lock = threading.RLock()  # another thread may have held it at the fork
        self._closed = True
        self._closed_reason = (
            f"device {self.info.name} belongs to the parent process (pid {parent_pid}): a "
            "process made by os.fork() cannot use its parent's Vulkan device, nor buffers made "
            f"on it. {FORK_ADVICE} instead."
        )

    @property
    def lost(self) -> bool:
        """True once a wait reported VK_ERROR_DEVICE_LOST."""
        return self._batches.lost

    # ---- used by Buffer ----

    def _upload(
        self, buf: Buffer, data: memoryview, offset: int, non_blocking: bool = False,
        queued: bool = False,
    ) -> None:
        """`queued`: always through a staged copy in the open batch (ordered like a launch,
        nothing waits), also where the memory is mapped."""
        with self._lock:
            self._check_open()
            if self._graph is not None:
                self._graph.record_upload(buf, data, offset)  # recorded, and done below
            raw = buf._raw
            transfers = self._transfers
            if not queued and transfers is not None and transfers.takes(data.nbytes):
                self._batches.submit()  # the kernels recorded so far run while it copies
                transfers.upload(buf, raw, data, offset, non_blocking)
                return
            if not queued and raw.mapped is not None and \
                    buf.use_serial <= self._batches.completed:
                if transfers is not None:
                    transfers.wait_use(raw)  # a DMA copy may still write it
                ffi.memmove(raw.mapped + offset, data, data.nbytes)
                return
            # Staged, also where the memory is mapped but a launch recorded or running may
            # still read the old contents (a buffer fresh from the cache keeps its last use):
            # writing through the mapping would stall the host until the GPU drains. Each
            # piece's copy is queued behind earlier launches like a launch, and
            # nothing waits; the staging buffer returns to the pool when its batch has run.
            # Both are noted before the copy is recorded, so that an interrupt in between
            # leaves nothing pending unclaimed.
            for start in range(0, data.nbytes, CHUNK):
                piece = data[start : start + CHUNK]
                staging = self._staging.get(piece.nbytes)
                ffi.memmove(staging.mapped, piece, piece.nbytes)
                batch = self._batches.current()
                buf.use_serial = buf.write_serial = batch.serial
                self._batches.defer(batch.serial, lambda s=staging: self._staging.release(s))
                self._record_copy(batch, staging, 0, raw, offset + start, piece.nbytes)
                self._batches.submit_if_full(batch)

    def _download(self, buf: Buffer, out: memoryview, offset: int) -> None:
        with self._lock:
            self._check_open()
            if self._graph is not None:
                self._graph.check_read(buf, "reading a buffer on the host")
            raw = buf._raw
            transfers = self._transfers
            if transfers is not None and transfers.takes(out.nbytes):
                self._batches.submit()  # the kernels recorded so far run while it copies
                transfers.download(buf, raw, out, offset)
                return
            if raw.mapped is not None and self.allocator.storage_host_cached:
                if transfers is not None:
                    transfers.wait_use(raw)
                self._batches.wait(buf.write_serial)
                ffi.memmove(out, raw.mapped + offset, out.nbytes)
                return
            # Staged, also where storage is mapped but not HOST_CACHED: reading a discrete
            # GPU's BAR through the mapping runs at ~20 MB/s (H200), a copy at GB/s. Pieces
            # are double-buffered: the device copies one while the host reads the one before.
            pending: deque[tuple[memoryview, RawBuffer, int]] = deque()
            try:
                for start in range(0, out.nbytes, CHUNK):
                    piece = out[start : start + CHUNK]
                    staging = self._staging.get(piece.nbytes)
                    batch = self._batches.current()
                    buf.use_serial = batch.serial
                    pending.append((piece, staging, batch.serial))
                    self._record_copy(batch, raw, offset + start, staging, 0, piece.nbytes)
                    self._batches.submit()
                    if len(pending) == 2:
                        self._read_piece(*pending.popleft())
                while pending:
                    self._read_piece(*pending.popleft())
            finally:
                # after an error, copies may still be running: release their buffers after them
                for _, staging, serial in pending:
                    self._batches.defer(serial, lambda s=staging: self._staging.release(s))

    def _read_piece(self, piece: memoryview, staging: RawBuffer, serial: int) -> None:
        """Waits for the copy into `staging`, then copies it out into `piece`."""
        try:
            self._batches.wait(serial)
            ffi.memmove(piece, staging.mapped, piece.nbytes)
        except BaseException:
            self._batches.defer(serial, lambda: self._staging.release(staging))
            raise
        self._staging.release(staging)

    # ---- used by GpuTimer ----

    def _timer_start(self) -> tuple[object, int]:
        with self._lock:
            self._check_open()
            if self._graph is not None:
                raise GraphError("device.timer() inside pk.graph(): timestamps are not "
                                 "recorded; time g.replay() instead")
            pair = self._queries.take()
            batch = self._batches.current()
            batch.commands += 1  # so that a batch holding only timestamps is still submitted
            self.fn.vkCmdResetQueryPool(batch.cmd, pair[0], pair[1], 2)
            self.fn.vkCmdWriteTimestamp(batch.cmd, BOTTOM, pair[0], pair[1])
            return pair

    def _timer_stop(self, pair: tuple[object, int]) -> int:
        with self._lock:
            self._check_open()
            batch = self._batches.current()
            batch.commands += 1
            self.fn.vkCmdWriteTimestamp(batch.cmd, BOTTOM, pair[0], pair[1] + 1)
            return batch.serial

    def _timer_read(self, pair: tuple[object, int], serial: int) -> int:
        with self._lock:
            self._check_open()
            self._batches.wait(serial)
            ticks = self._queries.read(pair)
            self._queries.give_back(pair)
            return ticks

    def _timer_discard(self, pair: tuple[object, int], serial: int) -> None:
        with self._lock:
            if not self._closed:
                self._batches.defer(serial, lambda: self._queries.give_back(pair))

    def _release(self, raw: RawBuffer, use_serial: int, nbytes: int) -> None:
        with self._lock:
            if self._closed or self._pins.adopt(raw, use_serial):
                return  # a graph that holds it destroys it (runtime/submit/graph.py)
            evicted = self._recycled.keep(raw, use_serial, nbytes)
            if evicted is None:
                evicted = [(raw, use_serial)]
            for old, serial in evicted:
                self._destroy_after(old, serial)

    def _destroy_after(self, raw: RawBuffer, serial: int) -> None:
        """Destroys `raw` once batch `serial` has finished, and the DMA copies that use it."""
        transfers = self._transfers
        if transfers is None:
            self._batches.defer(serial, lambda: self._destroy_raw(raw))
        else:
            self._batches.defer(
                serial, lambda: transfers.defer_free(raw, lambda: self._destroy_raw(raw)))

    # ---- internals ----

    def _record_copy(
        self,
        batch: Batch,
        src: RawBuffer,
        src_offset: int,
        dst: RawBuffer,
        dst_offset: int,
        nbytes: int,
    ) -> None:
        self._batches.command_begun(batch)
        self._batches.order_copy(batch, src, dst)
        region = self._copy_region
        region.srcOffset, region.dstOffset, region.size = src_offset, dst_offset, nbytes
        self.fn.vkCmdCopyBuffer(batch.cmd, src.handle, dst.handle, 1, region)

    def _destroy_raw(self, raw: RawBuffer) -> None:
        if self._closed:
            return
        self._live.discard(raw)
        self._set_cache.forget_buffer(raw.handle)
        self._maker.destroy(raw)

    def _reclaim(self) -> None:
        # buffers freed while launches still used them are released once those finish, and
        # those kept for reuse go too: memory runs short
        self._batches.wait_all()
        if self._transfers is not None:
            self._transfers.sync()
            self._transfers.trim()
        for raw, _ in self._recycled.drain():
            self._destroy_after(raw, 0)  # at once: everything has finished
        self._staging.trim()

    def _check_open(self) -> None:
        if self._closed or self._batches.hung:
            self._refuse_use()

    def _refuse_use(self) -> None:
        """Raises the DeviceError that says why the device cannot be used, unless a hung
        device has recovered meanwhile."""
        if self._closed:
            raise DeviceError(self._closed_reason)
        if not self._batches.recover():
            raise DeviceError(
                f"device {self.info.name} is unusable: work submitted to it did not finish "
                f"within {self._batches.timeout:g} s (PYKERN_TIMEOUT) and is still running (a "
                f"kernel may not terminate). {self._reopen_advice()}; what was made on this "
                "device stays unusable until that work finishes."
            )

    def _reopen_advice(self) -> str:
        return f"set_device({self.info.index}) (pk.set_device) opens a fresh device"

    def _create(self, physical_device: object, info: DeviceInfo) -> object:
        extensions = sorted(info.extensions)
        # with the validation layer on, nothing it predates is queried or enabled (the
        # instance's layers decide, whatever an open_device() config says)
        validate = self._instance.validation is not None
        supported = query_supported(physical_device, extensions, validate)
        features, structs, enable = build_enable_chain(supported, extensions, validate)
        if (
            self.transfer_queue is not None
            and self.config.transfer_import
            and IMPORT_EXTENSION in info.extensions
        ):
            enable.append(IMPORT_EXTENSION)
        queue_infos, priorities = self._queue_create_infos()
        ext_array, ext_strings = _vk.cstr_array(enable)
        create_info = ffi.new(
            "VkDeviceCreateInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                "pNext": features,
                "queueCreateInfoCount": len(queue_infos),
                "pQueueCreateInfos": queue_infos,
                "enabledExtensionCount": len(enable),
                "ppEnabledExtensionNames": ext_array,
            },
        )
        handle = ffi.new("VkDevice*")
        _vk.check(
            lib.vkCreateDevice(physical_device, create_info, ffi.NULL, handle),
            f"vkCreateDevice ({info.name})",
        )
        del structs, ext_strings, priorities  # referenced by create_info until the call returned
        self.enabled_extensions = tuple(enable)
        self.api_version = API_VERSION
        return handle[0]


    def _queue_create_infos(self) -> tuple[object, object]:
        """The VkDeviceQueueCreateInfo array: the compute queue, and the DMA queue if one is
        used (a second queue of the compute family, or one of a family of its own); and the
        priorities it points to."""
        counts = {self.family: 1}
        if self.transfer_queue is not None:
            family, index = self.transfer_queue
            counts[family] = max(counts.get(family, 0), index + 1)
        priorities = ffi.new("float[2]", [1.0, 1.0])
        infos = ffi.new("VkDeviceQueueCreateInfo[]", len(counts))
        for info, (family, count) in zip(infos, counts.items()):
            info.sType = lib.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
            info.queueFamilyIndex = family
            info.queueCount = count
            info.pQueuePriorities = priorities
        return infos, priorities


def _compute_family(physical_device: object, name: str) -> tuple[int, int]:
    """The first queue family with compute, and its timestampValidBits."""
    count = ffi.new("uint32_t*")
    lib.vkGetPhysicalDeviceQueueFamilyProperties(physical_device, count, ffi.NULL)
    families = ffi.new("VkQueueFamilyProperties[]", count[0])
    lib.vkGetPhysicalDeviceQueueFamilyProperties(physical_device, count, families)
    for i in range(count[0]):
        if families[i].queueFlags & lib.VK_QUEUE_COMPUTE_BIT:
            return i, families[i].timestampValidBits
    raise DeviceError(f"{name} has no compute queue")
