"""Host memory imported as a Vulkan buffer (VK_EXT_external_memory_host): the DMA engine reads
or writes a numpy array's own pages, with no memcpy through staging memory.

The driver pins the pages and maps them for the device; the pointer and size must be multiples
of minImportedHostPointerAlignment (4 KiB on NVIDIA). A numpy array rarely starts on such a
boundary, so only its aligned interior is imported (`span`); the caller stages the head and
tail. A driver may refuse an import (memory that is not plain anonymous pages, say): `wrap`
then answers None and the caller stages the whole transfer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..vulkan.objects import struct

if TYPE_CHECKING:
    import numpy as np

EXTENSION = "VK_EXT_external_memory_host"
HANDLE_TYPE = lib.VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT
USAGE = lib.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | lib.VK_BUFFER_USAGE_TRANSFER_DST_BIT
MIN_IMPORT = 16 * 2**20  # below this, pinning pages costs more than the memcpy it saves


class Imported:
    """A VkBuffer over `nbytes` bytes of host memory, and the VkDeviceMemory importing them."""

    __slots__ = ("handle", "memory", "nbytes")

    def __init__(self, handle: object, memory: object, nbytes: int) -> None:
        self.handle, self.memory, self.nbytes = handle, memory, nbytes


class HostImport:
    """Imports host memory as buffers on one device; callers hold the device lock."""

    def __init__(self, vk_device: object, fn: object, alignment: int) -> None:
        self._dev, self._fn = vk_device, fn
        self.alignment = max(alignment, 1)
        self._pointer_of = _vk.load_device_functions(
            vk_device, ["vkGetMemoryHostPointerPropertiesEXT"]
        ).vkGetMemoryHostPointerPropertiesEXT
        self._props = struct("VkMemoryHostPointerPropertiesEXT",
                             lib.VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT)
        self._external = struct("VkExternalMemoryBufferCreateInfo",
                                lib.VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                handleTypes=HANDLE_TYPE)
        self._buffer_info = struct("VkBufferCreateInfo", lib.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                   pNext=self._external, usage=USAGE,
                                   sharingMode=lib.VK_SHARING_MODE_EXCLUSIVE)
        self._import_info = struct("VkImportMemoryHostPointerInfoEXT",
                                   lib.VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
                                   handleType=HANDLE_TYPE)
        self._alloc_info = struct("VkMemoryAllocateInfo",
                                  lib.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  pNext=self._import_info)
        self._req = ffi.new("VkMemoryRequirements*")
        self.imports = 0  # imports made (for tests and statistics)

    def interior(self, array: np.ndarray) -> tuple[Imported, int, int] | None:
        """(imported buffer, skip, length): the aligned interior of `array`'s bytes imported,
        `skip` bytes after its start; None where nothing could be imported."""
        address = array.ctypes.data
        span = self.span(address, array.nbytes)
        imported = span and self.wrap(address + span[0], span[1])
        if not imported:
            return None
        return imported, span[0], span[1]

    def span(self, address: int, nbytes: int) -> tuple[int, int] | None:
        """(skip, length): the aligned interior of `nbytes` bytes at `address` starts `skip`
        bytes in and holds `length` bytes; None when it is too small to be worth importing."""
        a = self.alignment
        start = -(-address // a) * a
        end = (address + nbytes) // a * a
        if end - start < MIN_IMPORT:
            return None
        return start - address, end - start

    def wrap(self, address: int, nbytes: int) -> Imported | None:
        """A buffer over the (aligned) `nbytes` bytes at `address`, or None if the driver
        refuses. The memory must stay valid until `release`."""
        fn, dev = self._fn, self._dev
        pointer = ffi.cast("void*", address)
        props = self._props
        if _failed(self._pointer_of(dev, HANDLE_TYPE, pointer, props)) or not props.memoryTypeBits:
            return None
        self._buffer_info.size = nbytes
        handle = ffi.new("VkBuffer*")
        if _failed(fn.vkCreateBuffer(dev, self._buffer_info, ffi.NULL, handle)):
            return None
        fn.vkGetBufferMemoryRequirements(dev, handle[0], self._req)
        bits = props.memoryTypeBits & self._req.memoryTypeBits
        memory = ffi.new("VkDeviceMemory*")
        if bits and self._req.size <= nbytes:
            self._import_info.pHostPointer = pointer
            self._alloc_info.allocationSize = nbytes
            self._alloc_info.memoryTypeIndex = (bits & -bits).bit_length() - 1
            if not _failed(fn.vkAllocateMemory(dev, self._alloc_info, ffi.NULL, memory)):
                if not _failed(fn.vkBindBufferMemory(dev, handle[0], memory[0], 0)):
                    self.imports += 1
                    return Imported(handle[0], memory[0], nbytes)
                fn.vkFreeMemory(dev, memory[0], ffi.NULL)
        fn.vkDestroyBuffer(dev, handle[0], ffi.NULL)
        return None

    def release(self, imported: Imported) -> None:
        """Destroys the buffer and frees the import (no pending copy may use it)."""
        self._fn.vkDestroyBuffer(self._dev, imported.handle, ffi.NULL)
        self._fn.vkFreeMemory(self._dev, imported.memory, ffi.NULL)


def _failed(result: int) -> bool:
    """True when a Vulkan call failed (its result is an error code)."""
    return result < 0
