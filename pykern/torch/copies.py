"""Copies between "pykern" tensors, the CPU and other devices (`copy_`, and so `.to()`,
`.cpu()`, `clone()`), and reading one value (`.item()`)."""

from __future__ import annotations

import numpy as np
import torch

import pykern as pk
from pykern.torch import dtypes
from pykern.torch.memory import buffer_of, is_pykern, pk_view

# dtypes numpy has no type for: moved as their bits
_BITS = {torch.bfloat16: (torch.int16, pk.u16)}


def host_resolved(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor with a lazy conjugation or negation (PyTorch's conj/neg bits) applied."""
    return t.resolve_conj().resolve_neg()


def device_values(t: torch.Tensor) -> pk.Tensor:
    """The values a "pykern" tensor stands for: its memory, conjugated or negated where its
    conj or neg bit says so (PyTorch's lazy `conj()` and `neg` views)."""
    p = pk_view(t)
    if t.is_conj():
        p = pk.conj(p)
    if t.is_neg():
        p = pk.negative(p)
    return p


def to_host(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor holding the values of a "pykern" tensor (waits for what writes it), with
    its conj and neg bits applied."""
    p = pk_view(t)
    bits = _BITS.get(t.dtype)
    if bits is not None:
        raw = pk.Tensor(p.buffer, p.shape, bits[1], p.element_strides, p.offset).numpy()
        host = torch.from_numpy(raw.view(np.int16)).view(t.dtype)
    else:
        host = torch.from_numpy(p.numpy())
    if t.is_conj():
        host = host.conj()
    if t.is_neg():
        host = host._neg_view()
    return host_resolved(host)


def from_host(t: torch.Tensor, device: object) -> pk.Tensor:
    """A pk.Tensor on `device` (a pykern runtime Device) holding a CPU tensor's values."""
    t = host_resolved(t)
    bits = _BITS.get(t.dtype)
    if bits is not None:
        raw = pk.asarray(t.view(bits[0]).numpy(force=True).view(np.uint16), dtype=bits[1],
                         device=device.info.index)  # type: ignore[attr-defined]
        return pk.Tensor(raw.buffer, raw.shape, pk.bf16, raw.element_strides, raw.offset)
    return pk.asarray(t.numpy(force=True), dtype=dtypes.to_pk(t.dtype),
                      device=device.info.index)  # type: ignore[attr-defined]


def copy_(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """`self.copy_(src)` where either is on a pykern device: src broadcast to self's shape and
    converted to its dtype."""
    if self.numel() == 0:
        return self
    if not is_pykern(self):  # download
        self.copy_(to_host(src))
        return self
    target = pk_view(self)
    if is_pykern(src):
        value = device_values(src)
        if value.device is not target.device:
            value = value.to(target.device)
    else:
        value = from_host(src.cpu() if src.device.type != "cpu" else src, target.device)
    if self.dtype.is_complex is False and value.dtype.is_complex:
        value = value.real  # as PyTorch: the imaginary part is dropped (it warns)
    target[...] = value
    return self


def local_scalar_dense(t: torch.Tensor) -> bool | int | float | complex:
    """`t.item()`: the value of a one-element tensor as a Python number."""
    buffer_of(t)  # a clear error for a tensor of another device
    return to_host(t).item()
