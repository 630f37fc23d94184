"""The memory of the "pykern" device.

Every torch tensor on "pykern" is an ordinary PyTorch tensor (sizes, strides, storage offset,
autograd metadata: all PyTorch's own) whose storage is a pykern device buffer. The storage is
made with an address of its own in a reserved range (so that PyTorch's aliasing and overlap
checks, which compare data pointers, see distinct memory where it is distinct) and carries the
pykern buffer as an attribute; views made by PyTorch share the storage and so the buffer. The
buffer is freed when the last tensor using the storage is gone.

`pk_view(t)` is the `pk.Tensor` over exactly t's elements (same buffer, shape, strides and
offset): what every operator implementation computes on. `from_pk(p)` is the reverse.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import torch

import pykern as pk
from pykern.torch import devices, dtypes

_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_SET_STORAGE = torch.ops.aten.set_.source_Storage_storage_offset
_AS_STRIDED = torch.ops.aten.as_strided.default

# the fake addresses of storages: a range no host allocation uses, never reused, aligned as
# CUDA's allocator aligns (some code checks the alignment of data pointers)
_ALIGN = 256
_FIRST_ADDRESS = 1 << 52
_address_base = [_FIRST_ADDRESS]

# id(pykern buffer) -> the torch storage holding it (weakly), so that one buffer is one storage
_STORAGES: dict[int, weakref.ref] = {}


class _Shell(torch.Tensor):
    """Only makes the first TensorImpl of a device and dtype; every tensor is a plain
    torch.Tensor made from one of these (see `_template`)."""

    @classmethod
    def __torch_dispatch__(cls, func: object, types: object, args: tuple = (),
                           kwargs: dict | None = None) -> object:
        raise AssertionError(f"pykern's template tensor reached {func}")


_TEMPLATES: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}


def _template(device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """An empty tensor on `device` of `dtype`, whose TensorImpl new tensors copy."""
    key = (device, dtype)
    t = _TEMPLATES.get(key)
    if t is None:
        t = torch.Tensor._make_wrapper_subclass(_Shell, [0], strides=[1], dtype=dtype,
                                                device=device)
        _TEMPLATES[key] = t
    return t


def _reserve(nbytes: int) -> int:
    """A fresh address for a storage of `nbytes` bytes."""
    address = _address_base[0]
    _address_base[0] = address + (nbytes + 2 * _ALIGN - 1) // _ALIGN * _ALIGN
    return address


def _forget(key: int) -> None:
    _STORAGES.pop(key, None)


def storage_for(buffer: object, device: torch.device) -> torch.UntypedStorage:
    """The torch storage whose bytes are `buffer` (made on first use, then the same one while
    it lives)."""
    key = id(buffer)
    ref = _STORAGES.get(key)
    storage = ref() if ref is not None else None
    if storage is not None:
        return storage
    nbytes = buffer.nbytes  # type: ignore[attr-defined]
    storage = torch._C._construct_storage_from_data_pointer(_reserve(nbytes), device, nbytes)
    _attach(storage, buffer)
    return storage


def _attach(storage: torch.UntypedStorage, buffer: object) -> None:
    """Makes `buffer` the bytes of `storage` (which keeps it alive)."""
    storage._pk_buffer = buffer
    key = id(buffer)
    _STORAGES[key] = weakref.ref(storage, lambda _r, key=key: _forget(key))


def _lazy_storage(nbytes: int, device: object) -> torch.UntypedStorage:
    """A storage of `nbytes` bytes on a pykern device whose buffer is made when first used,
    or taken over from the result an operator computes into it (`adopt`)."""
    tdev = devices.torch_device(device)
    storage = torch._C._construct_storage_from_data_pointer(_reserve(nbytes), tdev, nbytes)
    storage._pk_buffer = None
    storage._pk_device = device
    return storage


def storage_nbytes(size: Sequence[int], stride: Sequence[int], itemsize: int,
                   offset: int = 0) -> int:
    """Bytes a storage needs for a tensor of `size` and `stride` at `offset`."""
    if any(s == 0 for s in size):
        return offset * itemsize
    extent = 1 + sum((s - 1) * st for s, st in zip(size, stride))
    return (offset + extent) * itemsize


def tensor_on(storage: torch.UntypedStorage, size: Sequence[int], stride: Sequence[int],
              offset: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A new torch tensor over `storage` with this layout."""
    t = _AS_STRIDED.redispatch(_CPU, _template(device, dtype), [0], [1], 0)
    _SET_STORAGE.redispatch(_CPU, t, storage, offset, list(size), list(stride))
    return t


def empty_strided(size: Sequence[int], stride: Sequence[int], dtype: torch.dtype | None,
                  device: torch.device | str | None) -> torch.Tensor:
    """A new uninitialised tensor on a pykern device."""
    dtype = torch.get_default_dtype() if dtype is None else dtype
    pk_dtype = dtypes.to_pk(dtype)
    dev = devices.pk_device(device)
    nbytes = storage_nbytes(size, stride, pk_dtype.itemsize)
    tdev = devices.torch_device(dev)
    return tensor_on(_lazy_storage(nbytes, dev), size, stride, 0, dtype, tdev)


