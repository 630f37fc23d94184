"""Recording launches: grid checks, splitting into dispatches, descriptors, push constants.

This is the hot path of the runtime (every kernel call goes through `Launcher.launch`), so it
calls raw cffi function pointers and patches structs built once per program instead of
building new ones. It records a barrier only where the launch depends on an earlier command
(see batch.py), and skips rebinding what the launch before it bound when nothing changed.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from itertools import product
from typing import TYPE_CHECKING

from ..vulkan._vk import ffi, lib
from .batch import Batch, BatchQueue
from ..memory.buffer import MIN_SIZE
from .descriptors import DescriptorAllocator, DescriptorSetCache, UniformArena
from ..grid import GRID_LIMIT, normalize_grid
from ..programs.program import Program

if TYPE_CHECKING:
    from ..memory.buffer import Buffer

COMPUTE = lib.VK_PIPELINE_BIND_POINT_COMPUTE
COMPUTE_STAGE = lib.VK_SHADER_STAGE_COMPUTE_BIT
_U32 = struct.Struct("<I")

__all__ = ["GRID_LIMIT", "Dispatch", "Launcher", "normalize_grid", "plan_dispatches"]

Dispatch = tuple[tuple[int, int, int], tuple[int, int, int]]  # (base invocation, group counts)


def plan_dispatches(
    grid: tuple[int, int, int], workgroup: tuple[int, int, int], max_groups: tuple[int, int, int]
) -> list[Dispatch]:
    """The dispatches covering `grid`: ceil(grid/workgroup) groups per dimension, cut into
    pieces of at most `max_groups`; each with the index of its first invocation."""
    groups = [-(-g // w) for g, w in zip(grid, workgroup, strict=True)]
    if 0 in groups:
        return []
    if groups[0] <= max_groups[0] and groups[1] <= max_groups[1] and groups[2] <= max_groups[2]:
        return [((0, 0, 0), (groups[0], groups[1], groups[2]))]
    pieces = [
        [(start, min(m, g - start)) for start in range(0, g, m)]
        for g, m in zip(groups, max_groups, strict=True)
    ]
    return [
        ((x[0] * workgroup[0], y[0] * workgroup[1], z[0] * workgroup[2]), (x[1], y[1], z[1]))
        for z, y, x in product(pieces[2], pieces[1], pieces[0])
    ]


class Launcher:
    """Records launches of programs into the batch queue of one device."""

    def __init__(
        self,
        device: object,
        fn: object,
        vk_device: object,
        queue: BatchQueue,
        descriptors: DescriptorAllocator,
        set_cache: DescriptorSetCache,
        uniforms: UniformArena,
        max_groups: tuple[int, int, int],
    ) -> None:
        self._device = device
        self._fn, self._dev = fn, vk_device
        self._queue, self._descriptors, self._uniforms = queue, descriptors, uniforms
        self._set_cache = set_cache
        self.max_groups = max_groups  # a test may lower it to exercise splitting cheaply
        self._set = ffi.new("VkDescriptorSet[1]")
        self._dynamic_offset = ffi.new("uint32_t[1]")

    def launch(
        self, program: Program, grid: Sequence[int] | int, buffers: Sequence[Buffer],
        args: bytes | bytearray | memoryview,
    ) -> None:
        """Records one launch (see `Device.launch`): everything is checked before anything is
        recorded, and a launch repeated binds only what changed."""
        g0, g1, g2 = grid = normalize_grid(grid)
        wg, limit = program.workgroup, self.max_groups
        n0, n1, n2 = -(-g0 // wg[0]), -(-g1 // wg[1]), -(-g2 // wg[2])
        dispatches = None  # one dispatch with base 0, the common case
        if n0 > limit[0] or n1 > limit[1] or n2 > limit[2]:
            dispatches = self._split(program, grid)
        queue = self._queue
        # From here on the launch changes the program's descriptor writes and block and records
        # binds of its own, so the open batch stops claiming that what a launch bound is still
        # bound, until this launch is recorded whole. An exception at any point (a refused
        # buffer, out of memory, a KeyboardInterrupt between two bytecodes) leaves no false
        # claim behind, and the next launch binds what it needs.
        recording = queue.recording
        was_bound = False
        if recording is not None:
            was_bound = recording.bound is program
            recording.bound = None
        epoch = queue.epoch
        args, hazard, same_buffers = self._checked(program, buffers, args, epoch)
        if n0 == 0 or n1 == 0 or n2 == 0:
            return
        if program.uses_uniform:
            self._reserve_uniforms(program, len(dispatches) if dispatches else 1)
        # the block lives in a C buffer of the program (we hold the device lock): push
        # constants read it without a per-launch conversion
        block = program.block_view
        same_block = dispatches is None and args == program.last_args and grid == program.last_grid
        if program.block_size and not same_block:
            self._write_block(program, block, args, grid)
        batch = queue.recording or queue.current()
        # what the launch before bound is still bound only in the batch it was recorded in
        # (`recording` may have been submitted by the uniform reservation)
        current = was_bound and batch is recording
        queue.command_begun(batch)
        self._mark_uses(program, buffers, batch, epoch, hazard)
        if batch.pipeline is not program.pipeline:
            self._bind_pipeline(program, batch)
        # What the previous command of this batch bound is still bound if it was a launch of
        # this program (`current`): an identical launch repeated skips rebinding buffers and
        # arguments.
        if program.uses_uniform:
            program.last_args = None  # each dispatch has its own block
            self._record_uniform(program, batch, block, dispatches or [((0, 0, 0), (n0, n1, n2))])
        elif dispatches is None:
            if not (current and same_buffers):
                self._bind_buffers(program, batch)
            if program.block_size and not (current and same_block):
                self._push_block(program, batch)
            self._fn.vkCmdDispatch(batch.cmd, n0, n1, n2)
            batch.bound = program
        else:
            self._record_split(program, batch, block, dispatches, current and same_buffers)
        queue.submit_if_full(batch)

    def _split(self, program: Program, grid: tuple[int, int, int]) -> list[Dispatch]:
        """The dispatches of a grid with more workgroups than the device takes in one."""
        dispatches = plan_dispatches(grid, program.workgroup, self.max_groups)
        if program.base_offsets is None:
            raise ValueError(
                f"grid {grid} needs {len(dispatches)} dispatches (more workgroups "
                f"than the device's limit {self.max_groups}) but the layout has no base fields"
            )
        return dispatches

    def _checked(
        self, program: Program, buffers: Sequence[Buffer], args: bytes | bytearray | memoryview,
        epoch: int,
    ) -> tuple[bytes | bytearray | memoryview, bool, bool]:
        """Refuses a program of another device, a wrong number of buffers, a short block, a
        buffer freed or of another device. Points the program's descriptor writes at the
        buffers that changed since its last launch and finds out whether the launch conflicts
        with a command of the current `epoch` (RAW, WAW, WAR). Returns the block cut to the
        layout's size (bytes counted, whatever `args` is), the hazard, and whether the
        buffers are those of the program's last launch."""
        if program.vk_device is not self._dev or program.pipeline is None:
            raise ValueError("the program was not created on this device (or was destroyed)")
        n_buffers = program.n_buffers
        if len(buffers) != n_buffers:
            raise ValueError(f"the program binds {n_buffers} buffers; {len(buffers)} given")
        size = program.block_size
        if type(args) is not bytearray and type(args) is not bytes:
            args = memoryview(args).cast("B")  # lengths below count bytes
        if len(args) != size:
            if len(args) < size:
                raise ValueError(
                    f"the argument block is {len(args)} bytes; the layout needs {size}"
                )
            args = memoryview(args)[:size]
        device, writes_mask = self._device, program.writes_mask
        last_raws = program.last_raws
        hazard = False
        same_buffers = True
        for i in range(n_buffers):
            buf = buffers[i]
            if getattr(buf, "device", None) is not device:
                raise ValueError(f"buffer {i} ({buf!r}) does not belong to this device")
            raw = buf._raw
            if raw is None:
                raise ValueError(f"buffer {i} was freed")
            if last_raws[i] is not raw:
                same_buffers = False
                info = program.info_list[i]
                info.buffer = raw.handle
                info.range = buf.nbytes or MIN_SIZE
                last_raws[i] = raw  # after the write it records
            if raw.write_epoch == epoch or (writes_mask[i] and raw.read_epoch == epoch):
                hazard = True
        return args, hazard, same_buffers

    @staticmethod
    def _write_block(
        program: Program, block: object, args: bytes | bytearray | memoryview,
        grid: tuple[int, int, int],
    ) -> None:
        """Copies `args` into the program's block and writes the grid into its grid fields."""
        program.last_args = None  # the block no longer holds them
        block[:] = args  # type: ignore[index]
        if program.grid_packer is not None:
            packer, at = program.grid_packer
            packer.pack_into(block, at, grid[0], grid[1], grid[2])
        elif program.grid_offsets is not None:
            for off, g in zip(program.grid_offsets, grid, strict=True):
                _U32.pack_into(block, off, g)
        program.last_grid = grid
        program.last_args = bytes(args)

    def _mark_uses(
        self, program: Program, buffers: Sequence[Buffer], batch: Batch, epoch: int,
        hazard: bool,
    ) -> None:
        """Records the barrier a hazard needs (it opens a new epoch), and notes what the launch
        reads and writes in `epoch` for the hazard tracking of later commands (see batch.py)."""
        serial = batch.serial
        if hazard:
            self._queue.record_barrier(batch)
            epoch += 1
        reads_mask, writes_mask = program.reads_mask, program.writes_mask
        for i in range(program.n_buffers):
            buf = buffers[i]
            buf.use_serial = serial
            raw = buf._raw
            if reads_mask[i]:
                raw.read_epoch = epoch
            if writes_mask[i]:
                raw.write_epoch = epoch
                buf.write_serial = serial

    def _reserve_uniforms(self, program: Program, dispatches: int) -> None:
        """Room for the blocks of a launch whose block is a uniform buffer. It may allocate
        memory, which may wait for the device: called before recording starts."""
        self._uniforms.reserve(
            self._queue.current().uniform_chunks, program.uniform_stride * dispatches
        )

    def _bind_pipeline(self, program: Program, batch: Batch) -> None:
        batch.pipeline = None  # until the bind has returned
        self._fn.vkCmdBindPipeline(batch.cmd, COMPUTE, program.pipeline)
        batch.pipeline = program.pipeline

    def _push_block(self, program: Program, batch: Batch) -> None:
        self._fn.vkCmdPushConstants(
            batch.cmd, program.pipeline_layout, COMPUTE_STAGE, 0, program.block_size,
            program.block_data,
        )

    def _record_split(
        self, program: Program, batch: Batch, block: object, dispatches: list[Dispatch],
        bound: bool,
    ) -> None:
        """Dispatches of a split launch with push constants: each with its own base."""
        if not bound:
            self._bind_buffers(program, batch)
        program.last_args = None  # the block will hold the last dispatch's base
        for base, counts in dispatches:
            self._pack_base(program, block, base)
            self._push_block(program, batch)
            self._fn.vkCmdDispatch(batch.cmd, counts[0], counts[1], counts[2])

    def _bind_buffers(self, program: Program, batch: Batch) -> None:
        """Binds the storage buffers whose descriptors sit in `program.buffer_infos`."""
        if program.n_writes == 0:
            return
        if program.push_descriptors:
            self._fn.vkCmdPushDescriptorSetKHR(
                batch.cmd, COMPUTE, program.pipeline_layout, 0, program.n_writes, program.writes
            )
            return
        self._set[0] = self._descriptor_set(program, batch)
        self._fn.vkCmdBindDescriptorSets(
            batch.cmd, COMPUTE, program.pipeline_layout, 0, 1, self._set, 0, ffi.NULL
        )

    def _descriptor_set(self, program: Program, batch: Batch) -> object:
        """A set holding the buffers of `program.buffer_infos` (and the uniform chunk): from
        the cache, or else a fresh one from the batch's pools."""
        infos = program.buffer_infos
        key = (program, *(infos[i].buffer for i in range(program.n_writes)))
        vk_set = self._set_cache.get(key, program, batch.serial)
        if vk_set is not None:
            return vk_set
        vk_set = self._descriptors.allocate(batch.descriptor_pools, program)
        writes = program.writes
        for i in range(program.n_writes):
            writes[i].dstSet = vk_set
        self._fn.vkUpdateDescriptorSets(self._dev, program.n_writes, writes, 0, ffi.NULL)
        return vk_set

    def _record_uniform(
        self, program: Program, batch: object, block: object, dispatches: list[Dispatch]
    ) -> None:
        """Dispatches whose argument block lives in a uniform buffer: one block per dispatch
        (each with its own base), written to mapped memory of the batch's uniform chunk."""
        fn, cmd, size = self._fn, batch.cmd, program.block_size
        stride = program.uniform_stride
        chunk, first = self._uniforms.allocate(batch.uniform_chunks, stride * len(dispatches))
        info = program.buffer_infos[program.n_buffers]
        info.buffer = chunk.raw.handle
        if not program.push_descriptors:
            info.offset = 0
            self._set[0] = self._descriptor_set(program, batch)
        for k, (base, counts) in enumerate(dispatches):
            at = first + k * stride
            if len(dispatches) > 1:
                self._pack_base(program, block, base)
            ffi.memmove(chunk.raw.mapped + at, program.block_data, size)
            if program.push_descriptors:
                info.offset = at
                fn.vkCmdPushDescriptorSetKHR(
                    cmd, COMPUTE, program.pipeline_layout, 0, program.n_writes, program.writes
                )
            else:
                self._dynamic_offset[0] = at
                fn.vkCmdBindDescriptorSets(
                    cmd, COMPUTE, program.pipeline_layout, 0, 1, self._set, 1, self._dynamic_offset
                )
            fn.vkCmdDispatch(cmd, counts[0], counts[1], counts[2])

    @staticmethod
    def _pack_base(program: Program, block: object, base: tuple[int, int, int]) -> None:
        if program.base_packer is not None:
            packer, at = program.base_packer
            packer.pack_into(block, at, base[0], base[1], base[2])
        else:
            for off, b in zip(program.base_offsets, base, strict=True):
                _U32.pack_into(block, off, b)
