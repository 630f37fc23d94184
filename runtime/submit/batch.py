"""Command batches: launches are recorded into an open command buffer, submitted together, and
the batch's resources recycled once its fence signals.

Every batch has a serial number, increasing. A buffer remembers the serial of the last batch
that used it and of the last that wrote it; host access waits for exactly those batches
(hazard tracking at batch granularity). Batches are retired strictly in submission order, so
"serial N is complete" means every batch up to N is.

Between commands, hazards are tracked per buffer. The queue counts the barriers it recorded
(`epoch`; a wait for all work opens a new one too, as nothing before it can conflict any
more); each buffer notes the epoch in which a command last read it and last wrote it. A new
command needs a barrier only if it reads a buffer written in the current epoch (read after
write), or writes one read or written in it (write after read / write after write); otherwise
it may run concurrently with the commands before it. The barrier is one global
VkMemoryBarrier: it orders everything before it, so it opens a new epoch for every buffer at
once. Epochs run on across batches because a barrier also orders against commands of earlier
submissions, which may still be running.

Interrupts: Python delivers a KeyboardInterrupt (Ctrl-C) between bytecodes, which includes the
moment a C call returns, never inside one. Fence waits therefore run in short slices, and the
bookkeeping around each Vulkan call is ordered so that an interrupt after any of them leaves a
state that is true: work recorded is counted before it is recorded, a batch whose command
buffer was ended is submitted and tracked before the interrupt goes on, and a batch being
waited for stays in flight.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..vulkan.objects import DeviceQueue, command_pool
from .descriptors import DescriptorAllocator, DescriptorPool, UniformArena, UniformChunk
from ..errors import DeviceError, DeviceLost

if TYPE_CHECKING:
    from ..memory.buffer import RawBuffer

STAGES = lib.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | lib.VK_PIPELINE_STAGE_TRANSFER_BIT
WRITES = lib.VK_ACCESS_SHADER_WRITE_BIT | lib.VK_ACCESS_TRANSFER_WRITE_BIT
ACCESSES = WRITES | lib.VK_ACCESS_SHADER_READ_BIT | lib.VK_ACCESS_TRANSFER_READ_BIT
WAIT_SLICE_NS = 50_000_000  # longest single fence wait: how soon a Ctrl-C is delivered


class Batch:
    """One command buffer with its fence and what it holds until the fence signals."""

    __slots__ = (
        "serial",
        "pool",
        "cmd",
        "cmd_array",
        "fence",
        "fence_array",
        "submit_info",
        "descriptor_pools",
        "uniform_chunks",
        "garbage",
        "commands",
        "pipeline",
        "bound",
    )

    def __init__(self, vk_device: object, fn: object, family: int) -> None:
        self.pool, self.cmd_array = command_pool(vk_device, fn, family)
        self.fence_array = ffi.new("VkFence[1]")
        self.fence = None
        self.cmd = self.cmd_array[0]
        fence_info = ffi.new(
            "VkFenceCreateInfo*", {"sType": lib.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}
        )
        _vk.check(
            fn.vkCreateFence(vk_device, fence_info, ffi.NULL, self.fence_array), "vkCreateFence"
        )
        self.fence = self.fence_array[0]
        self.submit_info = ffi.new(
            "VkSubmitInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_SUBMIT_INFO,
                "commandBufferCount": 1,
                "pCommandBuffers": self.cmd_array,
            },
        )
        self.serial = 0
        self.descriptor_pools: list[DescriptorPool] = []
        self.uniform_chunks: list[UniformChunk] = []
        self.garbage: list[Callable[[], None]] = []
        self.commands = 0
        self.pipeline = None  # the pipeline bound last, to skip rebinding it
        self.bound = None  # the program whose buffers and block the last command bound

    def destroy(self, vk_device: object, fn: object) -> None:
        fn.vkDestroyFence(vk_device, self.fence, ffi.NULL)
        fn.vkDestroyCommandPool(vk_device, self.pool, ffi.NULL)


def _memory_barrier(dst_access: int) -> object:
    """A VkMemoryBarrier from compute and transfer writes to the accesses `dst_access`."""
    return ffi.new("VkMemoryBarrier*", {"sType": lib.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                        "srcAccessMask": WRITES, "dstAccessMask": dst_access})


class BatchQueue:
    """Records into one open batch, submits batches, waits for and retires them."""

    def __init__(
        self,
        queue: DeviceQueue,
        *,
        timeout: float,
        batch_launches: int,
        max_in_flight: int,
        descriptors: DescriptorAllocator,
        uniforms: UniformArena,
        hung_advice: str = "",
    ) -> None:
        self._dev, self._fn, self._queue, self._family = queue
        self.timeout = timeout
        self.hung_advice = hung_advice  # what a timeout error tells the user to do
        self.batch_launches = batch_launches
        self.max_in_flight = max_in_flight
        self.descriptors = descriptors
        self.uniforms = uniforms
        self.recording: Batch | None = None
        self.in_flight: deque[Batch] = deque()
        self._idle: list[Batch] = []
        self._all: list[Batch] = []
        self.next_serial = 1
        self.completed = 0  # every batch with a serial up to this one has finished
        self.hung = False  # a wait timed out: the GPU may still be running; never destroy
        self.lost = False  # a wait reported VK_ERROR_DEVICE_LOST
        self.epoch = 0  # the hazard epoch; see the module docstring
        self.barriers = 0  # barriers recorded so far
        self._checks: deque[Callable[[], None]] = deque()  # see `after`
        self.hold_checks = False  # while a graph records: checks wait until it has ended
        self._checking = False  # a check is running (see _run_checks)
        self.commands = 0  # commands (launches, copies) recorded so far
        self.submits = 0
        # the VkSubmitInfo of a batch, where semaphores join it (the DMA queue's, transfer.py);
        # None submits the batch's own
        self.submit_info_for: Callable[[Batch], object] | None = None
        self._begin_info = ffi.new(
            "VkCommandBufferBeginInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                "flags": lib.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
            },
        )
        # the barrier recorded where a hazard exists: compute/transfer writes before any later
        # compute/transfer access (and, through its stage masks, reads before later writes)
        self.barrier = _memory_barrier(ACCESSES)
        self._host_barrier = _memory_barrier(lib.VK_ACCESS_HOST_READ_BIT)

    # ---- recording ----

    def current(self) -> Batch:
        """The open batch, beginning one if none is open."""
        batch = self.recording
        if batch is not None:
            return batch
        batch = self._idle.pop() if self._idle else self._new_batch()
        _vk.check(self._fn.vkResetCommandPool(self._dev, batch.pool, 0), "vkResetCommandPool")
        _vk.check(
            self._fn.vkBeginCommandBuffer(batch.cmd, self._begin_info), "vkBeginCommandBuffer"
        )
        batch.serial = self.next_serial
        self.next_serial += 1
        batch.commands = 0
        batch.pipeline = batch.bound = None
        self.recording = batch
        return batch

    def record_barrier(self, batch: Batch) -> None:
        """Orders the next command after every earlier one (in this batch and the ones before)
        and opens a new epoch."""
        self._fn.vkCmdPipelineBarrier(
            batch.cmd, STAGES, STAGES, 0, 1, self.barrier, 0, ffi.NULL, 0, ffi.NULL
        )
        self.epoch += 1
        self.barriers += 1

    def order_copy(self, batch: Batch, src: RawBuffer, dst: RawBuffer) -> None:
        """Records a barrier if a copy from `src` to `dst` conflicts with an earlier command of
        the current epoch, and notes the copy's accesses."""
        epoch = self.epoch
        if src.write_epoch == epoch or dst.write_epoch == epoch or dst.read_epoch == epoch:
            self.record_barrier(batch)
            epoch += 1
        src.read_epoch = epoch
        dst.write_epoch = epoch

    def command_begun(self, batch: Batch) -> None:
        """Counts a command about to be recorded into `batch`. Counted first, so that a batch
        interrupted part way through recording one is still submitted by the next wait."""
        batch.commands += 1
        self.commands += 1

    def submit_if_full(self, batch: Batch) -> None:
        """Submits the batch once it holds `batch_launches` commands."""
        if batch.commands >= self.batch_launches:
            self.submit()

    # ---- submitting and waiting ----

    def submit(self) -> None:
        """Submits the open batch, if it recorded anything (it does not wait)."""
        batch = self.recording
        if batch is None or batch.commands == 0:
            return
        fn = self._fn
        # device writes must be made available to the host before a fence wait lets it read
        # (interrupted after this, the batch stays open: a second such barrier is harmless)
        fn.vkCmdPipelineBarrier(
            batch.cmd,
            STAGES,
            lib.VK_PIPELINE_STAGE_HOST_BIT,
            0,
            1,
            self._host_barrier,
            0,
            ffi.NULL,
            0,
            ffi.NULL,
        )
        ended = False
        try:
            _vk.check(fn.vkEndCommandBuffer(batch.cmd), "vkEndCommandBuffer")
            ended = True
            self._queue_submit(batch)
        except DeviceError:
            self._drop(batch)
            raise
        except BaseException:
            # An interrupt, delivered as vkEndCommandBuffer or vkQueueSubmit returned: the
            # command buffer takes no more commands, so it is submitted (if that had not
            # happened yet) and tracked before the interrupt goes on.
            if not ended:
                try:
                    self._queue_submit(batch)
                except DeviceError:
                    self._drop(batch)
                    raise
            self._track(batch)
            raise
        self._track(batch)
        self._retire_finished()
        while len(self.in_flight) > self.max_in_flight:
            self._retire(self.in_flight[0])

    def _queue_submit(self, batch: Batch) -> None:
        make_info = self.submit_info_for
        info = batch.submit_info if make_info is None else make_info(batch)
        _vk.check(self._fn.vkQueueSubmit(self._queue, 1, info, batch.fence), "vkQueueSubmit")

    def _track(self, batch: Batch) -> None:
        """Moves a submitted batch from recording to in flight (in this order: an interrupt as
        append returns must not leave a pending batch open for recording)."""
        self.recording = None
        self.in_flight.append(batch)
        self.submits += 1

    def _drop(self, batch: Batch) -> None:
        """Forgets the open batch whose submission failed: the work is lost; what it held is
        released so that the device stays usable."""
        self.recording = None
        self._recycle(batch)

    def wait(self, serial: int) -> None:
        """Returns once the batch `serial` (and every one before it) has finished, submitting
        the open batch if it is the one; then runs the checks due (see `after`)."""
        self._wait_for(serial)
        self._run_checks()

    def _wait_for(self, serial: int) -> None:
        if serial <= self.completed:
            return
        if self.recording is not None and self.recording.serial <= serial:
            self.submit()
        while self.in_flight and self.in_flight[0].serial <= serial:
            self._retire(self.in_flight[0])

    def wait_all(self) -> None:
        """Submits the open batch and waits for everything; then runs the checks due."""
        self.submit()
        while self.in_flight:
            self._retire(self.in_flight[0])
        if self.recording is None:
            # everything recorded has finished, so no later command can conflict with it: a
            # new epoch without a barrier (a buffer freed and reused whole keeps its epochs)
            self.epoch += 1
        self._run_checks()

    def after(self, serial: int, check: Callable[[], None]) -> None:
        """Runs `check` at the end of the first `wait` or `wait_all` once batch `serial` has
        finished (the batch retiring inside that wait or before it), after the queue's own
        bookkeeping: an exception `check` raises comes out of that wait, and the checks still
        due run at the next one. A check may use the device (read a buffer, say)."""
        self.defer(serial, lambda: self._checks.append(check))

    def _run_checks(self) -> None:
        # not inside a check: its own reads wait, and must not run the others one level
        # deeper each (thousands of checks due at one wait would pass the recursion limit)
        if self.hold_checks or self._checking:
            return
        checks = self._checks
        self._checking = True
        try:
            while checks:
                checks.popleft()()
        finally:
            self._checking = False

    def defer(self, serial: int, release: Callable[[], None]) -> None:
        """Runs `release` once batch `serial` has finished (at once if it has)."""
        if serial <= self.completed:
            release()
            return
        if self.recording is not None and self.recording.serial == serial:
            self.recording.garbage.append(release)
            return
        for batch in self.in_flight:
            if batch.serial >= serial:
                batch.garbage.append(release)
                return
        release()  # the batch was lost to a failed submit; nothing uses the object any more

    def recover(self) -> bool:
        """Whether the queue can be used: after a wait timed out (`hung`), True once the work
        that ran too long has finished after all (the queue is then as before), False while it
        still runs. Work queued behind it would wait for it, so nothing more may be waited for
        meanwhile."""
        if not self.hung or not self.in_flight:
            self.hung = False
            return True
        status = self._fn.vkGetFenceStatus(self._dev, self.in_flight[0].fence)
        if status == _vk.NOT_READY:
            return False
        self.hung = False  # the next wait retires it (or reports the device lost)
        return True

    def _retire_finished(self) -> None:
        while self.in_flight:
            status = self._fn.vkGetFenceStatus(self._dev, self.in_flight[0].fence)
            if status == _vk.NOT_READY:
                return
            _vk.check(status, "vkGetFenceStatus")
            self._retire(self.in_flight[0])

    def _retire(self, batch: Batch) -> None:
        """Waits for the oldest batch in flight, `batch`, and recycles it."""
        result = self._wait_fence(batch)
        if result == _vk.TIMEOUT:
            self.hung = True
            raise DeviceError(
                f"the device did not finish its work within {self.timeout:g} s (PYKERN_TIMEOUT): "
                f"a kernel may not terminate. {self.hung_advice}"
            )
        try:
            _vk.check(result, "vkWaitForFences")
        except DeviceLost:
            self.lost = True  # teardown then waits for the device as a whole, not this fence
            raise
        try:
            self.in_flight.popleft()
        finally:  # also when an interrupt comes as popleft returns: the batch must not leak
            self.completed = batch.serial
            _vk.check(self._fn.vkResetFences(self._dev, 1, batch.fence_array), "vkResetFences")
            self._recycle(batch)

    def _wait_fence(self, batch: Batch) -> int:
        """vkWaitForFences on the batch's fence for at most the timeout, in slices of
        WAIT_SLICE_NS: Python delivers a Ctrl-C between two slices, not only once the whole
        wait is over (the batch then stays in flight, waited for again by the next wait)."""
        wait, dev, fences = self._fn.vkWaitForFences, self._dev, batch.fence_array
        deadline = time.monotonic() + self.timeout
        while True:
            result = wait(dev, 1, fences, 1, WAIT_SLICE_NS)
            if result != _vk.TIMEOUT or time.monotonic() >= deadline:
                return result

    def _recycle(self, batch: Batch) -> None:
        self.descriptors.recycle(batch.descriptor_pools)
        self.uniforms.recycle(batch.uniform_chunks)
        garbage, batch.garbage = batch.garbage, []
        for release in garbage:
            release()
        self._idle.append(batch)

    def _new_batch(self) -> Batch:
        batch = Batch(self._dev, self._fn, self._family)
        self._all.append(batch)
        return batch

    # ---- teardown ----

    def drain(self) -> bool:
        """Waits (with the timeout) for all submitted work, dropping unsubmitted commands;
        False when the device did not finish in time."""
        if not self.recover():
            return False
        if self.recording is not None:
            batch, self.recording = self.recording, None
            self._fn.vkEndCommandBuffer(batch.cmd)
            self._recycle(batch)
        try:
            while self.in_flight and not self.lost:
                self._retire(self.in_flight[0])
        except DeviceError:
            if self.hung:
                return False
        if self.in_flight:
            # A lost device (or a wait that failed otherwise): the driver answers
            # vkDeviceWaitIdle at once when the device is really lost, and it makes sure
            # nothing runs any more before objects are destroyed.
            self._fn.vkDeviceWaitIdle(self._dev)
            while self.in_flight:
                self._recycle(self.in_flight.popleft())
        return True

    def destroy(self) -> None:
        for batch in self._all:
            batch.destroy(self._dev, self._fn)
        self._all.clear()
        self._idle.clear()
