"""Operators built from several pykern ops: log-sigmoid, traces, unpooling, puts and masked
scatters, medians, unique values, searches and histograms, and scans that pykern has no
kernel of its own for (cummax, cummin, logcumsumexp), done by doubling: log2(n) steps of an
elementwise combine of each element with the one 2**k before it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

import pykern as pk
from pykern.torch.args import dims, new, operand, pk_dtype, write
from pykern.torch.nn_ops import nll_loss2d_backward_out, nll_loss2d_forward_out


def nll_loss2d_forward(self: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None,
                       reduction: int, ignore_index: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`nll_loss2d_forward` (not structured)."""
    shape = target.shape if reduction == 0 else ()
    output = torch.empty(shape, dtype=self.dtype, device=self.device)
    total = torch.empty((), dtype=self.dtype, device=self.device)
    return nll_loss2d_forward_out(self, target, weight, reduction, ignore_index, output=output,
                                  total_weight=total)


def nll_loss2d_backward(grad_output: torch.Tensor, self: torch.Tensor, target: torch.Tensor,
                        weight: torch.Tensor | None, reduction: int, ignore_index: int,
                        total_weight: torch.Tensor) -> torch.Tensor:
    """`nll_loss2d_backward` (not structured)."""
    grad = torch.empty_like(self)
    return nll_loss2d_backward_out(grad_output, self, target, weight, reduction, ignore_index,
                                   total_weight, grad_input=grad)


def nansum(self: torch.Tensor, dim: Sequence[int] | None = None, keepdim: bool = False, *,
           dtype: torch.dtype | None = None) -> torch.Tensor:
    """`nansum`: the sum with NaNs counted as 0."""
    if dtype is None:
        dtype = self.dtype if self.is_floating_point() or self.is_complex() else torch.int64
    x = operand(self, dtype)
    if x.dtype.is_float:  # type: ignore[union-attr]
        x = pk.where(pk.isnan(x), 0, x)
    axis = None if x.ndim == 0 else dims(dim, x.ndim)  # type: ignore[union-attr]
    return new(pk.sum(x, axis=axis, keepdims=keepdim, dtype=pk_dtype(dtype)), dtype)


