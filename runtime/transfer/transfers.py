"""`Transfers`: uploads and downloads on the device's DMA queue, running while kernels run.

Where the device has a queue family for transfers only (TRANSFER without COMPUTE or GRAPHICS:
the copy engines of NVIDIA GPUs), host-device copies of `min_bytes` or more go there instead of
into the compute queue's batches (`pick_transfer_queue`); smaller ones keep the compute-queue
path, whose latency is lower. Devices without such a family (lavapipe) keep that path for
everything. Copies go in pieces of `piece_bytes` through pinned (host-visible, host-cached)
staging buffers, `depth` pieces in flight, the memcpy into or out of staging on several threads
(`ParallelCopy`); where VK_EXT_external_memory_host allows, the numpy array's own pages are
imported instead and the DMA engine reads or writes them directly (`HostImport`).

Sharing between the queue families: storage buffers are made VK_SHARING_MODE_CONCURRENT over
the compute and the transfer family (see `BufferMaker`), rather than exclusive with queue
family ownership transfers. An ownership transfer needs a release barrier recorded on the queue
that used the buffer last, before the other queue's acquire: a download would have to add a
release to the compute batch that wrote the buffer (already recorded, maybe submitted), and
every kernel after an upload an acquire per buffer, on top of the one global barrier the
hazard tracking of batch.py relies on. Buffers have no layouts and NVIDIA does not compress
them, so concurrent sharing costs nothing measurable there, and the semaphores below are the
whole of the synchronisation. Staging and imported buffers are used by the DMA queue alone.

Synchronisation, with two timeline semaphores: the compute queue signals each batch's serial
on `compute` (every batch, see `BatchQueue.submit_info_for`), the DMA queue its own values.

- An upload into buffer B waits, on the device, for compute serial `B.use_serial` (kernels
  still reading or writing the old contents). The open batch is submitted first, so that the
  launches recorded before the upload do not wait for it; every compute batch submitted after
  an upload waits for it (a semaphore wait: kernels then see what it wrote).
- A download of B waits for compute serial `B.write_serial` only: `t.numpy()` waits for the
  work that writes t, not for other kernels, which keep running while it copies.
- Copies on the DMA queue are ordered among themselves (a barrier begins each submit), and the
  last DMA value that used each buffer is kept: host access through a mapping and freeing a
  buffer wait for exactly that.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np

from ..vulkan._vk import ffi, lib
from ..vulkan.objects import DeviceQueue, TimelineSubmit, read_properties
from .host_import import HostImport, Imported
from .parallel_copy import ParallelCopy
from ..memory.staging import StagingPool
from .transfer_queue import Timeline, TransferQueue

if TYPE_CHECKING:
    from ..submit.batch import Batch, BatchQueue
    from ..memory.buffer import Buffer, BufferMaker, RawBuffer

MIB = 2**20
PIECE = 32 * MIB
DEPTH = 4
MIN_BYTES = 1 * MIB
NOT_TRANSFER_ONLY = lib.VK_QUEUE_COMPUTE_BIT | lib.VK_QUEUE_GRAPHICS_BIT
COMPUTE_STAGES = lib.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | lib.VK_PIPELINE_STAGE_TRANSFER_BIT

# Config.transfer_queue values
AUTO = "auto"  # a transfer-only family where the device has one, else the compute-queue path
OFF = "off"  # the compute-queue path always
COMPUTE = "compute"  # the DMA path on a queue of the compute family (tests on lavapipe)
MODES = (AUTO, OFF, COMPUTE)


def pick_transfer_queue(
    physical_device: object, compute_family: int, mode: str
) -> tuple[int, int] | None:
    """(family, queue index) of the queue transfers use under `mode`, or None for none (the
    compute-queue path). Under COMPUTE, the compute family's second queue where it has two,
    else its only queue, shared with the compute batches."""
    count = ffi.new("uint32_t*")
    lib.vkGetPhysicalDeviceQueueFamilyProperties(physical_device, count, ffi.NULL)
    families = ffi.new("VkQueueFamilyProperties[]", count[0])
    lib.vkGetPhysicalDeviceQueueFamilyProperties(physical_device, count, families)
    if mode == COMPUTE:
        return compute_family, 1 if families[compute_family].queueCount > 1 else 0
    if mode != AUTO:
        return None
    for i in range(count[0]):
        flags = families[i].queueFlags
        if flags & lib.VK_QUEUE_TRANSFER_BIT and not flags & NOT_TRANSFER_ONLY:
            return i, 0
    return None


def import_alignment(physical_device: object) -> int:
    """minImportedHostPointerAlignment of VK_EXT_external_memory_host."""
    ext = read_properties(
        physical_device, "VkPhysicalDeviceExternalMemoryHostPropertiesEXT",
        lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT)
    return int(ext.minImportedHostPointerAlignment)


class Transfers:
    """Host-device copies through the DMA queue of one device; callers hold the device lock."""

    def __init__(
        self,
        queue: DeviceQueue,
        batches: BatchQueue,
        maker: BufferMaker,
        timeout: float,
        host_import: HostImport | None = None,
    ) -> None:
        self._fn = queue.fn
        self.compute = Timeline(queue.device, queue.fn)
        self.queue = TransferQueue(queue, self.compute, timeout)
        self.staging = StagingPool(maker)
        self.copier = ParallelCopy()
        self.host_import = host_import
        self.piece_bytes, self.depth, self.min_bytes = PIECE, DEPTH, MIN_BYTES
        self._batches = batches
        self._last_use: dict[RawBuffer, int] = {}  # the last DMA value that used each buffer
        self._upload_value = 0  # the latest upload's: compute batches wait for it
        self.upload_waits = 0  # compute batches submitted to wait for an upload still running
        self._region = ffi.new("VkBufferCopy*")
        self._compute_submit = TimelineSubmit(self.queue.timeline.handles, COMPUTE_STAGES,
                                              self.compute.handles)
        batches.submit_info_for = self._submit_info

    def takes(self, nbytes: int) -> bool:
        """Whether a copy of `nbytes` bytes goes through the DMA queue."""
        return nbytes >= self.min_bytes

    # ---- uploads ----

    def upload(self, buf: Buffer, raw: RawBuffer, data: memoryview, offset: int,
               non_blocking: bool = False) -> None:
        """Copies `data` into `raw` at `offset`, after the kernels using `buf`. Returns once
        `data` may change: after the memcpy into staging (only the DMA goes on), or, where its
        pages were imported (not when `non_blocking`), after the DMA."""
        after = self._after(buf.use_serial)
        self._batches.submit()  # what was recorded before the upload does not wait for it
        src = np.frombuffer(data, np.uint8)
        value = None
        if self.host_import is not None and not non_blocking:
            value = self._upload_imported(src, raw, offset, after)
        if value is None:
            value = self._upload_staged(src, raw, offset, after, ring=not non_blocking)
        self._note(raw, value)
        self._upload_value = value

    def _upload_staged(self, src: np.ndarray, raw: RawBuffer, offset: int, after: int,
                       ring: bool) -> int:
        """Pieces through staging; with `ring`, at most `depth` in flight (the memcpy of one
        runs while the DMA engine copies the ones before), else all (non_blocking)."""
        in_flight: deque[int] = deque()
        value = 0
        for start in range(0, src.nbytes, self.piece_bytes):
            part = src[start : start + self.piece_bytes]
            if ring and len(in_flight) >= self.depth:
                self.queue.wait(in_flight.popleft())
            staging = self.staging.get(part.nbytes)
            try:
                self.copier.copy(_view(staging, part.nbytes), part)
            except BaseException:
                self.staging.release(staging)
                raise
            value = self._copy(staging.handle, 0, raw.handle, offset + start, part.nbytes, after,
                               lambda s=staging: self.staging.release(s))
            in_flight.append(value)
        return value

    def _upload_imported(self, src: np.ndarray, raw: RawBuffer, offset: int,
                         after: int) -> int | None:
        """The array's aligned interior straight from its pages, head and tail staged; waits
        for the DMA. None where nothing could be imported."""
        with self._imported_interior(src) as interior:
            if interior is None:
                return None
            imported, skip, length = interior
            value = self._copy(imported.handle, 0, raw.handle, offset + skip, length, after)
            for start, end in ((0, skip), (skip + length, src.nbytes)):
                if end > start:
                    value = self._upload_staged(src[start:end], raw, offset + start, after, True)
            self.queue.wait(value)  # the caller may change the array once this returns
        return value

    @contextlib.contextmanager
    def _imported_interior(self, array: np.ndarray) -> Iterator[tuple[Imported, int, int] | None]:
        """(imported buffer, skip, length) of the array's aligned interior for the block's
        copies, or None where nothing could be imported; the import is released after the
        latest DMA submit when the block ends (an error too: copies may still be running)."""
        assert self.host_import is not None
        interior = self.host_import.interior(array)
        if interior is None:
            yield None
            return
        try:
            yield interior
        finally:
            self.queue.defer(self.queue.submitted,
                             lambda: self.host_import.release(interior[0]))

    # ---- downloads ----

    def download(self, buf: Buffer, raw: RawBuffer, out: memoryview, offset: int) -> None:
        """Fills `out` from `raw` at `offset` once the kernels writing `buf` have finished."""
        after = self._after(buf.write_serial)
        recording = self._batches.recording
        if recording is not None and recording.serial <= buf.write_serial:
            self._batches.submit()
        dst = np.frombuffer(out, np.uint8)
        if self.host_import is None or not self._download_imported(dst, raw, offset, after):
            self._download_staged(dst, raw, offset, after)

    def _download_staged(self, dst: np.ndarray, raw: RawBuffer, offset: int, after: int) -> None:
        """Pieces through staging, `depth` in flight: the host copies one out while the DMA
        engine fills the next ones."""
        pending: deque[tuple[np.ndarray, RawBuffer, int]] = deque()
        try:
            for start in range(0, dst.nbytes, self.piece_bytes):
                part = dst[start : start + self.piece_bytes]
                staging = self.staging.get(part.nbytes)
                value = self._copy(raw.handle, offset + start, staging.handle, 0, part.nbytes,
                                   after)
                pending.append((part, staging, value))
                self._note(raw, value)
                if len(pending) >= self.depth:
                    self._read_piece(*pending.popleft())
            while pending:
                self._read_piece(*pending.popleft())
        finally:  # after an error, copies may still be running: release after them
            for _, staging, value in pending:
                self.queue.defer(value, lambda s=staging: self.staging.release(s))

    def _read_piece(self, part: np.ndarray, staging: RawBuffer, value: int) -> None:
        try:
            self.queue.wait(value)
            self.copier.copy(part, _view(staging, part.nbytes))
        except BaseException:
            self.queue.defer(value, lambda: self.staging.release(staging))
            raise
        self.staging.release(staging)

    def _download_imported(self, dst: np.ndarray, raw: RawBuffer, offset: int,
                           after: int) -> bool:
        """Straight into the array's aligned interior, head and tail staged; False where
        nothing could be imported."""
        with self._imported_interior(dst) as interior:
            if interior is None:
                return False
            imported, skip, length = interior
            value = self._copy(raw.handle, offset + skip, imported.handle, 0, length, after)
            self._note(raw, value)
            for start, end in ((0, skip), (skip + length, dst.nbytes)):
                if end > start:
                    self._download_staged(dst[start:end], raw, offset + start, after)
            self.queue.wait(value)
        return True

    # ---- ordering with the host and the compute queue ----

    def wait_use(self, raw: RawBuffer) -> None:
        """Waits for the DMA copies that use `raw` (before host access through a mapping)."""
        value = self._last_use.pop(raw, 0)
        if value:
            self.queue.wait(value)

    def defer_free(self, raw: RawBuffer, release: object) -> None:
        """Runs `release` once the DMA copies that use `raw` have finished."""
        self.queue.defer(self._last_use.pop(raw, 0), release)  # type: ignore[arg-type]

    def sync(self) -> None:
        """Waits for every copy submitted."""
        self.queue.wait(self.queue.submitted)

    def drain(self) -> bool:
        return self.queue.drain()

    def trim(self) -> None:
        self.staging.trim()

    def destroy(self) -> None:
        self.copier.close()
        self.staging.trim()
        self.queue.destroy()
        self.compute.destroy()

    def _after(self, serial: int) -> int:
        """The compute serial a copy must wait for; 0 when it has finished already."""
        return serial if serial > self._batches.completed else 0

    def _note(self, raw: RawBuffer, value: int) -> None:
        self._last_use[raw] = value
        if len(self._last_use) > 1024:  # forget the buffers whose copies have finished
            done = [r for r, v in self._last_use.items() if self.queue.done(v)]
            for r in done:
                del self._last_use[r]

    def _copy(self, src: object, src_offset: int, dst: object, dst_offset: int, nbytes: int,
              after: int, release: Callable[[], None] | None = None) -> int:
        """Submits one vkCmdCopyBuffer; the DMA timeline value of its end. `release` runs once
        it has finished."""
        region = self._region

        def record(cmd: object) -> None:
            region.srcOffset, region.dstOffset, region.size = src_offset, dst_offset, nbytes
            self._fn.vkCmdCopyBuffer(cmd, src, dst, 1, region)

        return self.queue.submit(record, after, release)

    def _submit_info(self, batch: Batch) -> object:
        """The VkSubmitInfo of a compute batch: signals its serial on the compute timeline,
        waits for the latest upload if that may still run."""
        pending = 0 if self.queue.done(self._upload_value) else self._upload_value
        self.upload_waits += pending > 0
        return self._compute_submit.prepare(pending > 0, pending, batch.serial, batch.cmd_array)


def _view(staging: RawBuffer, nbytes: int) -> np.ndarray:
    """The first `nbytes` bytes of a mapped staging buffer as a uint8 array."""
    return np.frombuffer(ffi.buffer(staging.mapped, nbytes), np.uint8)
