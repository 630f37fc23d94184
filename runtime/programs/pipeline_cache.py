"""A VkPipelineCache kept on disk between runs, so the driver skips recompiling shaders.

The file lives in the cache directory (next to the compile cache), named by the device's
vendor and device ids and its pipelineCacheUUID: a driver update changes the UUID and so the
file. It holds an envelope of our own (magic, SHA-256 of the payload) around the driver's data,
which starts with Vulkan's header (length, version, vendor id, device id, UUID). Before the data
reaches the driver both are checked; a file that fails either check, or cannot be read, is
ignored (the cache starts empty and is rewritten at the next save).

The directory is created with mode 0700; it and the file are checked where they are opened
(`files.PrivateDirectory`: no symbolic links, this user's, writable by nobody else). Saving
writes a temporary file and renames it into place, so a reader never sees half a file;
concurrent processes simply race to write a complete one.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..vulkan.objects import create
from ..files import PrivateDirectory
from ..vulkan.info import DeviceInfo

MAGIC = b"PKPIPE01"
MAX_FILE_BYTES = 1 << 30  # a larger file is not a cache of ours
DIGEST = 32
HEADER = struct.Struct("<IIII16s")  # VkPipelineCacheHeaderVersionOne
HEADER_VERSION_ONE = 1


def file_name(info: DeviceInfo) -> str:
    return (
        f"pipelines-{info.vendor_id:04x}-{info.device_id:04x}-{info.pipeline_cache_uuid}.bin"
    )


def header_matches(data: bytes, info: DeviceInfo) -> bool:
    """Whether `data` starts with a version-one Vulkan pipeline cache header for `info`."""
    if len(data) < HEADER.size:
        return False
    size, version, vendor, device, uuid = HEADER.unpack_from(data)
    return (
        HEADER.size <= size <= len(data)
        and version == HEADER_VERSION_ONE
        and vendor == info.vendor_id
        and device == info.device_id
        and uuid.hex() == info.pipeline_cache_uuid
    )


def wrap(data: bytes) -> bytes:
    """The file contents for the driver's cache `data`."""
    return MAGIC + hashlib.sha256(data).digest() + data


def unwrap(contents: bytes, info: DeviceInfo) -> bytes | None:
    """The driver's data in a file's `contents`, or None when anything does not check out."""
    if not contents.startswith(MAGIC) or len(contents) < len(MAGIC) + DIGEST:
        return None
    digest = contents[len(MAGIC) : len(MAGIC) + DIGEST]
    data = contents[len(MAGIC) + DIGEST :]
    if hashlib.sha256(data).digest() != digest or not header_matches(data, info):
        return None
    return data


class PipelineCache:
    """The VkPipelineCache of one device, loaded from `directory` (None: memory only)."""

    def __init__(
        self, vk_device: object, fn: object, info: DeviceInfo, directory: Path | None
    ) -> None:
        self._dev, self._fn, self._info = vk_device, fn, info
        self._directory = (
            PrivateDirectory(directory, "the pipeline cache is") if directory is not None else None
        )
        if self._directory is not None and not self._directory.usable:
            self._directory = None  # refused at start: memory only
        self._name = file_name(info)
        initial = self._load()
        self.loaded_bytes = len(initial)
        self._saved = hashlib.sha256(initial).digest()
        blob = ffi.new("char[]", initial) if initial else ffi.NULL
        self.handle = create(
            fn.vkCreatePipelineCache, vk_device, "VkPipelineCacheCreateInfo",
            {
                "sType": lib.VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                "initialDataSize": len(initial),
                "pInitialData": blob,
            },
            "VkPipelineCache",
        )

    @property
    def path(self) -> Path | None:
        """The cache's file, or None when the cache is kept in memory only."""
        return None if self._directory is None else self._directory.path / self._name

    def data(self) -> bytes:
        """What the driver's cache holds now."""
        size = ffi.new("size_t*")
        _vk.check(
            self._fn.vkGetPipelineCacheData(self._dev, self.handle, size, ffi.NULL),
            "vkGetPipelineCacheData",
        )
        if size[0] == 0:
            return b""
        blob = ffi.new("char[]", size[0])
        _vk.check(
            self._fn.vkGetPipelineCacheData(self._dev, self.handle, size, blob),
            "vkGetPipelineCacheData",
        )
        return bytes(ffi.buffer(blob, size[0]))

    def save(self) -> bool:
        """Writes the cache to its file if it changed since it was loaded or saved; True if
        written. Failing to write is a warning, never an error."""
        if self._directory is None or self.handle is None:
            return False
        data = self.data()
        digest = hashlib.sha256(data).digest()
        if digest == self._saved or not header_matches(data, self._info):
            return False
        if not self._directory.write(self._name, wrap(data)):
            return False
        self._saved = digest
        return True

    def destroy(self) -> None:
        if self.handle is not None:
            self._fn.vkDestroyPipelineCache(self._dev, self.handle, ffi.NULL)
            self.handle = None

    def _load(self) -> bytes:
        if self._directory is None:
            return b""
        contents = self._directory.read(self._name, MAX_FILE_BYTES)
        if contents is None:
            return b""
        return unwrap(contents, self._info) or b""
