"""Views: operators that only change a tensor's sizes, strides, offset or storage.

PyTorch's own CPU implementations of these never touch the elements (they make a tensor
sharing the storage, with other metadata), so they serve "pykern" tensors as they are: the
result shares the storage, and so the pykern buffer, exactly as PyTorch's view semantics say.
`resize_` and `set_` with a new storage need pykern memory and are written here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from pykern.torch import memory

_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def metadata_only(overload: torch._ops.OpOverload) -> Callable[..., object]:
    """`overload` run by PyTorch's CPU kernel, which only builds a tensor over the same
    storage."""
    def impl(*args: object, **kwargs: object) -> object:
        return overload.redispatch(_CPU, *args, **kwargs)
    impl.__name__ = overload.__name__
    return impl


def resize_(self: torch.Tensor, size: Sequence[int],
            memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """`resize_`: self gets `size` (row-major strides, or those of `memory_format`); where its
    storage is too small, self moves to a larger one holding the old bytes at the start."""
    size = list(size)
    if memory_format in (None, torch.contiguous_format, torch.preserve_format):
        stride = memory.contiguous_strides(size)
    else:
        stride = list(torch.empty(size, device="meta", memory_format=memory_format).stride())
    offset = self.storage_offset()
    needed = memory.storage_nbytes(size, stride, self.element_size(), offset)
    storage = self.untyped_storage()
    if needed > storage.nbytes():
        storage = _grown(storage, needed, self.device)
    memory._SET_STORAGE.redispatch(_CPU, self, storage, offset, size, stride)
    return self


def _grown(storage: torch.UntypedStorage, nbytes: int,
           device: torch.device) -> torch.UntypedStorage:
    """A new storage of `nbytes` bytes whose start is a copy of `storage`'s bytes."""
    old = storage._pk_buffer
    fresh = memory.empty_strided([nbytes], [1], torch.uint8, device)
    if storage.nbytes():
        old_bytes = memory.pk_view(memory.tensor_on(storage, [storage.nbytes()], [1], 0,
                                                    torch.uint8, device))
        memory.pk_view(fresh)[:storage.nbytes()] = old_bytes
    del old
    return fresh.untyped_storage()


def set_empty(self: torch.Tensor) -> torch.Tensor:
    """`set_()`: self becomes an empty tensor on a new empty storage."""
    fresh = memory.empty_strided([0], [1], self.dtype, self.device)
    memory._SET_STORAGE.redispatch(_CPU, self, fresh.untyped_storage(), 0, [0], [1])
    return self
