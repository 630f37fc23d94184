"""Reductions and scans (sum, mean, prod, max/min and their indices, var/std, any/all, norms,
logsumexp, cumsum/cumprod) on pykern's reductions. The output tensors come from PyTorch's
meta functions (structured operators) or are made here with PyTorch's shapes."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

import pykern as pk
from pykern.torch.args import dims, new, operand, pk_dtype, write

Dim = int | Sequence[int] | None


def _axis(x: pk.Tensor, dim: Dim) -> tuple[int, ...] | None:
    """pykern's axis for ATen's `dim` (None or [] reduce everything; a 0-d tensor has none)."""
    if x.ndim == 0:
        return None
    return dims(dim, x.ndim)


def _as(self: torch.Tensor, dtype: torch.dtype) -> pk.Tensor:
    return operand(self, dtype)  # type: ignore[return-value]


def sum_out(self: torch.Tensor, dim: Dim = None, keepdim: bool = False, *,
            dtype: torch.dtype | None = None, out: torch.Tensor) -> torch.Tensor:
    """`sum.IntList_out`."""
    x = _as(self, out.dtype)
    return write(out, pk.sum(x, axis=_axis(x, dim), keepdims=keepdim, dtype=x.dtype))


def nansum_out(self: torch.Tensor, dim: Dim = None, keepdim: bool = False, *,
               dtype: torch.dtype | None = None, out: torch.Tensor) -> torch.Tensor:
    """`nansum.out`: the sum with NaNs counted as 0."""
    x = _as(self, out.dtype)
    if x.dtype.is_float:
        x = pk.where(pk.isnan(x), 0, x)
    return write(out, pk.sum(x, axis=_axis(x, dim), keepdims=keepdim, dtype=x.dtype))


def mean_out(self: torch.Tensor, dim: Dim = None, keepdim: bool = False, *,
             dtype: torch.dtype | None = None, out: torch.Tensor) -> torch.Tensor:
    """`mean.out`."""
    x = _as(self, out.dtype)
    return write(out, pk.mean(x, axis=_axis(x, dim), keepdims=keepdim))


def prod_int_out(self: torch.Tensor, dim: int, keepdim: bool = False, *,
                 dtype: torch.dtype | None = None, out: torch.Tensor) -> torch.Tensor:
    """`prod.int_out`."""
    x = _as(self, out.dtype)
    return write(out, pk.prod(x, axis=_axis(x, dim), keepdims=keepdim, dtype=x.dtype))


def prod_all(self: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """`prod`: the product of every element (integers and bool give int64)."""
    if dtype is None:
        dtype = self.dtype if self.dtype.is_floating_point or self.dtype.is_complex \
            else torch.int64
    return new(pk.prod(_as(self, dtype), dtype=pk_dtype(dtype)))


def _extreme(fn: object, self: torch.Tensor, dim: Dim, keepdim: bool) -> pk.Tensor:
    x = operand(self)
    if x.dtype == pk.bool_:  # type: ignore[union-attr]
        x = x.astype(pk.u8)  # type: ignore[union-attr]
    return fn(x, axis=_axis(x, dim), keepdims=keepdim)  # type: ignore[operator]


def amax_out(self: torch.Tensor, dim: Dim = (), keepdim: bool = False, *,
             out: torch.Tensor) -> torch.Tensor:
    """`amax.out`: the largest value over `dim` (NaN if any is NaN)."""
    return write(out, _extreme(pk.max, self, dim, keepdim))


def amin_out(self: torch.Tensor, dim: Dim = (), keepdim: bool = False, *,
             out: torch.Tensor) -> torch.Tensor:
    """`amin.out`."""
    return write(out, _extreme(pk.min, self, dim, keepdim))


def max_all(self: torch.Tensor) -> torch.Tensor:
    """`max()`: the largest element."""
    if self.numel() == 0:
        raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return new(_extreme(pk.max, self, None, False), self.dtype)


def min_all(self: torch.Tensor) -> torch.Tensor:
    """`min()`: the smallest element."""
    if self.numel() == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return new(_extreme(pk.min, self, None, False), self.dtype)


def _arg(fn: object, self: torch.Tensor, dim: int | None, keepdim: bool) -> pk.Tensor:
    x = operand(self)
    if x.dtype == pk.bool_:  # type: ignore[union-attr]
        x = x.astype(pk.u8)  # type: ignore[union-attr]
    if dim is None:
        r = fn(x.reshape(-1), axis=0) if x.ndim else fn(x.reshape(1), axis=0)  # type: ignore
        return r.reshape((1,) * x.ndim) if keepdim else r  # type: ignore[union-attr]
    if x.ndim == 0:
        return fn(x.reshape(1), axis=0)  # type: ignore[operator,union-attr]
    return fn(x, axis=dim % x.ndim, keepdims=keepdim)  # type: ignore[operator,union-attr]


def argmax_out(self: torch.Tensor, dim: int | None = None, keepdim: bool = False, *,
               out: torch.Tensor) -> torch.Tensor:
    """`argmax.out`: the first index of the largest value (NaN counts as largest)."""
    return write(out, _arg(pk.argmax, self, dim, keepdim))


def argmin_out(self: torch.Tensor, dim: int | None = None, keepdim: bool = False, *,
               out: torch.Tensor) -> torch.Tensor:
    """`argmin.out`."""
    return write(out, _arg(pk.argmin, self, dim, keepdim))


def max_dim_out(self: torch.Tensor, dim: int, keepdim: bool = False, *, max: torch.Tensor,  # noqa: A002
                max_values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`max.dim_max`: the largest values along `dim` and their first indices."""
    write(max, _extreme(pk.max, self, dim, keepdim))
    write(max_values, _arg(pk.argmax, self, dim, keepdim))
    return max, max_values


