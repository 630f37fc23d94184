"""Indexing operators: advanced indexing (`x[idx]`, `x[mask]`, `x[idx] = v`, with
accumulation), gather/scatter, index_select, masked fills and selections, nonzero, take."""

from __future__ import annotations

from collections.abc import Sequence

import torch

import pykern as pk
from pykern.torch import devices
from pykern.torch.args import new, operand, write
from pykern.torch.memory import is_pykern


def _index(i: torch.Tensor | None) -> object:
    """An ATen index (None, an integer tensor or a bool/uint8 mask) as a pykern key part; an
    index on the CPU is copied to the device (PyTorch allows CPU indices)."""
    if i is None:
        return slice(None)
    if not is_pykern(i):
        i = i.to(pk_device_name())
    p = operand(i)
    if p.dtype == pk.u8:  # type: ignore[union-attr]  # a legacy byte mask
        p = p.astype(pk.bool_)  # type: ignore[union-attr]
    return p


def pk_device_name() -> torch.device:
    """The torch device of pykern's op device (the operands' one, during an op)."""
    return devices.torch_device(pk.get_device())


def _key(indices: Sequence[torch.Tensor | None]) -> tuple:
    return tuple(_index(i) for i in indices)


def index_out(self: torch.Tensor, indices: Sequence[torch.Tensor | None], *,
              out: torch.Tensor) -> torch.Tensor:
    """`index.Tensor_out`: numpy's advanced indexing with ATen's list of indices."""
    return write(out, operand(self)[_key(indices)])  # type: ignore[index]


def index_put_impl_(self: torch.Tensor, indices: Sequence[torch.Tensor | None],
                    values: torch.Tensor, accumulate: bool = False,
                    unsafe: bool = False) -> torch.Tensor:
    """`_index_put_impl_`: `self[indices] = values`, or `+=` with every duplicate index
    counted when `accumulate`."""
    x = operand(self)
    v = operand(values, self.dtype)
    key = _key(indices)
    if not accumulate:
        x[key] = v  # type: ignore[index]
        return self
    positions = pk.arange(x.size, dtype=pk.i64).reshape(x.shape)[key]  # type: ignore
    v = v.broadcast_to(positions.shape) if isinstance(v, pk.Tensor) else \
        pk.full(positions.shape, v, dtype=x.dtype)  # type: ignore[union-attr]
    flat = x.contiguous().reshape(-1)  # type: ignore[union-attr]
    summed = pk.scatter_add(flat, 0, positions.reshape(-1), v.reshape(-1))
    return write(self, summed.reshape(x.shape))  # type: ignore[union-attr]


def index_put(self: torch.Tensor, indices: Sequence[torch.Tensor | None],
              values: torch.Tensor, accumulate: bool = False) -> torch.Tensor:
    """`index_put`: a copy of self with the values put."""
    return index_put_impl_(self.clone(), indices, values, accumulate)


def _sliced_to(x: pk.Tensor, index: pk.Tensor, dim: int) -> pk.Tensor:
    """x cut to index's sizes in every dimension but `dim` (gather and scatter read only
    that part)."""
    key = tuple(slice(None) if d == dim else slice(0, index.shape[d]) for d in range(x.ndim))
    return x[key]


def gather_out(self: torch.Tensor, dim: int, index: torch.Tensor, *, sparse_grad: bool = False,
               out: torch.Tensor) -> torch.Tensor:
    """`gather.out`: out[p] = self[p with p[dim] = index[p]]."""
    x, i = operand(self), operand(index)
    if x.ndim == 0:  # type: ignore[union-attr]
        x, i = x.reshape(1), i.reshape(1)  # type: ignore[union-attr]
    if i.size == 0:  # type: ignore[union-attr]
        return out
    dim = dim % x.ndim  # type: ignore[union-attr]
    r = pk.take_along_axis(_sliced_to(x, i, dim), i, axis=dim)  # type: ignore[arg-type]
    return write(out, r.reshape(tuple(out.shape)) if out.dim() == 0 else r)


def _scatter_key(index: pk.Tensor, dim: int) -> tuple:
    """The advanced-index key of every target of a scatter: index's values along `dim`,
    their own position along the others."""
    key = []
    for d in range(index.ndim):
        if d == dim:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = index.shape[d]
            key.append(pk.arange(index.shape[d], dtype=pk.i64).reshape(shape))
    return tuple(key)


