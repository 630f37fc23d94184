"""Storage buffers: `Buffer`, what `Device.create_buffer` returns, and the raw VkBuffer helper."""

from __future__ import annotations

from typing import TYPE_CHECKING


from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from .buffer_access import BufferAccess
from .device_memory import STORAGE, Allocation, Allocator

if TYPE_CHECKING:
    from ..vulkan.device import Device

MIN_SIZE = 16  # Vulkan forbids zero-sized buffers; an empty Buffer still owns this much
STORAGE_USAGE = (
    lib.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
    | lib.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
    | lib.VK_BUFFER_USAGE_TRANSFER_DST_BIT
)


class RawBuffer:
    """A VkBuffer bound to memory of the allocator, and the hazard state of commands using it.

    `read_epoch` / `write_epoch` are the barrier epochs (see `BatchQueue.epoch`) in which a
    recorded command last read / wrote the buffer: a command that touches it in that same epoch
    conflicts with that access and needs a barrier first. Made by a `BufferMaker`.
    """

    __slots__ = ("handle", "allocation", "size", "read_epoch", "write_epoch")

    def __init__(self, handle: object, allocation: Allocation | None, size: int) -> None:
        self.handle = handle
        self.allocation = allocation
        self.size = size
        self.read_epoch = self.write_epoch = -1

    @property
    def mapped(self) -> object | None:
        """The `char*` of the persistent mapping, or None."""
        return self.allocation.mapped if self.allocation is not None else None


class BufferMaker:
    """Makes and destroys the RawBuffers of one device.

    The structs its Vulkan calls read and write are built once and reused: building them per
    buffer cost more than the calls themselves. Callers hold the device lock.
    """

    def __init__(
        self, vk_device: object, fn: object, allocator: Allocator, shared_by: tuple[int, ...] = ()
    ) -> None:
        self._dev, self._fn, self.allocator = vk_device, fn, allocator
        self._info = ffi.new(
            "VkBufferCreateInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                "sharingMode": lib.VK_SHARING_MODE_EXCLUSIVE,
            },
        )
        # storage buffers used by two queue families (compute and DMA) are shared by both
        # (VK_SHARING_MODE_CONCURRENT; transfer.py says why), all others exclusive
        self._families = ffi.new("uint32_t[]", list(shared_by)) if len(shared_by) > 1 else None
        self._handle = ffi.new("VkBuffer*")
        self._req = ffi.new("VkMemoryRequirements*")

    def make(self, size: int, usage: int, purpose: str) -> RawBuffer:
        """A buffer of `size` bytes for `usage`, bound to memory chosen for `purpose`."""
        fn, dev, info = self._fn, self._dev, self._info
        info.size = size
        info.usage = usage
        if self._families is not None:
            shared = purpose == STORAGE
            info.sharingMode = (
                lib.VK_SHARING_MODE_CONCURRENT if shared else lib.VK_SHARING_MODE_EXCLUSIVE
            )
            info.queueFamilyIndexCount = len(self._families) if shared else 0
            info.pQueueFamilyIndices = self._families if shared else ffi.NULL
        _vk.check(
            fn.vkCreateBuffer(dev, info, ffi.NULL, self._handle),
            f"vkCreateBuffer of {size:,} bytes",
        )
        raw = RawBuffer(self._handle[0], None, size)
        try:
            req = self._req
            fn.vkGetBufferMemoryRequirements(dev, raw.handle, req)
            raw.allocation = allocation = self.allocator.allocate(
                req.size, req.memoryTypeBits, purpose, req.alignment
            )
            _vk.check(
                fn.vkBindBufferMemory(dev, raw.handle, allocation.memory, allocation.offset),
                "vkBindBufferMemory",
            )
        except BaseException:
            self.destroy(raw)
            raise
        return raw

    def destroy(self, raw: RawBuffer) -> None:
        """Destroys the VkBuffer and frees its memory (no pending work may use it)."""
        if raw.handle is not None:
            self._fn.vkDestroyBuffer(self._dev, raw.handle, ffi.NULL)
            raw.handle = None
        if raw.allocation is not None:
            self.allocator.free(raw.allocation)
            raw.allocation = None


class Buffer(BufferAccess):
    """A storage buffer of `nbytes` bytes on a `Device`.

    Host access (`upload`, `download`, `read_into`) is ordered with launches: a read waits for
    the launches recorded before it that write the buffer, a write waits for (or is queued
    behind) the launches that use it. Where the device memory is host-visible the transfer is a
    memcpy through the persistent mapping; elsewhere it is staged through a host-visible buffer
    and a copy command.
    """

    # the serials of the last batch that used / wrote this buffer: the device waits for
    # exactly these before host access (per-buffer hazard tracking at batch granularity)
    __slots__ = ("device", "nbytes", "_raw", "use_serial", "write_serial", "version",
                 "__weakref__")

    def __init__(self, device: Device, nbytes: int, raw: RawBuffer) -> None:
        self.device = device
        self.nbytes = nbytes
        self._raw: RawBuffer | None = raw
        self.use_serial = 0
        self.write_serial = 0
        self.version = 0  # writes through the tensor API (pykern.autograd.version)

    def __repr__(self) -> str:
        state = "freed" if self._raw is None else f"{self.nbytes} bytes"
        return f"<Buffer {state} on {self.device.info.name}>"

    @property
    def handle(self) -> object:
        """The VkBuffer; raises ValueError once the buffer is freed."""
        if self._raw is None:
            raise ValueError("the buffer was freed")
        return self._raw.handle

    @property
    def freed(self) -> bool:
        return self._raw is None

    @property
    def descriptor_range(self) -> int:
        """Bytes a descriptor covers: exactly `nbytes` (so bounds checks are exact), but never 0."""
        return self.nbytes or MIN_SIZE

    def _write_bytes(self, view: memoryview, offset: int, non_blocking: bool = False) -> None:
        self.device._upload(self, view, offset, non_blocking)

    def _write_queued(self, view: memoryview, offset: int) -> None:
        self.device._upload(self, view, offset, queued=True)

    def _read_bytes(self, out: memoryview, offset: int) -> None:
        self.device._download(self, out, offset)

    def free(self) -> None:
        """Releases the buffer. Launches already recorded that use it still run: the memory is
        released once they have finished."""
        raw, self._raw = self._raw, None
        if raw is not None:
            self.device._release(raw, self.use_serial, self.nbytes)

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # noqa: BLE001 - interpreter shutdown, or a device already closed
            pass
