"""GPU timestamps: `Device.timer()` measures the device time of the work recorded inside it.

    with device.timer() as t:
        device.launch(...)           # any number of launches and copies
    t.elapsed_ns                     # waits for that work, then reads the two timestamps

A timestamp is written (vkCmdWriteTimestamp at BOTTOM_OF_PIPE: once every earlier command has
finished) when the block is entered and when it is left; the difference, masked to the queue's
valid bits, is scaled by the device's timestampPeriod. Timestamps ride in the batches like any
other command, so the timer costs nothing beyond two commands and adds no synchronisation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..vulkan.objects import timestamp_pool
from ..errors import DeviceError

if TYPE_CHECKING:
    from ..vulkan.device import Device

POOL_QUERIES = 256  # 128 timers per VkQueryPool
BOTTOM = lib.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT


class QueryPools:
    """Timestamp query pairs, handed out and returned once the timer that used them is read."""

    def __init__(self, vk_device: object, fn: object, valid_bits: int) -> None:
        self._dev, self._fn = vk_device, fn
        self.mask = (1 << valid_bits) - 1 if valid_bits < 64 else (1 << 64) - 1
        self.valid_bits = valid_bits
        self._pools: list[object] = []
        self._free: list[tuple[object, int]] = []
        self._results = ffi.new("uint64_t[2]")

    def take(self) -> tuple[object, int]:
        """A (query pool, first index) pair of two queries."""
        if self.valid_bits == 0:
            raise DeviceError("the device's compute queue has no timestamps (timestampValidBits 0)")
        if not self._free:
            pool = self._create_pool()
            self._free.extend((pool, i) for i in range(POOL_QUERIES - 2, -1, -2))
        return self._free.pop()

    def give_back(self, pair: tuple[object, int]) -> None:
        self._free.append(pair)

    def read(self, pair: tuple[object, int]) -> int:
        """Ticks between the two timestamps of `pair` (whose batch has finished)."""
        pool, first = pair
        _vk.check(
            self._fn.vkGetQueryPoolResults(
                self._dev,
                pool,
                first,
                2,
                ffi.sizeof(self._results),
                self._results,
                8,
                lib.VK_QUERY_RESULT_64_BIT | lib.VK_QUERY_RESULT_WAIT_BIT,
            ),
            "vkGetQueryPoolResults",
        )
        return (self._results[1] - self._results[0]) & self.mask

    def destroy(self) -> None:
        for pool in self._pools:
            self._fn.vkDestroyQueryPool(self._dev, pool, ffi.NULL)
        self._pools.clear()
        self._free.clear()

    def _create_pool(self) -> object:
        pool = timestamp_pool(self._dev, self._fn, POOL_QUERIES)
        self._pools.append(pool)
        return pool


class GpuTimer:
    """Device time of the work recorded between entering and leaving the `with` block.

    `elapsed_ns` / `elapsed_s` wait for that work to finish (and for nothing recorded later).
    A timer can be used once.
    """

    def __init__(self, device: Device) -> None:
        self._device = device
        self._pair: tuple[object, int] | None = None
        self._end_serial = 0
        self._ticks: int | None = None

    def __enter__(self) -> GpuTimer:
        if self._pair is not None or self._ticks is not None:
            raise RuntimeError("a GpuTimer measures one block; make a new one")
        self._pair = self._device._timer_start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._end_serial = self._device._timer_stop(self._pair)

    @property
    def elapsed_ns(self) -> float:
        """Nanoseconds of device time between the two timestamps."""
        if self._ticks is None:
            if self._pair is None or not self._end_serial:
                raise RuntimeError("the timer has not measured a block yet")
            self._ticks = self._device._timer_read(self._pair, self._end_serial)
            self._pair = None
        return self._ticks * self._device.info.limits.timestamp_period

    @property
    def elapsed_s(self) -> float:
        return self.elapsed_ns * 1e-9

    def __del__(self) -> None:
        pair, self._pair = self._pair, None
        if pair is not None and self._end_serial:
            try:
                self._device._timer_discard(pair, self._end_serial)
            except Exception:  # noqa: BLE001 - interpreter shutdown, or a device already closed
                pass
