"""Recorded graphs on a Vulkan device: the launches (and uploads) made while a graph records
are recorded a second time into a secondary command buffer the graph owns, which `replay`
executes again from the device's open batch (`vkCmdExecuteCommands`), so that a replay and
the commands queued around it (a `pk.compile`d call's argument copies) go in one submit.

While a graph records, every launch still runs eagerly through the device's batches (the
block's results are ready after it, as without a graph); `VulkanGraph.record_launch` then
records the same launch into the graph's own command buffer, with its own copy of the argument
block, its own descriptor sets and uniform memory (the device's are recycled per batch), and
barriers from its own hazard tracking (the rule of batch.py, with epochs counted inside the
graph). The recording opens with a barrier against everything recorded before it and closes
with one against everything after it (and one making its writes visible to the host), so a
replay is ordered on its own wherever it lands in the queue: the device's hazard tracking only
opens a new epoch after it.

Every buffer a recorded command binds is pinned (`GraphPins`): a buffer freed meanwhile (a
temporary of an op) keeps its memory until the last graph holding it is released, so that no
later allocation can alias what a replay writes.

A replay belongs to the batch that executes it: the buffers its commands use get that batch's
serial as their use / write serial, so host reads and later launches wait for it exactly as
for eager work, and the graph lets go of its Vulkan objects only after the last such batch.

A graph may keep a log of what it records (`log`: (program, grid, buffers, argument block,
where) per launch; ("upload", offset, (buffer,), bytes, where) per upload; ("copy", (source
offset, destination offset, bytes), (source, destination), b"", where) per copy), where
`where` is what `locate` (a callable the layer above supplies) said at the time; `pk.compile`
compares the logs of two calls.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..vulkan.objects import command_pool
from .batch import ACCESSES, STAGES, WRITES
from ..memory.buffer import MIN_SIZE, RawBuffer
from .descriptors import DescriptorAllocator, DescriptorPool, UniformArena, UniformChunk
from ..errors import GraphError
from ..grid import normalize_grid
from .launch import plan_dispatches
from ..memory.device_memory import STAGING
from ..programs.program import Program
from ..memory.staging import USAGE as STAGING_USAGE

if TYPE_CHECKING:
    from ..memory.buffer import Buffer
    from ..vulkan.device import Device

COMPUTE = lib.VK_PIPELINE_BIND_POINT_COMPUTE
COMPUTE_STAGE = lib.VK_SHADER_STAGE_COMPUTE_BIT


class GraphPins:
    """The buffers that recorded graphs hold, counted per graph, and those of them whose owner
    freed them meanwhile (destroyed once the last graph holding them lets go)."""

    def __init__(self) -> None:
        self._counts: dict[RawBuffer, int] = {}
        self._orphans: dict[RawBuffer, int] = {}  # freed while pinned -> its use serial then

    def pin(self, raw: RawBuffer) -> None:
        self._counts[raw] = self._counts.get(raw, 0) + 1

    def adopt(self, raw: RawBuffer, use_serial: int) -> bool:
        """Whether a graph holds `raw`, which its owner frees now (the graph then destroys it
        when released)."""
        if raw not in self._counts:
            return False
        self._orphans[raw] = use_serial
        return True

    def unpin(self, raw: RawBuffer) -> int | None:
        """Lets go of one graph's hold; the serial after which `raw` may be destroyed where
        that was the last hold on a buffer its owner freed, else None."""
        count = self._counts.pop(raw) - 1
        if count:
            self._counts[raw] = count
            return None
        return self._orphans.pop(raw, None)


class VulkanGraph:
    """The command buffer of one `pk.graph()` block on a Vulkan device and what it holds.

    Made by `Device.record_graph`, which records into it until `end`; the device calls
    `record_launch` / `record_upload` / `record_copy` / `check_read` meanwhile (holding its
    lock)."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self._fn, self._dev = device.fn, device.handle
        self.launches = 0  # launches recorded
        self.last_serial = 0  # the batch serial of the last replay
        self.recording = True
        self.released = False
        # set by the layer above before the first launch (see the module docstring)
        self.log: list[tuple] | None = None
        self.locate: Callable[[], object] | None = None
        self.refuse_all_reads = False  # refuse every host read, not only of recorded writes
        self.created: set[int] | None = None  # ids of the buffers made meanwhile, if asked
        self._pool, self._cmd_array = self._begin_command_buffer()
        self.cmd = self._cmd_array[0]
        self._barrier = ffi.new(
            "VkMemoryBarrier*",
            {"sType": lib.VK_STRUCTURE_TYPE_MEMORY_BARRIER, "srcAccessMask": WRITES,
             "dstAccessMask": ACCESSES},
        )
        self._descriptors = DescriptorAllocator(self._dev, self._fn)
        self._pools: list[DescriptorPool] = []
        self._uniforms = UniformArena(
            device._maker, device.info.limits.min_uniform_buffer_offset_alignment)
        self._chunks: list[UniformChunk] = []
        self._staging: list[RawBuffer] = []
        self._set = ffi.new("VkDescriptorSet[1]")
        self._offset = ffi.new("uint32_t[1]")
        self._region = ffi.new("VkBufferCopy*")
        # hazard tracking inside the recording (see batch.py): epochs of the last read / write
        self._epoch = 0
        self._read_epoch: dict[RawBuffer, int] = {}
        self._write_epoch: dict[RawBuffer, int] = {}
        self._pinned: dict[RawBuffer, None] = {}
        self._written: set[RawBuffer] = set()
        self._uses: weakref.WeakKeyDictionary[Buffer, bool] = weakref.WeakKeyDictionary()
        self._marks: list[tuple[weakref.ref, bool]] = []
        self._pipeline: object = None
        self._record_barrier()  # against everything submitted before a replay

    def _begin_command_buffer(self) -> tuple[object, object]:
        """A command pool of the graph's and its one secondary command buffer, begun for
        executing again and again (also while an earlier replay still runs)."""
        fn, dev = self._fn, self._dev
        pool, cmd_array = command_pool(dev, fn, self.device.family, transient=False,
                                       secondary=True)
        try:
            # a compute-only secondary inherits nothing (no render pass), but must say so
            inheritance = ffi.new(
                "VkCommandBufferInheritanceInfo*",
                {"sType": lib.VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO},
            )
            begin = ffi.new(
                "VkCommandBufferBeginInfo*",
                {"sType": lib.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                 "flags": lib.VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
                 "pInheritanceInfo": inheritance},
            )
            _vk.check(fn.vkBeginCommandBuffer(cmd_array[0], begin), "vkBeginCommandBuffer")
        except BaseException:
            fn.vkDestroyCommandPool(dev, pool, ffi.NULL)
            raise
        return pool, cmd_array

    # ---- recording (the device holds its lock) ----

    def record_launch(
        self, program: Program, grid: Sequence[int] | int, buffers: Sequence[Buffer],
        args: bytes | bytearray | memoryview,
    ) -> None:
        """Records a launch that the device has just checked and run eagerly."""
        grid = normalize_grid(grid)
        dispatches = plan_dispatches(grid, program.workgroup, self.device._launcher.max_groups)
        if self.log is not None:
            block = bytes(memoryview(args).cast("B")[:program.block_size])
            self.log.append((program, grid, tuple(buffers), block,
                             self.locate() if self.locate else None))
        if not dispatches:
            return
        block = self._block(program, args, grid)
        raws = [buf._raw for buf in buffers]
        self._order(raws, program.writes_mask)
        if self._pipeline is not program.pipeline:
            self._fn.vkCmdBindPipeline(self.cmd, COMPUTE, program.pipeline)
            self._pipeline = program.pipeline
        for i, raw in enumerate(raws):
            # the writes the device's launcher patches too: it finds them as it left them
            info = program.info_list[i]
            info.buffer = raw.handle
            info.range = buffers[i].nbytes or MIN_SIZE
            program.last_raws[i] = raw
        if program.uses_uniform:
            self._dispatch_uniform(program, block, dispatches)
        else:
            self._dispatch_pushed(program, block, dispatches)
        self._note_uses(buffers, raws, program.reads_mask, program.writes_mask)
        self.launches += 1

    def record_upload(self, buf: Buffer, data: memoryview, offset: int) -> None:
        """Records the copy of `data` (kept in a staging buffer of the graph) into `buf`."""
        if self.log is not None:
            self.log.append(("upload", offset, (buf,), bytes(data),
                             self.locate() if self.locate else None))
        staging = self.device._maker.make(max(MIN_SIZE, data.nbytes), STAGING_USAGE, STAGING)
        self._staging.append(staging)
        ffi.memmove(staging.mapped, data, data.nbytes)
        raw = buf._raw
        self._order([raw], (True,))
        region = self._region
        region.srcOffset, region.dstOffset, region.size = 0, offset, data.nbytes
        self._fn.vkCmdCopyBuffer(self.cmd, staging.handle, raw.handle, 1, region)
        self._note_uses([buf], [raw], (False,), (True,))

    def record_copy(self, src: Buffer, src_offset: int, dst: Buffer, dst_offset: int,
                    nbytes: int) -> None:
        """Records a copy of `nbytes` bytes between two buffers."""
        if self.log is not None:
            self.log.append(("copy", (src_offset, dst_offset, nbytes), (src, dst), b"",
                             self.locate() if self.locate else None))
        raws = [src._raw, dst._raw]
        self._order(raws, (False, True))
        region = self._region
        region.srcOffset, region.dstOffset, region.size = src_offset, dst_offset, nbytes
        self._fn.vkCmdCopyBuffer(self.cmd, raws[0].handle, raws[1].handle, 1, region)
        self._note_uses([src, dst], raws, (True, False), (False, True))

    def check_read(self, buf: Buffer, what: str) -> None:
        """Refuses a host read of a buffer that a recorded command wrote: a replay would not
        read it again, and what the block decides from it would not be replayed."""
        if self.refuse_all_reads:
            raise GraphError(f"{what} inside a recorded function: a replay runs the kernels "
                             "again, not the Python that reads values and decides on them")
        if buf._raw in self._written:
            raise GraphError(
                f"{what} inside pk.graph(): it reads a result of the launches being recorded, "
                "and a replay re-runs the kernels, not the Python around them. Read results "
                "after the block (or after g.replay())."
            )

    def _block(self, program: Program, args: bytes | bytearray | memoryview,
               grid: tuple[int, int, int]) -> object:
        """A copy of the argument block (cut to the layout's size) with the grid written in."""
        size = program.block_size
        block = ffi.new("char[]", max(size, 1))  # commands copy it as they are recorded
        if size:
            view = ffi.buffer(block, size)
            view[:] = memoryview(args).cast("B")[:size]
            if program.grid_packer is not None:
                packer, at = program.grid_packer
                packer.pack_into(view, at, *grid)
            elif program.grid_offsets is not None:
                for off, g in zip(program.grid_offsets, grid, strict=True):
                    view[off:off + 4] = g.to_bytes(4, "little")
        return block

    @staticmethod
    def _pack_base(program: Program, block: object, base: tuple[int, int, int]) -> None:
        view = ffi.buffer(block, program.block_size)
        if program.base_packer is not None:
            packer, at = program.base_packer
            packer.pack_into(view, at, *base)
        else:
            for off, b in zip(program.base_offsets, base, strict=True):
                view[off:off + 4] = b.to_bytes(4, "little")

    def _order(self, raws: Sequence[RawBuffer], writes_mask: Sequence[bool]) -> None:
        """Records a barrier where a command touching `raws` conflicts with an earlier one of
        the current epoch (read after write, write after read or write)."""
        epoch = self._epoch
        reads, writes = self._read_epoch, self._write_epoch
        for raw, writes_it in zip(raws, writes_mask):
            if writes.get(raw) == epoch or (writes_it and reads.get(raw) == epoch):
                self._record_barrier()
                return

    def _record_barrier(self) -> None:
        self._fn.vkCmdPipelineBarrier(
            self.cmd, STAGES, STAGES, 0, 1, self._barrier, 0, ffi.NULL, 0, ffi.NULL
        )
        self._epoch += 1

    def _note_uses(self, buffers: Sequence[Buffer], raws: Sequence[RawBuffer],
                   reads_mask: Sequence[bool], writes_mask: Sequence[bool]) -> None:
        epoch = self._epoch
        for buf, raw, reads_it, writes_it in zip(buffers, raws, reads_mask, writes_mask):
            if raw not in self._pinned:
                self._pinned[raw] = None
                self.device._pins.pin(raw)
            if reads_it:
                self._read_epoch[raw] = epoch
            if writes_it:
                self._write_epoch[raw] = epoch
                self._written.add(raw)
            self._uses[buf] = self._uses.get(buf, False) or writes_it

    def _bind_set(self, program: Program) -> None:
        """A descriptor set of the graph's own pools written with the program's writes."""
        vk_set = self._descriptors.allocate(self._pools, program)
        writes = program.writes
        for i in range(program.n_writes):
            writes[i].dstSet = vk_set
        self._fn.vkUpdateDescriptorSets(self._dev, program.n_writes, writes, 0, ffi.NULL)
        self._set[0] = vk_set

    def _dispatch_pushed(self, program: Program, block: object, dispatches: list) -> None:
        """Dispatches whose block is pushed as constants, each with its own base."""
        fn, cmd = self._fn, self.cmd
        if program.n_writes:
            if program.push_descriptors:
                fn.vkCmdPushDescriptorSetKHR(
                    cmd, COMPUTE, program.pipeline_layout, 0, program.n_writes, program.writes)
            else:
                self._bind_set(program)
                fn.vkCmdBindDescriptorSets(
                    cmd, COMPUTE, program.pipeline_layout, 0, 1, self._set, 0, ffi.NULL)
        for base, counts in dispatches:
            if program.block_size:
                if len(dispatches) > 1:
                    self._pack_base(program, block, base)
                fn.vkCmdPushConstants(
                    cmd, program.pipeline_layout, COMPUTE_STAGE, 0, program.block_size, block)
            fn.vkCmdDispatch(cmd, counts[0], counts[1], counts[2])

    def _dispatch_uniform(self, program: Program, block: object, dispatches: list) -> None:
        """Dispatches whose block lives in the graph's uniform memory, one block each."""
        fn, cmd, size, stride = self._fn, self.cmd, program.block_size, program.uniform_stride
        chunk, first = self._uniforms.allocate(self._chunks, stride * len(dispatches))
        info = program.buffer_infos[program.n_buffers]
        info.buffer = chunk.raw.handle
        if not program.push_descriptors:
            info.offset = 0
            self._bind_set(program)
        for k, (base, counts) in enumerate(dispatches):
            at = first + k * stride
            if len(dispatches) > 1:
                self._pack_base(program, block, base)
            ffi.memmove(chunk.raw.mapped + at, block, size)
            if program.push_descriptors:
                info.offset = at
                fn.vkCmdPushDescriptorSetKHR(
                    cmd, COMPUTE, program.pipeline_layout, 0, program.n_writes, program.writes)
            else:
                self._offset[0] = at
                fn.vkCmdBindDescriptorSets(
                    cmd, COMPUTE, program.pipeline_layout, 0, 1, self._set, 1, self._offset)
            fn.vkCmdDispatch(cmd, counts[0], counts[1], counts[2])

    def end(self) -> None:
        """Closes the recording: a barrier against everything after a replay and one that
        makes its writes visible to the host, then vkEndCommandBuffer."""
        if not self.recording:
            return
        self.recording = False
        self._record_barrier()
        host = ffi.new(
            "VkMemoryBarrier*",
            {"sType": lib.VK_STRUCTURE_TYPE_MEMORY_BARRIER, "srcAccessMask": WRITES,
             "dstAccessMask": lib.VK_ACCESS_HOST_READ_BIT},
        )
        self._fn.vkCmdPipelineBarrier(
            self.cmd, STAGES, lib.VK_PIPELINE_STAGE_HOST_BIT, 0, 1, host, 0, ffi.NULL, 0, ffi.NULL
        )
        _vk.check(self._fn.vkEndCommandBuffer(self.cmd), "vkEndCommandBuffer")
        self._marks = [(weakref.ref(buf), writes) for buf, writes in self._uses.items()]
        self._uses = weakref.WeakKeyDictionary()
        self._read_epoch.clear()
        self._write_epoch.clear()
        self._written.clear()

    # ---- replaying and letting go ----

    def replay(self) -> None:
        """Executes the recording once more from the device's open batch, after everything
        recorded so far; the buffers it uses get the batch's serial (the device holds its
        lock). The caller submits the batch."""
        queue = self.device._batches
        batch = queue.current()
        queue.command_begun(batch)
        self._fn.vkCmdExecuteCommands(batch.cmd, 1, self._cmd_array)
        # a secondary leaves the primary's bindings undefined: the next launch binds anew
        batch.pipeline = batch.bound = None
        # the recording ends with a barrier against everything after it: a new epoch
        queue.epoch += 1
        serial = self.last_serial = batch.serial
        for ref, writes in self._marks:
            buf = ref()
            if buf is not None:
                buf.use_serial = serial
                if writes:
                    buf.write_serial = serial

    def release(self) -> None:
        """Lets go of everything the graph holds once its last replay has run (the device
        holds its lock and is open)."""
        if self.released:
            return
        self.released = True
        self.end()
        queue, serial = self.device._batches, self.last_serial
        queue.defer(serial, self.destroy)
        for raw in self._pinned:
            freed_at = self.device._pins.unpin(raw)
            if freed_at is not None:
                queue.defer(max(freed_at, serial), lambda r=raw: self.device._destroy_raw(r))
        self._pinned.clear()
        self._marks = []

    def destroy(self) -> None:
        """Destroys the graph's Vulkan objects (nothing may run them any more)."""
        if self._pool is None:
            return
        fn, dev = self._fn, self._dev
        fn.vkDestroyCommandPool(dev, self._pool, ffi.NULL)
        self._pool = None
        self._descriptors.destroy()
        self._uniforms.destroy()
        for raw in self._staging:
            self.device._maker.destroy(raw)
        self._staging.clear()
