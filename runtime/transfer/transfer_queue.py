"""`TransferQueue`: copy commands submitted to the device's DMA (transfer) queue, each submit
signalling the next value of a timeline semaphore; `Timeline`, that semaphore.

The compute queue signals a timeline of its own with each batch's serial (see transfer.py), so
a copy can wait, on the device, for the batch whose kernels last wrote (or read) its buffer,
and a kernel's batch for the copy that filled its buffer: no host round trip on either side.
Every command buffer begins with a transfer-to-transfer barrier (copies on this queue are
ordered among themselves, e.g. a download after an upload of the same buffer) and ends with a
transfer-to-host one (the host reads what the copies wrote once the timeline says so).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..vulkan.objects import DeviceQueue, TimelineSubmit, command_pool, timestamp_pool
from ..errors import DeviceError

TRANSFER_STAGE = lib.VK_PIPELINE_STAGE_TRANSFER_BIT
BOTTOM = lib.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT
WAIT_SLICE_NS = 50_000_000  # longest single semaphore wait: how soon a Ctrl-C is delivered
SEMAPHORE_FUNCTIONS = [
    "vkCreateSemaphore",
    "vkDestroySemaphore",
    "vkWaitSemaphores",
    "vkGetSemaphoreCounterValue",
]


class Timeline:
    """A timeline semaphore (initial value 0) and the highest value it is known to have reached."""

    def __init__(self, vk_device: object, fn: object) -> None:
        self._dev, self._fn = vk_device, fn
        type_info = ffi.new(
            "VkSemaphoreTypeCreateInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                "semaphoreType": lib.VK_SEMAPHORE_TYPE_TIMELINE,
                "initialValue": 0,
            },
        )
        info = ffi.new(
            "VkSemaphoreCreateInfo*",
            {"sType": lib.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, "pNext": type_info},
        )
        self.handles = ffi.new("VkSemaphore[1]")
        _vk.check(
            fn.vkCreateSemaphore(vk_device, info, ffi.NULL, self.handles), "vkCreateSemaphore"
        )
        self.handle = self.handles[0]
        self.completed = 0
        self._counter = ffi.new("uint64_t*")
        self._values = ffi.new("uint64_t[1]")
        self._wait_info = ffi.new(
            "VkSemaphoreWaitInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                "semaphoreCount": 1,
                "pSemaphores": self.handles,
                "pValues": self._values,
            },
        )

    def reached(self, value: int) -> bool:
        """Whether the semaphore has reached `value` (asks the driver only when not known)."""
        if value <= self.completed:
            return True
        _vk.check(
            self._fn.vkGetSemaphoreCounterValue(self._dev, self.handle, self._counter),
            "vkGetSemaphoreCounterValue",
        )
        self.completed = max(self.completed, self._counter[0])
        return value <= self.completed

    def wait(self, value: int, timeout: float) -> None:
        """Returns once the semaphore reached `value`; DeviceError after `timeout` seconds. Waits
        in slices, so that a Ctrl-C is delivered between two."""
        if value <= self.completed:
            return
        self._values[0] = value
        deadline = time.monotonic() + timeout
        while True:
            result = self._fn.vkWaitSemaphores(self._dev, self._wait_info, WAIT_SLICE_NS)
            if result != _vk.TIMEOUT:
                _vk.check(result, "vkWaitSemaphores")
                self.completed = max(self.completed, value)
                return
            if time.monotonic() >= deadline:
                raise DeviceError(
                    f"a transfer did not finish within {timeout:g} s (PYKERN_TIMEOUT)"
                )

    def destroy(self) -> None:
        self._fn.vkDestroySemaphore(self._dev, self.handle, ffi.NULL)


class _Commands:
    """One command pool with its command buffer, the value its submit signals, and what is
    released once that value is reached."""

    __slots__ = ("pool", "cmd", "cmd_array", "value", "garbage")

    def __init__(self, vk_device: object, fn: object, family: int) -> None:
        self.pool, self.cmd_array = command_pool(vk_device, fn, family)
        self.cmd = self.cmd_array[0]
        self.value = 0
        self.garbage: list[Callable[[], None]] = []


class TransferQueue:
    """Records copy commands into command buffers of their own and submits each to the DMA
    queue, after a value of the compute queue's timeline; callers hold the device lock."""

    def __init__(self, queue: DeviceQueue, compute: Timeline, timeout: float) -> None:
        self._dev, self._fn, self._queue, self.family = queue
        self.compute = compute
        self.timeout = timeout
        self.timeline = Timeline(self._dev, self._fn)
        self.submitted = 0  # the value the latest submit signals
        self.compute_waits = 0  # submits that waited for compute work still running
        self.trace: TimestampTrace | None = None  # timestamps around each submit, when set
        self._in_flight: deque[_Commands] = deque()
        self._idle: list[_Commands] = []
        self._all: list[_Commands] = []
        self._begin_info = ffi.new(
            "VkCommandBufferBeginInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                "flags": lib.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
            },
        )
        self._order = _memory_barrier(
            lib.VK_ACCESS_TRANSFER_WRITE_BIT,
            lib.VK_ACCESS_TRANSFER_READ_BIT | lib.VK_ACCESS_TRANSFER_WRITE_BIT,
        )
        self._to_host = _memory_barrier(
            lib.VK_ACCESS_TRANSFER_WRITE_BIT, lib.VK_ACCESS_HOST_READ_BIT
        )
        self._submit = TimelineSubmit(compute.handles, TRANSFER_STAGE, self.timeline.handles)

    def submit(
        self,
        record: Callable[[object], None],
        after_compute: int = 0,
        release: Callable[[], None] | None = None,
    ) -> int:
        """Records `record(cmd)` (copy commands) into a command buffer and submits it to start
        once the compute timeline has reached `after_compute` (0: at once); returns the value of
        this queue's timeline that signals its end. Submitted in order, ordered among each other.
        `release` runs once the copies have finished (at once if they were never submitted):
        noted before the submit, so that an interrupt after it cannot lose it."""
        fn = self._fn
        commands = self._take()
        if release is not None:
            commands.garbage.append(release)
        try:
            _vk.check(
                fn.vkBeginCommandBuffer(commands.cmd, self._begin_info), "vkBeginCommandBuffer"
            )
            self._barrier(commands.cmd, TRANSFER_STAGE, self._order)
            if self.trace is not None:
                self.trace.write(commands.cmd)
            record(commands.cmd)
            if self.trace is not None:
                self.trace.write(commands.cmd)
            self._barrier(commands.cmd, lib.VK_PIPELINE_STAGE_HOST_BIT, self._to_host)
            _vk.check(fn.vkEndCommandBuffer(commands.cmd), "vkEndCommandBuffer")
        except BaseException:
            self._give_back(commands)
            raise
        value = self.submitted + 1
        wait = 0 if self.compute.reached(after_compute) else 1
        self.compute_waits += wait
        info = self._submit.prepare(bool(wait), after_compute, value, commands.cmd_array)
        try:
            _vk.check(fn.vkQueueSubmit(self._queue, 1, info, ffi.NULL), "vkQueueSubmit")
        except DeviceError:
            self._give_back(commands)
            raise
        except BaseException:  # an interrupt as the submit returned: the work runs, track it
            self._track(commands, value)
            raise
        self._track(commands, value)
        return value

    def wait(self, value: int) -> None:
        """Returns once the copies up to timeline `value` have finished; releases what they held."""
        self.timeline.wait(value, self.timeout)
        self._retire()

    def done(self, value: int) -> bool:
        """Whether the copies up to `value` have finished (asks the driver without waiting)."""
        return self.timeline.reached(value)

    def defer(self, value: int, release: Callable[[], None]) -> None:
        """Runs `release` once the copies up to `value` have finished (at once if they have)."""
        if not self.timeline.reached(value):
            for commands in self._in_flight:
                if commands.value >= value:
                    commands.garbage.append(release)
                    return
        release()

    def drain(self) -> bool:
        """Waits (with the timeout) for every copy submitted; False when they did not finish."""
        try:
            self.wait(self.submitted)
        except DeviceError:
            return False
        return True

    def destroy(self) -> None:
        for commands in self._all:
            self._fn.vkDestroyCommandPool(self._dev, commands.pool, ffi.NULL)
        self._all.clear()
        self._idle.clear()
        self._in_flight.clear()
        if self.trace is not None:
            self.trace.destroy()
        self.timeline.destroy()

    def _give_back(self, commands: _Commands) -> None:
        """Returns unsubmitted commands to the idle list, running what they were to release."""
        garbage, commands.garbage = commands.garbage, []
        self._idle.append(commands)
        for release in garbage:
            release()

    def _track(self, commands: _Commands, value: int) -> None:
        commands.value = self.submitted = value
        self._in_flight.append(commands)

    def _take(self) -> _Commands:
        self._retire()
        if self._idle:
            commands = self._idle.pop()
        else:
            commands = _Commands(self._dev, self._fn, self.family)
            self._all.append(commands)
        _vk.check(self._fn.vkResetCommandPool(self._dev, commands.pool, 0), "vkResetCommandPool")
        return commands

    def _retire(self) -> None:
        in_flight = self._in_flight
        while in_flight and self.timeline.reached(in_flight[0].value):
            commands = in_flight.popleft()
            garbage, commands.garbage = commands.garbage, []
            self._idle.append(commands)
            for release in garbage:
                release()

    def _barrier(self, cmd: object, dst_stage: int, barrier: object) -> None:
        self._fn.vkCmdPipelineBarrier(
            cmd, TRANSFER_STAGE, dst_stage, 0, 1, barrier, 0, ffi.NULL, 0, ffi.NULL
        )


