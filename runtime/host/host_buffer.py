"""`HostBuffer`: a buffer of the host device, plain host memory that kernels read and write
through its address.

It has the interface of a Vulkan `Buffer` (`upload`, `download`, `read_into`, `free`,
`nbytes`, `device`), so the tensor library cannot tell them apart. Launches on the host device
run to completion before `launch` returns, so host access needs no waiting. The memory is a
numpy byte array aligned to a cache line (what vector loads like), allocated uninitialised as
Vulkan memory is (large blocks freed before are reused: `HostDevice.create_buffer`), or an
existing numpy array's memory (`HostBuffer.wrapping`: zero-copy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..memory.buffer_access import BufferAccess

if TYPE_CHECKING:
    from .host_device import HostDevice

ALIGNMENT = 64


def aligned_bytes(nbytes: int) -> tuple[np.ndarray, int]:
    """`nbytes` uninitialised bytes whose address is a multiple of ALIGNMENT, and the address."""
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    address = raw.ctypes.data
    skip = -address % ALIGNMENT
    return raw[skip:skip + nbytes], address + skip


class HostBuffer(BufferAccess):
    """`nbytes` bytes of host memory owned by a `HostDevice`."""

    __slots__ = ("device", "nbytes", "_memory", "address", "use_serial", "write_serial",
                 "_owned", "version", "__weakref__")

    def __init__(self, device: HostDevice, nbytes: int,
                 memory: tuple[np.ndarray, int] | None = None, owned: bool = True) -> None:
        """`memory`: the bytes and their address (fresh ones when None)."""
        self.device = device
        self.nbytes = nbytes
        array, address = aligned_bytes(nbytes) if memory is None else memory
        self._memory: np.ndarray | None = array
        self._owned = owned  # the device's memory (reusable once freed), not a user's array
        # what kernels index from (0 for an empty buffer: nothing may be read through it)
        self.address = address if nbytes else 0
        self.use_serial = 0  # the Vulkan buffer's launch serials: host launches never pend
        self.write_serial = 0
        self.version = 0  # writes through the tensor API (pykern.autograd.version)

    @classmethod
    def wrapping(cls, device: HostDevice, array: np.ndarray) -> HostBuffer:
        """A buffer whose memory is `array`'s (C-contiguous, writable): kernels write it."""
        if not (array.flags.c_contiguous and array.flags.writeable):
            raise ValueError("a host buffer wraps a writable C-contiguous array only")
        return cls(device, array.nbytes, (array.reshape(-1).view(np.uint8), array.ctypes.data),
                   owned=False)

    def __repr__(self) -> str:
        state = "freed" if self._memory is None else f"{self.nbytes} bytes"
        return f"<HostBuffer {state} on {self.device.info.name}>"

    @property
    def freed(self) -> bool:
        return self._memory is None

    @property
    def memory(self) -> np.ndarray:
        """The buffer's bytes, as a uint8 array (raises ValueError once freed)."""
        if self._memory is None:
            raise ValueError("the buffer was freed")
        return self._memory

    def _write_bytes(self, view: memoryview, offset: int, non_blocking: bool = False) -> None:
        # host memory: the copy is done when this returns, non_blocking or not
        self.memory[offset:offset + view.nbytes] = np.frombuffer(view, np.uint8)
        graph = self.device._graph
        if graph is not None:  # a recorded graph (host_graph.py) does it again on replay
            graph.record_upload(self, view, offset)

    def _write_queued(self, view: memoryview, offset: int) -> None:
        self._write_bytes(view, offset)  # host launches never pend: in order as it is

    def _read_bytes(self, out: memoryview, offset: int) -> None:
        graph = self.device._graph
        if graph is not None:
            graph.check_read(self, "reading a buffer on the host")
        np.frombuffer(out, np.uint8)[:] = self.memory[offset:offset + out.nbytes]

    def free(self) -> None:
        """Releases the memory (launches on the host have all finished already)."""
        memory, self._memory = self._memory, None
        if memory is not None:
            self.device._released(self.nbytes, (memory, self.address) if self._owned else None)
            self.address = 0

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