def contiguous_strides(size: Sequence[int]) -> list[int]:
    """Row-major strides in elements."""
    strides, step = [], 1
    for s in reversed(size):
        strides.append(step)
        step *= max(s, 1)
    return strides[::-1]


def empty(size: Sequence[int], dtype: torch.dtype | None, device: torch.device | str | None,
          memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """`torch.empty` on a pykern device (row-major, or the strides `memory_format` asks)."""
    if memory_format in (None, torch.contiguous_format, torch.preserve_format):
        stride = contiguous_strides(size)
    else:  # channels_last and its 3-d kin: PyTorch's own stride rule
        stride = list(torch.empty(size, device="meta", memory_format=memory_format).stride())
    return empty_strided(size, stride, dtype, device)


def is_pykern(t: object) -> bool:
    """Whether `t` is a torch tensor on a pykern device."""
    return isinstance(t, torch.Tensor) and t.device.type == devices.NAME


def buffer_of(t: torch.Tensor) -> object:
    """The pykern buffer under a "pykern" tensor (made now where the storage has none yet)."""
    storage = t.untyped_storage()
    try:
        buffer = storage._pk_buffer
    except AttributeError:
        raise TypeError(f"expected a tensor on the pykern device, got one on {t.device}") \
            from None
    if buffer is None:  # what pk.empty does
        buffer = storage._pk_device.create_buffer(storage.nbytes())
        _attach(storage, buffer)
    return buffer


def adopt(out: torch.Tensor, p: pk.Tensor) -> bool:
    """Makes the fresh result `p` the memory of `out`, where out's storage has no buffer yet
    and p has out's exact layout (then no copy is needed); whether it did."""
    storage = out.untyped_storage()
    if getattr(storage, "_pk_buffer", False) is not None:
        return False
    buffer = p.buffer
    if p.offset or out.storage_offset() or p.dtype != dtypes.to_pk(out.dtype) or \
            p.shape != tuple(out.shape) or p.element_strides != tuple(out.stride()) or \
            buffer.nbytes != storage.nbytes() or owned(p) or \
            buffer.device is not storage._pk_device:  # type: ignore[attr-defined]
        return False
    _attach(storage, buffer)
    return True


def unallocated(t: torch.Tensor) -> bool:
    """Whether t's storage has no buffer yet (a fresh output that can adopt a result)."""
    return getattr(t.untyped_storage(), "_pk_buffer", False) is None


def pk_view(t: torch.Tensor) -> pk.Tensor:
    """The `pk.Tensor` over t's elements: the same memory, shape, strides and offset."""
    return pk.Tensor(buffer_of(t), tuple(t.shape), dtypes.to_pk(t.dtype), tuple(t.stride()),
                     t.storage_offset())


def to_pk(t: torch.Tensor) -> pk.Tensor:
    """The `pk.Tensor` sharing a "pykern" torch tensor's memory (no copy): writes through
    either are seen by the other, so a `@pk.kernel` can read and write torch tensors.

        x = torch.randn(1024, device="pykern")
        my_kernel[x.numel()](pykern.torch.to_pk(x))
    """
    if not is_pykern(t):
        device = getattr(t, "device", type(t).__name__)
        raise TypeError(f"to_pk takes a torch tensor on the pykern device, not one on {device} "
                        "(move it with .to('pykern') first)")
    if t.is_conj() or t.is_neg():
        raise ValueError("to_pk: the tensor is a lazy conjugate or negation view; call "
                         "resolve_conj() / resolve_neg() first")
    return pk_view(t)


def from_pk(p: pk.Tensor) -> torch.Tensor:
    """The "pykern" torch tensor sharing a `pk.Tensor`'s memory (no copy), on the torch device
    "pykern:N" of p's device. A view with negative strides (pk's `flip`) has no PyTorch
    equivalent: copy it first (`p.copy()`)."""
    if not isinstance(p, pk.Tensor):
        raise TypeError(f"from_pk takes a pk.Tensor, not {type(p).__name__}")
    strides = p.element_strides
    if any(s < 0 for s in strides):
        raise ValueError(f"from_pk: PyTorch has no negative strides (this view has {strides}); "
                         "pass p.copy()")
    device = devices.torch_device(p.device)
    storage = storage_for(p.buffer, device)
    return tensor_on(storage, p.shape, strides, p.offset, dtypes.to_torch(p.dtype), device)


def owned(p: pk.Tensor) -> bool:
    """Whether p's buffer already belongs to a torch storage (a result that is a view of an
    operand, not fresh memory)."""
    ref = _STORAGES.get(id(p.buffer))
    return ref is not None and ref() is not None


def result(p: pk.Tensor) -> torch.Tensor:
    """A torch tensor holding an op's result `p`: p's own memory when it is fresh, a copy
    where p is a view of memory some tensor already has (a functional op never returns an
    alias of its operands) or has negative strides."""
    if owned(p) or any(s < 0 for s in p.element_strides):
        p = p.copy()
    return from_pk(p)