def _scatter(self: torch.Tensor, dim: int, index: torch.Tensor, src: object,
             out: torch.Tensor, add: bool) -> torch.Tensor:
    write(out, operand(self))
    i = operand(index)
    if i.size == 0:  # type: ignore[union-attr]
        return out
    x = operand(out)
    if x.ndim == 0:  # type: ignore[union-attr]
        x, i = x.reshape(1), i.reshape(1)  # type: ignore[union-attr]
    dim = dim % x.ndim  # type: ignore[union-attr]
    if isinstance(src, torch.Tensor):
        s = operand(src, self.dtype)
        s = s.reshape(1) if s.ndim == 0 else _sliced_to(s, i, dim)  # type: ignore[union-attr]
    else:
        s = pk.full(i.shape, src, dtype=x.dtype)  # type: ignore[union-attr]
    if add:
        return write(out, pk.scatter_add(x, dim, i, s).reshape(out.shape))  # type: ignore
    x[_scatter_key(i, dim)] = s  # type: ignore[arg-type,index]
    return out


def scatter_src_out(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor, *,
                    out: torch.Tensor) -> torch.Tensor:
    """`scatter.src_out`: out[p with p[dim] = index[p]] = src[p] (the last write wins)."""
    return _scatter(self, dim, index, src, out, add=False)


def scatter_value_out(self: torch.Tensor, dim: int, index: torch.Tensor, value: object, *,
                      out: torch.Tensor) -> torch.Tensor:
    """`scatter.value_out`."""
    return _scatter(self, dim, index, value, out, add=False)


def scatter_add_out(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor, *,
                    out: torch.Tensor) -> torch.Tensor:
    """`scatter_add.out`: out[p with p[dim] = index[p]] += src[p]."""
    return _scatter(self, dim, index, src, out, add=True)


def index_select_out(self: torch.Tensor, dim: int, index: torch.Tensor, *,
                     out: torch.Tensor) -> torch.Tensor:
    """`index_select.out`."""
    x, i = operand(self), operand(index)
    if x.ndim == 0:  # type: ignore[union-attr]
        r = pk.take(x.reshape(1), i.reshape(-1), axis=0)  # type: ignore[union-attr]
        return write(out, r.reshape(tuple(out.shape)) if out.dim() == 0 else r)
    return write(out, pk.take(x, i.reshape(-1), axis=dim % x.ndim))  # type: ignore


def index_select(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """`index_select`."""
    shape = list(self.shape)
    if shape:
        shape[dim % len(shape)] = index.numel()
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    return index_select_out(self, dim, index, out=out)


def masked_fill_(self: torch.Tensor, mask: torch.Tensor, value: object) -> torch.Tensor:
    """`masked_fill_.Scalar` / `.Tensor`: value where mask is true (`pk.Tensor.masked_fill`)."""
    if isinstance(value, torch.Tensor):
        value = value.item()
    filled = operand(self).masked_fill(operand(mask, torch.bool), value)  # type: ignore
    return write(self, filled)


def masked_select(self: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """`masked_select`: the elements where mask (broadcast with self) is true, as 1-d
    (`pk.Tensor.masked_select`)."""
    return new(operand(self).masked_select(operand(mask, torch.bool)))  # type: ignore


def nonzero(self: torch.Tensor) -> torch.Tensor:
    """`nonzero`: the indices of non-zero elements, one row each (int64)."""
    x = operand(self)
    if x.ndim == 0:  # type: ignore[union-attr]
        n = int(bool(x.item()))  # type: ignore[union-attr]
        return new(pk.zeros((n, 0), dtype=pk.i64))
    parts = pk.array_api.nonzero(x)
    return new(pk.stack([p.astype(pk.i64) for p in parts], axis=1))


def take(self: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """`take`: elements of the flattened tensor."""
    x, i = operand(self), operand(index)
    flat = x.reshape(-1)  # type: ignore[union-attr]
    return new(pk.take(flat, i.reshape(-1), axis=0).reshape(i.shape))  # type: ignore
