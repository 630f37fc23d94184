"""Tensors leaving and entering pykern: pickling (`__reduce__`), `copy.copy`/`copy.deepcopy`, and
DLPack without a copy where the memory allows it (the host device's buffers are host memory).

A pickled tensor is a host copy of its values (as stored: bf16 as its 16-bit words, so that
no ml_dtypes is needed either side) with its dtype's name, shape and `requires_grad`;
unpickling uploads it to the device current then.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pykern.jit import capture
from pykern.lang import dtypes as dt
from pykern.runtime import get_device
from pykern.tensor.core.tensor import Tensor, asarray, empty, wrapping


def stored_values(t: Tensor) -> np.ndarray:
    """A host copy of `t`'s elements in their storage dtype (`DType.storage`), C-contiguous."""
    capture.mark_unrepeatable()  # the values are read: no replayable plan
    c = t.contiguous()
    out = np.empty(c.shape, c.dtype.storage)
    if out.size:
        c.buffer.read_into(out, c.offset * c.dtype.itemsize)  # type: ignore[attr-defined]
    return out


def reduce_tensor(t: Tensor) -> tuple[Any, tuple]:
    """`Tensor.__reduce__`: rebuilt by `rebuild_tensor` from a host copy."""
    return rebuild_tensor, (stored_values(t), t.dtype.name, bool(t.requires_grad))


def rebuild_tensor(values: np.ndarray, dtype_name: str, requires_grad: bool) -> Tensor:
    """A tensor on the current device holding `values` (storage words) as `dtype_name`."""
    d = dt.BY_NAME[dtype_name]
    values = np.ascontiguousarray(values, d.storage).reshape(values.shape)
    t = empty(values.shape, d)
    if values.nbytes:
        t.buffer.upload(values)  # type: ignore[attr-defined]
    return t.requires_grad_() if requires_grad else t


def device_copy(t: Tensor) -> Tensor:
    """`copy.copy` and `copy.deepcopy`: a new buffer on the device with the same values and
    `requires_grad` (a leaf: the copy is not part of the graph)."""
    c = t.detach().copy()
    return c.requires_grad_() if t.requires_grad else c


# ---------------------------------------------------------------- DLPack


class _HostMemory:
    """numpy's view of a host-device tensor's memory; it keeps the tensor (and so its buffer,
    which the device would otherwise reuse) alive while any consumer holds the view."""

    def __init__(self, t: Tensor):
        self.tensor = t
        itemsize = t.dtype.itemsize
        address = t.buffer.address + t.offset * itemsize  # type: ignore[attr-defined]
        self.__array_interface__ = {
            "shape": t.shape, "typestr": t.dtype.storage.str, "version": 3,
            "strides": t.strides if t.size else None, "data": (address, False)}


def shared_host_array(t: Tensor) -> np.ndarray | None:
    """A numpy array over `t`'s own memory (writes reach the tensor) where it lives on the
    host device; None elsewhere (Vulkan memory cannot be handed out)."""
    if getattr(t.device, "info", None) is None or t.device.info.kind != "host":  # type: ignore
        return None
    if t.size == 0:
        return np.empty(t.shape, t.dtype.numpy)
    shared = np.asarray(_HostMemory(t))
    return shared.view(t.dtype.numpy) if t.dtype == dt.bf16 else shared


def export(t: Tensor, copy: bool | None) -> np.ndarray:
    """The host array `t.__dlpack__` hands out: `t`'s own memory where `copy` is not True and
    the tensor lives on the host device, else a copy; BufferError for copy=False elsewhere."""
    if copy is not True:
        shared = shared_host_array(t)
        if shared is not None:
            return shared
        if copy is False:
            raise BufferError("__dlpack__(copy=False): this tensor lives in Vulkan device "
                              "memory, which DLPack cannot share; copy=None or True exports "
                              "a host copy")
    return t.numpy()


def import_dlpack(x: object, copy: bool | None) -> Tensor:
    """`from_dlpack`: a tensor is itself (a copy for copy=True); another producer's host array
    is copied, or shared with copy=False where the device is the host and the array allows
    (C-contiguous, writable), else BufferError."""
    if isinstance(x, Tensor):
        return x.copy() if copy else x
    array = np.from_dlpack(x)
    if copy is False:
        shared = wrapping(array)
        if shared is None:
            where = get_device().info.kind  # type: ignore[attr-defined]
            raise BufferError("from_dlpack(copy=False): the array cannot be shared with the "
                              f"current device ({where}); only the host device shares writable "
                              "C-contiguous arrays. Pass copy=None or True to copy it")
        return shared
    return asarray(array, copy=True)