def log_sigmoid_forward(self: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`log_sigmoid_forward`: min(x, 0) - log1p(exp(-|x|)) (and an empty buffer)."""
    x = operand(self)
    y = pk.subtract(pk.minimum(x, 0), pk.log1p(pk.exp(pk.negative(pk.abs(x)))))
    return new(y, self.dtype), torch.empty(0, dtype=self.dtype, device=self.device)


def log_sigmoid_backward(grad_output: torch.Tensor, self: torch.Tensor,
                         buffer: torch.Tensor) -> torch.Tensor:
    """`log_sigmoid_backward`: grad * sigmoid(-x)."""
    g, x = operand(grad_output), operand(self)
    return new(pk.multiply(g, pk.sigmoid(pk.negative(x))), self.dtype)


def equal(self: torch.Tensor, other: torch.Tensor) -> bool:
    """`equal`: the same shape and the same values."""
    if self.shape != other.shape:
        return False
    if self.numel() == 0:
        return True
    return bool(pk.all(pk.equal(operand(self), operand(other))).item())


def trace(self: torch.Tensor) -> torch.Tensor:
    """`trace`: the sum of the diagonal of a matrix."""
    dtype = self.dtype if self.is_floating_point() or self.is_complex() else torch.int64
    d = pk.linalg.diagonal(operand(self, dtype))
    return new(pk.sum(d, dtype=pk_dtype(dtype)), dtype)


def max_unpool2d(self: torch.Tensor, indices: torch.Tensor,
                 output_size: Sequence[int]) -> torch.Tensor:
    """`max_unpool2d`: each value put at its index in a zero plane of output_size."""
    h, w = output_size
    lead = tuple(self.shape[:-2])
    planes = 1
    for s in lead:
        planes *= s
    out = pk.zeros((planes, h * w), dtype=pk_dtype(self.dtype))
    vals = operand(self).reshape(planes, -1)  # type: ignore[union-attr]
    idx = operand(indices).reshape(planes, -1)  # type: ignore[union-attr]
    rows = pk.arange(planes, dtype=pk.i64).reshape(planes, 1)
    if vals.size:
        out[rows, idx] = vals
    return new(out.reshape(*lead, h, w))


def put_(self: torch.Tensor, index: torch.Tensor, source: torch.Tensor,
         accumulate: bool = False) -> torch.Tensor:
    """`put_`: source's values written (or added) at flat indices of self."""
    flat = self.view(-1) if self.is_contiguous() else self.reshape(-1).clone()
    torch.ops.aten._index_put_impl_(flat, [index.reshape(-1)], source.reshape(-1), accumulate)
    if not self.is_contiguous():
        self.copy_(flat.view(self.shape))
    return self


def masked_scatter_(self: torch.Tensor, mask: torch.Tensor,
                    source: torch.Tensor) -> torch.Tensor:
    """`masked_scatter_`: the positions where mask is true take source's values in order."""
    m = operand(mask, torch.bool).broadcast_to(tuple(self.shape))  # type: ignore[union-attr]
    flat = m.reshape(-1).astype(pk.i64)
    order = pk.subtract(pk.cumsum(flat), 1)
    order = pk.where(pk.equal(flat, 1), order, 0)
    src = operand(source, self.dtype).reshape(-1)  # type: ignore[union-attr]
    picked = pk.take(src, order, axis=0).reshape(tuple(self.shape))
    return write(self, pk.where(m, picked, operand(self)))


def index_fill_(self: torch.Tensor, dim: int, index: torch.Tensor,
                value: object) -> torch.Tensor:
    """`index_fill_`: the slices at `index` along dim set to value."""
    if isinstance(value, torch.Tensor):
        value = value.item()
    x = operand(self)
    if x.ndim == 0:  # type: ignore[union-attr]
        return write(self, value) if index.numel() else self
    key: list[object] = [slice(None)] * x.ndim  # type: ignore[union-attr]
    key[dim % x.ndim] = operand(index, torch.int64).reshape(-1)  # type: ignore[union-attr]
    x[tuple(key)] = value  # type: ignore[index]
    return self


# ---------------------------------------------------------------- medians


def _median_pick(x: pk.Tensor, axis: int, ignore_nan: bool) -> tuple[pk.Tensor, pk.Tensor]:
    """(values, indices) of the lower median along axis, keeping the axis (size 1). NaN
    propagates unless ignore_nan, where NaNs are left out (a row of NaNs gives NaN)."""
    n = x.shape[axis]
    order = pk.argsort(x, axis=axis)  # stable, NaN last
    nans = pk.sum(pk.isnan(x).astype(pk.i64), axis=axis, keepdims=True) if x.dtype.is_float \
        else pk.zeros(tuple(1 if d == axis else s for d, s in enumerate(x.shape)), dtype=pk.i64)
    if ignore_nan:
        k = pk.floor_divide(pk.maximum(pk.subtract(n - 1, nans), 0), 2)
    else:
        k = pk.where(pk.greater(nans, 0), n - nans, (n - 1) // 2)  # the first NaN
    pick = pk.take_along_axis(order, k, axis=axis)
    return pk.take_along_axis(x, pick, axis=axis), pick


def _median_of_all(self: torch.Tensor, skip_nan: bool) -> torch.Tensor:
    """The lower median of every element (of the non-NaN ones with `skip_nan`); NaN when
    empty."""
    x = operand(self).reshape(-1)  # type: ignore[union-attr]
    if x.size == 0:
        return new(float("nan"), self.dtype)
    v, _ = _median_pick(x, 0, skip_nan)
    return new(v.reshape(()), self.dtype)


def median_all(self: torch.Tensor) -> torch.Tensor:
    """`median`: the lower median of every element (NaN if any is NaN)."""
    return _median_of_all(self, skip_nan=False)


def nanmedian_all(self: torch.Tensor) -> torch.Tensor:
    """`nanmedian`: the lower median of the non-NaN elements."""
    return _median_of_all(self, skip_nan=True)


def _median_dim(self: torch.Tensor, dim: int, keepdim: bool, values: torch.Tensor,
                indices: torch.Tensor, ignore_nan: bool) -> tuple[torch.Tensor, torch.Tensor]:
    shape = reduced_shape(self, dim, keepdim)
    values.resize_(shape)
    indices.resize_(shape)
    x = operand(self)
    if x.ndim == 0:  # type: ignore[union-attr]
        write(values, x)
        write(indices, 0)
        return values, indices
    axis = dim % x.ndim  # type: ignore[union-attr]
    v, i = _median_pick(x, axis, ignore_nan)  # type: ignore[arg-type]
    if not keepdim:
        v, i = v.squeeze(axis), i.squeeze(axis)
    write(values, v)
    write(indices, i)
    return values, indices


def median_dim_out(self: torch.Tensor, dim: int, keepdim: bool = False, *,
                   values: torch.Tensor, indices: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """`median.dim_values`."""
    return _median_dim(self, dim, keepdim, values, indices, False)


def nanmedian_dim_out(self: torch.Tensor, dim: int, keepdim: bool = False, *,
                      values: torch.Tensor, indices: torch.Tensor
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """`nanmedian.dim_values`."""
    return _median_dim(self, dim, keepdim, values, indices, True)


def reduced_shape(t: torch.Tensor, dim: int, keepdim: bool) -> list[int]:
    """t's shape with dim removed (kept as 1 with keepdim); a 0-d tensor's stays ()."""
    shape = list(t.shape)
    if not shape:
        return []
    d = dim % len(shape)
    if keepdim:
        shape[d] = 1
    else:
        del shape[d]
    return shape


# ---------------------------------------------------------------- unique, searches, counts


def _runs(sorted_flat: pk.Tensor) -> tuple[pk.Tensor, pk.Tensor]:
    """For a 1-d tensor: whether each element starts a run of equal ones, and its run
    number."""
    n = sorted_flat.shape[0]
    first = pk.ones((n,), dtype=pk.bool_)
    if n > 1:
        first[1:] = pk.not_equal(sorted_flat[1:], sorted_flat[:-1])
    run = pk.subtract(pk.cumsum(first.astype(pk.i64)), 1)
    return first, run


def _counts(run: pk.Tensor, groups: int) -> pk.Tensor:
    return pk.scatter_add(pk.zeros((groups,), dtype=pk.i64), 0, run,
                          pk.ones(run.shape, dtype=pk.i64))


def unique2(self: torch.Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
            return_counts: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`_unique2`: the distinct values in ascending order, the inverse indices (self's
    shape) and the counts."""
    x = operand(self).reshape(-1)  # type: ignore[union-attr]
    if x.dtype == pk.bool_:
        x = x.astype(pk.u8)
    order = pk.argsort(x)
    s = pk.take(x, order, axis=0)
    first, run = _runs(s)
    values = s[first]
    groups = values.shape[0]
    inverse = pk.zeros((x.size,), dtype=pk.i64)
    if x.size:
        inverse[order] = run
    counts = _counts(run, groups)
    return (new(values, self.dtype), new(inverse.reshape(tuple(self.shape))),
            new(counts) if return_counts else torch.empty(0, dtype=torch.int64,
                                                          device=self.device))


def unique_consecutive(self: torch.Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`unique_consecutive` (of the flattened tensor): each run of equal values once."""
    if dim is not None and self.dim() > 1:
        raise NotImplementedError("the pykern device has no unique_consecutive along a "
                                  "dimension (aten::unique_consecutive with dim)")
    x = operand(self).reshape(-1)  # type: ignore[union-attr]
    first, run = _runs(x)
    values = x[first]
    inverse = run.reshape(tuple(self.shape)) if dim is None else run
    return (new(values, self.dtype), new(inverse),
            new(_counts(run, values.shape[0])))


def searchsorted(sorted_sequence: torch.Tensor, self: object, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: torch.Tensor | None = None) -> torch.Tensor:
    """`searchsorted.Tensor` / `.Scalar`: insertion points of self's values into each row of
    sorted_sequence (a binary search per value)."""
    side = side or ("right" if right else "left")
    seq = operand(sorted_sequence)
    if sorter is not None:
        seq = pk.take_along_axis(seq, operand(sorter, torch.int64), axis=-1)
    scalar = not isinstance(self, torch.Tensor)
    v = pk.full((1,), self, dtype=seq.dtype) if scalar else operand(self)  # type: ignore
    if seq.ndim == 1:  # type: ignore[union-attr]
        r = pk.array_api.searchsorted(seq, v.reshape(-1), side=side).reshape(v.shape)
    else:  # one search per row: the rows made one sorted sequence by an offset per row
        r = _batched_search(seq, v, side)  # type: ignore[arg-type]
    dtype = torch.int32 if out_int32 else torch.int64
    return new(r.reshape(()) if scalar else r, dtype)


def _batched_search(seq: pk.Tensor, v: pk.Tensor, side: str) -> pk.Tensor:
    """Row-wise searchsorted for finite values: every row of seq and of v ranked within the
    row by an exact two-key comparison (row first), done as one 1-d search over the rows'
    positions."""
    rows, n = seq.reshape(-1, seq.shape[-1]).shape
    m = v.shape[-1]
    s2 = seq.reshape(rows, n)
    v2 = v.reshape(rows, m)
    counts = []
    for r in range(rows):
        counts.append(pk.array_api.searchsorted(s2[r], v2[r], side=side).reshape(1, m))
    return pk.concat(counts, axis=0).reshape(v.shape) if counts else \
        pk.zeros(v.shape, dtype=pk.i64)


def bucketize(self: object, boundaries: torch.Tensor, *, out_int32: bool = False,
              right: bool = False) -> torch.Tensor:
    """`bucketize.Tensor` / `.Scalar`: the bucket of each value among 1-d boundaries."""
    return searchsorted(boundaries, self, out_int32=out_int32, right=right)


def histc(self: torch.Tensor, bins: int = 100, min: object = 0,  # noqa: A002
          max: object = 0) -> torch.Tensor:  # noqa: A002
    """`histc`: counts of values in `bins` equal bins over [min, max] (the data's range when
    both are 0), with PyTorch's bin formula."""
    x = operand(self).reshape(-1)  # type: ignore[union-attr]
    lo, hi = float(min), float(max)  # type: ignore[arg-type]
    if lo == hi and x.size:
        lo, hi = float(pk.min(x).item()), float(pk.max(x).item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    inside = pk.logical_and(pk.greater_equal(x, lo), pk.less_equal(x, hi))
    # PyTorch's order, in the input's dtype: (x - lo) * bins / (hi - lo)
    span = pk.subtract(pk.full((), hi, dtype=x.dtype), pk.full((), lo, dtype=x.dtype))
    pos = pk.divide(pk.multiply(pk.subtract(x, lo), bins), span).astype(pk.i64)
    pos = pk.minimum(pk.where(inside, pos, 0), bins - 1)
    counts = pk.scatter_add(pk.zeros((bins,), dtype=x.dtype), 0, pos,
                            inside.astype(x.dtype))
    return new(counts, self.dtype)


def bincount(self: torch.Tensor, weights: torch.Tensor | None = None,
             minlength: int = 0) -> torch.Tensor:
    """`bincount`: how often each non-negative integer occurs (or its summed weights)."""
    x = operand(self, torch.int64).reshape(-1)  # type: ignore[union-attr]
    size = max(int(pk.max(x).item()) + 1 if x.size else 0, minlength)
    if weights is None:
        return new(pk.scatter_add(pk.zeros((size,), dtype=pk.i64), 0, x,
                                  pk.ones(x.shape, dtype=pk.i64)))
    dtype = torch.float32 if weights.dtype == torch.float32 else torch.float64  # PyTorch's
    w = operand(weights, dtype).reshape(-1)  # type: ignore[union-attr]
    return new(pk.scatter_add(pk.zeros((size,), dtype=pk_dtype(dtype)), 0, x, w))


# ---------------------------------------------------------------- scans by doubling

Combine = Callable[[tuple[pk.Tensor, ...], tuple[pk.Tensor, ...]], tuple[pk.Tensor, ...]]


def _doubling_scan(state: tuple[pk.Tensor, ...], axis: int,
                   combine: Combine) -> tuple[pk.Tensor, ...]:
    """The inclusive scan of `combine` (associative; its first argument is the earlier
    element) along axis."""
    n = state[0].shape[axis]
    step = 1
    while step < n:
        lo = tuple(slice(0, n - step) if d == axis else slice(None)
                   for d in range(state[0].ndim))
        hi = tuple(slice(step, n) if d == axis else slice(None) for d in range(state[0].ndim))
        head = tuple(slice(0, step) if d == axis else slice(None)
                     for d in range(state[0].ndim))
        merged = combine(tuple(t[lo] for t in state), tuple(t[hi] for t in state))
        state = tuple(pk.concat([t[head], m], axis=axis) for t, m in zip(state, merged))
        step *= 2
    return state


def _extreme_combine(take_later: Callable[[pk.Tensor, pk.Tensor], pk.Tensor]) -> Combine:
    def combine(a: tuple[pk.Tensor, ...], b: tuple[pk.Tensor, ...]) -> tuple[pk.Tensor, ...]:
        later = take_later(a[0], b[0])
        return pk.where(later, b[0], a[0]), pk.where(later, b[1], a[1])
    return combine


def _later_max(a: pk.Tensor, b: pk.Tensor) -> pk.Tensor:
    """Whether the later element b wins a running max: larger or equal, or NaN, unless a
    NaN came first (NaN propagates, its index with it)."""
    if not a.dtype.is_float:
        return pk.greater_equal(b, a)
    return pk.logical_and(pk.logical_not(pk.isnan(a)),
                          pk.logical_or(pk.greater_equal(b, a), pk.isnan(b)))


def _later_min(a: pk.Tensor, b: pk.Tensor) -> pk.Tensor:
    if not a.dtype.is_float:
        return pk.less_equal(b, a)
    return pk.logical_and(pk.logical_not(pk.isnan(a)),
                          pk.logical_or(pk.less_equal(b, a), pk.isnan(b)))


def _cum_extreme(self: torch.Tensor, values: torch.Tensor, indices: torch.Tensor, dim: int,
                 later: Callable[[pk.Tensor, pk.Tensor], pk.Tensor]) -> None:
    x = operand(self)
    if x.dtype == pk.bool_:  # type: ignore[union-attr]
        x = x.astype(pk.u8)  # type: ignore[union-attr]
    if x.ndim == 0:  # type: ignore[union-attr]
        write(values, x)
        write(indices, 0)
        return
    axis = dim % x.ndim  # type: ignore[union-attr]
    shape = [1] * x.ndim  # type: ignore[union-attr]
    shape[axis] = x.shape[axis]  # type: ignore[union-attr]
    idx = pk.arange(x.shape[axis], dtype=pk.i64).reshape(shape).broadcast_to(x.shape)  # type: ignore
    v, i = _doubling_scan((x, idx), axis, _extreme_combine(later))  # type: ignore[arg-type]
    write(values, v)
    write(indices, i)


def cummax_helper(self: torch.Tensor, values: torch.Tensor, indices: torch.Tensor,
                  dim: int) -> None:
    """`_cummax_helper`: the running maximum and the index where it was last reached."""
    _cum_extreme(self, values, indices, dim, _later_max)


def cummin_helper(self: torch.Tensor, values: torch.Tensor, indices: torch.Tensor,
                  dim: int) -> None:
    """`_cummin_helper`."""
    _cum_extreme(self, values, indices, dim, _later_min)


SEQUENTIAL_SCAN = 256  # scans up to this long go element by element, as PyTorch's CPU kernel


def _log_add_exp(a: tuple[pk.Tensor, ...], b: tuple[pk.Tensor, ...]) -> tuple[pk.Tensor]:
    """log(exp(a) + exp(b)) as max + log1p(exp(min - max)), PyTorch's formula (NaN
    propagates; equal infinities give a)."""
    x, y = a[0], b[0]
    lo = pk.where(pk.isnan(y), y, pk.minimum(x, y))
    hi = pk.where(pk.isnan(y), y, pk.maximum(x, y))
    r = pk.add(pk.log1p(pk.exp(pk.subtract(lo, hi))), hi)
    general = pk.logical_or(pk.not_equal(lo, hi), pk.isfinite(lo))
    return (pk.where(general, r, x),)


def _sequential_scan(x: pk.Tensor, axis: int, combine: Combine) -> pk.Tensor:
    """The inclusive scan along axis one element after the other (PyTorch's order of
    rounding)."""
    out = x.copy()
    n = x.shape[axis]
    acc = None
    for i in range(n):
        key = tuple(slice(i, i + 1) if d == axis else slice(None) for d in range(x.ndim))
        acc = x[key] if acc is None else combine((acc,), (x[key],))[0]
        out[key] = acc
    return out


def logcumsumexp(self: torch.Tensor, dim: int) -> torch.Tensor:
    """`_logcumsumexp`: log(cumsum(exp(x))) by a scan of log-add-exp (no overflow or
    underflow of the exponentials): element by element for short scans, as PyTorch's CPU
    kernel rounds, by doubling for long ones."""
    x = operand(self)
    if x.ndim == 0:  # type: ignore[union-attr]
        return new(x, self.dtype)
    axis = dim % x.ndim  # type: ignore[union-attr]
    if x.shape[axis] <= SEQUENTIAL_SCAN:  # type: ignore[union-attr]
        return new(_sequential_scan(x, axis, _log_add_exp), self.dtype)  # type: ignore
    (r,) = _doubling_scan((x,), axis, _log_add_exp)  # type: ignore[arg-type]
    return new(r, self.dtype)