class TimestampTrace:
    """GPU timestamps written into command buffers, for tests and benchmarks that look at what
    ran when (did a copy on the DMA queue overlap a kernel on the compute queue?). Set as a
    `TransferQueue.trace`, it stamps the start and end of each submit; `write` stamps any
    command buffer (a compute batch's, say). Ticks of one device share one time base."""

    def __init__(self, vk_device: object, fn: object, capacity: int = 256) -> None:
        self._dev, self._fn, self.capacity = vk_device, fn, capacity
        self.pool = timestamp_pool(vk_device, fn, capacity)
        self.count = 0
        # reset from the host (hostQueryReset, core in 1.2): vkCmdResetQueryPool is not
        # allowed on a transfer-only queue
        reset = _vk.load_device_functions(vk_device, ["vkResetQueryPool"]).vkResetQueryPool
        reset(vk_device, self.pool, 0, capacity)

    def write(self, cmd: object) -> int:
        """Records a timestamp (written once the commands before it have finished); its index."""
        index = self.count
        if index >= self.capacity:
            raise DeviceError(f"a TimestampTrace holds {self.capacity} timestamps")
        self.count += 1
        self._fn.vkCmdWriteTimestamp(cmd, BOTTOM, self.pool, index)
        return index

    def read(self) -> list[int]:
        """The ticks of every timestamp written (the work that wrote them must have finished)."""
        if not self.count:
            return []
        out = ffi.new("uint64_t[]", self.count)
        _vk.check(
            self._fn.vkGetQueryPoolResults(
                self._dev, self.pool, 0, self.count, ffi.sizeof(out), out, 8,
                lib.VK_QUERY_RESULT_64_BIT | lib.VK_QUERY_RESULT_WAIT_BIT,
            ),
            "vkGetQueryPoolResults",
        )
        return list(out)

    def destroy(self) -> None:
        self._fn.vkDestroyQueryPool(self._dev, self.pool, ffi.NULL)


def _memory_barrier(src: int, dst: int) -> object:
    return ffi.new(
        "VkMemoryBarrier*",
        {"sType": lib.VK_STRUCTURE_TYPE_MEMORY_BARRIER, "srcAccessMask": src, "dstAccessMask": dst},
    )