def min_dim_out(self: torch.Tensor, dim: int, keepdim: bool = False, *, min: torch.Tensor,  # noqa: A002
                min_indices: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`min.dim_min`."""
    write(min, _extreme(pk.min, self, dim, keepdim))
    write(min_indices, _arg(pk.argmin, self, dim, keepdim))
    return min, min_indices


def aminmax_out(self: torch.Tensor, *, dim: int | None = None, keepdim: bool = False,
                min: torch.Tensor, max: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # noqa: A002
    """`aminmax.out`."""
    write(min, _extreme(pk.min, self, dim, keepdim))
    write(max, _extreme(pk.max, self, dim, keepdim))
    return min, max


def _logical(fn: object, self: torch.Tensor, dim: Dim, keepdim: bool) -> pk.Tensor:
    x = operand(self)
    return fn(x, axis=_axis(x, dim), keepdims=keepdim)  # type: ignore[operator,union-attr]


def all_out(self: torch.Tensor, dim: Dim = None, keepdim: bool = False, *,
            out: torch.Tensor) -> torch.Tensor:
    """`all.out`, `all.dims_out`, `all.all_out` (uint8 input gives uint8, as PyTorch)."""
    return write(out, _logical(pk.all, self, dim, keepdim))


def any_out(self: torch.Tensor, dim: Dim = None, keepdim: bool = False, *,
            out: torch.Tensor) -> torch.Tensor:
    """`any.out`, `any.dims_out`, `any.all_out`."""
    return write(out, _logical(pk.any, self, dim, keepdim))


def all_all_out(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    """`all.all_out`."""
    return all_out(self, None, False, out=out)


def any_all_out(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    """`any.all_out`."""
    return any_out(self, None, False, out=out)


def _correction(correction: float | None) -> float:
    return 1.0 if correction is None else float(correction)


def var_out(self: torch.Tensor, dim: Dim = None, *, correction: float | None = None,
            keepdim: bool = False, out: torch.Tensor) -> torch.Tensor:
    """`var.correction_out` (for complex input, the variance of |x - mean|)."""
    x = operand(self)
    return write(out, pk.var(x, axis=_axis(x, dim), correction=_correction(correction),
                             keepdims=keepdim))


def std_out(self: torch.Tensor, dim: Dim = None, *, correction: float | None = None,
            keepdim: bool = False, out: torch.Tensor) -> torch.Tensor:
    """`std.correction_out`."""
    x = operand(self)
    return write(out, pk.std(x, axis=_axis(x, dim), correction=_correction(correction),
                             keepdims=keepdim))


def var_mean(self: torch.Tensor, dim: Dim = None, *, correction: float | None = None,
             keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """`var_mean.correction`: (variance, mean)."""
    return _with_mean(pk.var, self, dim, correction, keepdim)


def std_mean(self: torch.Tensor, dim: Dim = None, *, correction: float | None = None,
             keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """`std_mean.correction`: (standard deviation, mean)."""
    return _with_mean(pk.std, self, dim, correction, keepdim)


def _with_mean(spread: Callable[..., object], self: torch.Tensor, dim: Dim,
               correction: float | None, keepdim: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(spread(x), mean(x)) over `dim`, `spread` being pk.var or pk.std."""
    x = operand(self)
    axis = _axis(x, dim)
    return (new(spread(x, axis=axis, correction=_correction(correction), keepdims=keepdim)),
            new(pk.mean(x, axis=axis, keepdims=keepdim)))


def vector_norm_out(self: torch.Tensor, ord: float = 2, dim: Dim = None,  # noqa: A002
                    keepdim: bool = False, *, dtype: torch.dtype | None = None,
                    out: torch.Tensor) -> torch.Tensor:
    """`linalg_vector_norm.out`: (sum |x|**ord)**(1/ord), max |x| for inf, min |x| for -inf,
    the count of non-zeros for 0."""
    x = operand(self, dtype) if dtype is not None else operand(self)
    a = pk.abs(x)
    acc = torch.float32 if out.dtype in (torch.float16, torch.bfloat16) else out.dtype
    if a.dtype != pk_dtype(acc):  # 16-bit floats summed in float32, as PyTorch's
        a = a.astype(pk_dtype(acc))
    axis = _axis(a, dim)
    if ord == math.inf:
        r = pk.max(a, axis=axis, keepdims=keepdim) if a.size else pk.zeros(out.shape, a.dtype)
    elif ord == -math.inf:
        r = pk.min(a, axis=axis, keepdims=keepdim)
    elif ord == 0:
        r = pk.sum(pk.not_equal(a, 0).astype(a.dtype), axis=axis, keepdims=keepdim)
    elif ord == 1:
        r = pk.sum(a, axis=axis, keepdims=keepdim)
    elif ord == 2:
        r = pk.sqrt(pk.sum(pk.multiply(a, a), axis=axis, keepdims=keepdim))
    else:
        r = pk.pow(pk.sum(pk.pow(a, float(ord)), axis=axis, keepdims=keepdim), 1.0 / ord)
    return write(out, r)


def logsumexp_out(self: torch.Tensor, dim: Dim, keepdim: bool = False, *,
                  out: torch.Tensor) -> torch.Tensor:
    """`logsumexp.out`: log(sum(exp(x))), computed from the maximum (inf-safe)."""
    x = operand(self, out.dtype)
    axis = _axis(x, dim)
    if x.size == 0:
        return write(out, -math.inf)
    m = pk.max(x, axis=axis, keepdims=True)
    m = pk.where(pk.isinf(m), 0.0, m)
    s = pk.log(pk.sum(pk.exp(pk.subtract(x, m)), axis=axis, keepdims=True))
    r = pk.add(s, m)
    if not keepdim and axis is not None:
        r = r.squeeze(axis)
    return write(out, r)


def _scan(scan: Callable[..., object], self: torch.Tensor, dim: int,
          out: torch.Tensor) -> torch.Tensor:
    """`scan` (pk.cumsum or pk.cumprod) along `dim` in out's dtype; a 0-d input is copied."""
    x = _as(self, out.dtype)
    if x.ndim == 0:
        return write(out, x)
    return write(out, scan(x, axis=dim % x.ndim, dtype=x.dtype))


def cumsum_out(self: torch.Tensor, dim: int, *, dtype: torch.dtype | None = None,
               out: torch.Tensor) -> torch.Tensor:
    """`cumsum.out`."""
    return _scan(pk.cumsum, self, dim, out)


def cumprod_out(self: torch.Tensor, dim: int, *, dtype: torch.dtype | None = None,
                out: torch.Tensor) -> torch.Tensor:
    """`cumprod.out`."""
    return _scan(pk.cumprod, self, dim, out)


def count_nonzero(self: torch.Tensor, dim: Dim = None) -> torch.Tensor:
    """`count_nonzero.dim_IntList`: int64 counts."""
    x = operand(self)
    nz = pk.not_equal(x, 0).astype(pk.i64)
    return new(pk.sum(nz, axis=_axis(nz, dim), dtype=pk.i64))


def var_functional(self: torch.Tensor, dim: Dim = None, *, correction: float | None = None,
                   keepdim: bool = False) -> torch.Tensor:
    """`var.correction` (not structured)."""
    x = operand(self)
    return new(pk.var(x, axis=_axis(x, dim), correction=_correction(correction),
                      keepdims=keepdim))


def std_functional(self: torch.Tensor, dim: Dim = None, *, correction: float | None = None,
                   keepdim: bool = False) -> torch.Tensor:
    """`std.correction` (not structured)."""
    x = operand(self)
    return new(pk.std(x, axis=_axis(x, dim), correction=_correction(correction),
                      keepdims=keepdim))


def _ordered_operand(self: torch.Tensor, values: torch.Tensor,
                     indices: torch.Tensor) -> pk.Tensor | None:
    """The operand of sort/topk, bool as u8 (ordered as 0 < 1); None where it is 0-d and its
    result (the value itself, index 0) has been written already."""
    x = operand(self)
    if x.ndim == 0:  # type: ignore[union-attr]
        write(values, x)
        write(indices, 0)
        return None
    return x.astype(pk.u8) if x.dtype == pk.bool_ else x  # type: ignore[union-attr]


def sort_out(self: torch.Tensor, *, stable: bool | None = None, dim: int = -1,
             descending: bool = False, values: torch.Tensor,
             indices: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`sort.values_stable`: pykern's sort is stable (equal values keep their order, NaN
    sorts above everything), which is what PyTorch promises with stable=True."""
    x = _ordered_operand(self, values, indices)
    if x is None:
        return values, indices
    axis = dim % x.ndim
    order = pk.argsort(x, axis=axis, descending=descending)
    write(indices, order)
    write(values, pk.take_along_axis(x, order, axis=axis))
    return values, indices


def topk_out(self: torch.Tensor, k: int, dim: int = -1, largest: bool = True,
             sorted: bool = True, *, values: torch.Tensor,  # noqa: A002
             indices: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`topk.values`: the k largest (smallest) along dim, in order."""
    x = _ordered_operand(self, values, indices)
    if x is None:
        return values, indices
    v, i = pk.topk(x, k, dim=dim % x.ndim, largest=largest)
    write(values, v)
    write(indices, i)
    return values, indices


def kthvalue_out(self: torch.Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
                 values: torch.Tensor, indices: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """`kthvalue.values`: the k-th smallest along dim (NaN counts as largest)."""
    shape = list(self.shape)
    if shape:
        if keepdim:
            shape[dim % len(shape)] = 1
        else:
            del shape[dim % len(shape)]
    values.resize_(shape)
    indices.resize_(shape)
    x = operand(self)
    if x.ndim == 0:  # type: ignore[union-attr]
        x = x.reshape(1)  # type: ignore[union-attr]
        dim = 0
    axis = dim % x.ndim  # type: ignore[union-attr]
    order = pk.argsort(x, axis=axis)
    key = tuple(slice(k - 1, k) if d == axis else slice(None) for d in range(x.ndim))
    pick = order[key]
    v = pk.take_along_axis(x, pick, axis=axis)
    if not keepdim:
        pick, v = pick.squeeze(axis), v.squeeze(axis)
    write(values, v.reshape(tuple(values.shape)))
    write(indices, pick.reshape(tuple(indices.shape)))
    return values, indices


def norm_out(self: torch.Tensor, p: float | None, dim: Dim, keepdim: bool = False, *,
             out: torch.Tensor) -> torch.Tensor:
    """`norm.out`: the p-norm over dim (2 when p is None)."""
    return vector_norm_out(self, 2 if p is None else p, dim, keepdim, out=out)


def norm_dtype_out(self: torch.Tensor, p: float | None, dim: Dim, keepdim: bool, *,
                   dtype: torch.dtype, out: torch.Tensor) -> torch.Tensor:
    """`norm.dtype_out`."""
    return vector_norm_out(self, 2 if p is None else p, dim, keepdim, dtype=dtype, out=out)
