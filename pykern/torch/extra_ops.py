"""More operators composed from pykern ops: scatter and index reductions (by sorting the
targets and a segmented scan), mode, isin, frexp, repeat_interleave, angle, channel_shuffle,
PReLU and nonzero_static."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import pykern as pk
from pykern.torch.args import new, operand, write
from pykern.torch.indexing import _scatter_key, _sliced_to
from pykern.torch.linalg_ops import lu_factor_ex_out, lu_out
from pykern.torch.more_ops import _doubling_scan, _runs, reduced_shape

Reduce = Callable[[pk.Tensor, pk.Tensor], pk.Tensor]
_REDUCE: dict[str, Reduce] = {"sum": pk.add, "prod": pk.multiply, "amax": pk.maximum,
                              "amin": pk.minimum, "mean": pk.add}


def _segment_reduce(keys: pk.Tensor, values: pk.Tensor, fn: Reduce
                    ) -> tuple[pk.Tensor, pk.Tensor]:
    """For 1-d keys and values: the distinct keys and the reduction of each one's values,
    by a stable sort on the keys and a segmented doubling scan."""
    order = pk.argsort(keys)
    k = pk.take(keys, order, axis=0)
    v = pk.take(values, order, axis=0)

    def combine(a: tuple[pk.Tensor, ...], b: tuple[pk.Tensor, ...]) -> tuple[pk.Tensor, ...]:
        same = pk.equal(a[0], b[0])
        return b[0], pk.where(same, fn(a[1], b[1]), b[1])

    k, v = _doubling_scan((k, v), 0, combine)
    n = k.shape[0]
    last = pk.ones((n,), dtype=pk.bool_)
    if n > 1:
        last[:-1] = pk.not_equal(k[:-1], k[1:])
    return k[last], v[last]


def _reduce_into(out: torch.Tensor, keys: pk.Tensor, values: pk.Tensor, reduce: str,
                 include_self: bool) -> torch.Tensor:
    """out[key] = reduce(out[key] (if include_self), values of key), for flat keys into out."""
    flat = operand(out).reshape(-1).copy()  # type: ignore[union-attr]
    fn = _REDUCE[reduce]
    values = values.astype(flat.dtype)
    if reduce == "mean" and not flat.dtype.is_float:
        values = values.astype(pk.f64 if flat.device.features.fp64 else pk.f32)
    uk, uv = _segment_reduce(keys, values, fn)
    if uk.shape[0] == 0:
        return out
    if reduce == "mean":
        counts = _segment_reduce(keys, pk.ones(keys.shape, dtype=uv.dtype), pk.add)[1]
        current = pk.take(flat, uk, axis=0).astype(uv.dtype)
        if include_self:
            uv, counts = pk.add(uv, current), pk.add(counts, 1.0)
        uv = pk.divide(uv, counts)
        if not flat.dtype.is_float:
            uv = pk.floor(uv)
    elif include_self:
        uv = fn(pk.take(flat, uk, axis=0), uv.astype(flat.dtype))
    flat[uk] = uv.astype(flat.dtype)
    return write(out, flat.reshape(tuple(out.shape)))


def scatter_reduce_out(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor,
                       reduce: str, *, include_self: bool = True,
                       out: torch.Tensor) -> torch.Tensor:
    """`scatter_reduce.two_out`: sum, prod, mean, amax or amin of src's values into self's
    positions that index names along dim."""
    write(out, operand(self))
    i = operand(index)
    if i.size == 0:  # type: ignore[union-attr]
        return out
    x = operand(out)
    nd = max(x.ndim, 1)  # type: ignore[union-attr]
    if x.ndim == 0:  # type: ignore[union-attr]
        i = i.reshape(1)  # type: ignore[union-attr]
    d = dim % nd
    s = operand(src, self.dtype)
    s = s.reshape(1) if s.ndim == 0 else _sliced_to(s, i, d)  # type: ignore[union-attr,arg-type]
    key = _scatter_key(i, d)  # type: ignore[arg-type]
    shape = tuple(out.shape) or (1,)
    positions = pk.arange(math.prod(shape), dtype=pk.i64).reshape(shape)[key]
    return _reduce_into(out, positions.reshape(-1), s.reshape(-1), reduce, include_self)


def index_reduce_out(self: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor,
                     reduce: str, *, include_self: bool = True,
                     out: torch.Tensor) -> torch.Tensor:
    """`index_reduce.out`: the slices of source along dim reduced into self's slices that
    index names."""
    write(out, operand(self))
    if index.numel() == 0:
        return out
    shape = tuple(out.shape) or (1,)
    d = dim % len(shape)
    idx = operand(index, torch.int64).reshape(-1)  # type: ignore[union-attr]
    grid = pk.arange(math.prod(shape), dtype=pk.i64).reshape(shape)
    positions = pk.take(grid, idx, axis=d)
    values = operand(source, self.dtype).reshape(positions.shape)  # type: ignore[union-attr]
    return _reduce_into(out, positions.reshape(-1), values.reshape(-1), reduce, include_self)


def mode(self: torch.Tensor, dim: int = -1,
         keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """`mode`: the most frequent value along dim (the smallest of equally frequent ones) and
    an index where it occurs."""
    x = operand(self)
    shape = reduced_shape(self, dim, keepdim)
    if x.ndim == 0:  # type: ignore[union-attr]
        return new(x, self.dtype), new(pk.zeros((), dtype=pk.i64))
    axis = dim % x.ndim  # type: ignore[union-attr]
    moved = pk.array_api.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    values, indices = [], []
    for r in range(rows.shape[0]):  # one row at a time: runs of a sorted row
        order = pk.argsort(rows[r])
        srt = pk.take(rows[r], order, axis=0)
        first, run = _runs(srt)
        counts = pk.scatter_add(pk.zeros((srt.shape[0],), dtype=pk.i64), 0, run,
                                pk.ones(run.shape, dtype=pk.i64))
        best = pk.argmax(counts)  # the first (smallest) value of the largest count
        at = pk.argmax(pk.equal(run, best).astype(pk.i32))
        values.append(pk.take(srt, at.reshape(1), axis=0))
        indices.append(pk.take(order, at.reshape(1), axis=0))
    v = pk.concat(values, axis=0).reshape(shape)
    i = pk.concat(indices, axis=0).reshape(shape)
    return new(v, self.dtype), new(i, torch.int64)


def isin_out(elements: object, test_elements: object, *, assume_unique: bool = False,
             invert: bool = False, out: torch.Tensor) -> torch.Tensor:
    """`isin` (all three overloads): whether each element occurs among test_elements."""
    e = operand(elements)
    t = operand(test_elements)
    if not isinstance(t, pk.Tensor):
        found = pk.equal(e, t)
    else:
        flat = pk.sort(t.reshape(-1)) if t.size else t.reshape(-1)
        ev = e if isinstance(e, pk.Tensor) else pk.full((), e, dtype=flat.dtype)
        if flat.shape[0] == 0:
            found = pk.zeros(ev.shape, dtype=pk.bool_)
        else:
            common = pk.result_type(ev, flat)
            ev, flat = ev.astype(common), flat.astype(common)
            pos = pk.array_api.searchsorted(flat, ev.reshape(-1)).reshape(ev.shape)
            pos = pk.minimum(pos, flat.shape[0] - 1)
            found = pk.equal(pk.take(flat, pos.reshape(-1), axis=0).reshape(ev.shape), ev)
    return write(out, pk.logical_not(found) if invert else found)


def frexp_out(self: torch.Tensor, *, mantissa: torch.Tensor,
              exponent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`frexp.Tensor_out`: x = mantissa · 2^exponent with |mantissa| in [0.5, 1) (0, ±inf and
    NaN keep exponent 0), scaled by exact powers of two."""
    x = operand(self, torch.float64 if self.dtype == torch.float64 else torch.float32)
    a = pk.abs(x)
    finite = pk.logical_and(pk.isfinite(x), pk.not_equal(x, 0.0))
    safe = pk.where(finite, a, 1.0)
    e = pk.add(pk.floor(pk.log2(safe)), 1.0)
    m = pk.multiply(x, pk.exp2(pk.negative(e)))
    big = pk.greater_equal(pk.abs(m), 1.0)
    m, e = pk.where(big, pk.multiply(m, 0.5), m), pk.where(big, pk.add(e, 1.0), e)
    small = pk.logical_and(finite, pk.less(pk.abs(m), 0.5))
    m, e = pk.where(small, pk.multiply(m, 2.0), m), pk.where(small, pk.subtract(e, 1.0), e)
    write(mantissa, pk.where(finite, m, x))
    write(exponent, pk.where(finite, e, 0.0).astype(pk.i32))
    return mantissa, exponent


def repeat_interleave(repeats: torch.Tensor, *, output_size: int | None = None) -> torch.Tensor:
    """`repeat_interleave.Tensor`: i repeated repeats[i] times, for each i."""
    r = operand(repeats, torch.int64).reshape(-1)  # type: ignore[union-attr]
    ends = pk.cumsum(r)
    total = int(ends[-1].item()) if r.shape[0] else 0
    if output_size is not None:
        total = output_size
    if total == 0:
        return new(pk.zeros((0,), dtype=pk.i64), repeats.dtype)
    slots = pk.arange(total, dtype=pk.i64)
    return new(pk.array_api.searchsorted(ends, slots, side="right"), repeats.dtype)


def angle(self: torch.Tensor) -> torch.Tensor:
    """`angle`: the argument of a complex number; π for negative reals, 0 otherwise (NaN
    stays NaN)."""
    x = operand(self)
    if x.dtype.is_complex:  # type: ignore[union-attr]
        return new(pk.atan2(pk.imag(x), pk.real(x)))
    d = self.dtype if self.is_floating_point() else torch.get_default_dtype()
    xf = operand(self, d)
    r = pk.where(pk.less(xf, 0), math.pi, 0.0)
    return new(pk.where(pk.isnan(xf), xf, r), d)


def channel_shuffle(self: torch.Tensor, groups: int) -> torch.Tensor:
    """`channel_shuffle`: the channels of each group interleaved (a copy)."""
    n, c = self.shape[0], self.shape[1]
    rest = self.shape[2:]
    return self.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(
        n, c, *rest).clone()


def prelu(self: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """`_prelu_kernel`: x where x > 0, else weight · x (weight broadcast as given)."""
    x, w = operand(self), operand(weight, self.dtype)
    return new(pk.where(pk.greater(x, 0), x, pk.multiply(w, x)), self.dtype)


def prelu_backward(grad_output: torch.Tensor, self: torch.Tensor,
                   weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`_prelu_kernel_backward`: (g where x > 0 else w·g, g·x where x <= 0, summed to
    weight's shape)."""
    g, x, w = operand(grad_output), operand(self), operand(weight, self.dtype)
    positive = pk.greater(x, 0)
    gx = pk.where(positive, g, pk.multiply(w, g))
    gw = pk.where(positive, 0.0, pk.multiply(g, x))
    gw_t = new(gw, self.dtype)
    lead = gw_t.dim() - weight.dim()
    axes = list(range(lead)) + [lead + i for i, s in enumerate(weight.shape) if s == 1 and
                                gw_t.shape[lead + i] != 1]
    grad_w = gw_t.sum(dim=axes, keepdim=True).reshape(weight.shape) if axes else gw_t
    return new(gx, self.dtype), grad_w.reshape(weight.shape)


def nonzero_static(self: torch.Tensor, *, size: int, fill_value: int = -1) -> torch.Tensor:
    """`nonzero_static`: nonzero's rows, cut or padded with fill_value to `size` rows."""
    found = torch.nonzero(self)
    rows = found[:size]
    if rows.shape[0] == size:
        return rows.clone()
    pad = torch.full((size - rows.shape[0], max(self.dim(), 1) if self.dim() else 0),
                     fill_value, dtype=torch.int64, device=self.device)
    return torch.cat([rows, pad]) if rows.numel() or pad.numel() else pad


def linalg_lu_factor_ex(A: torch.Tensor, *, pivot: bool = True,  # noqa: N803
                        check_errors: bool = False) -> tuple[torch.Tensor, ...]:
    """`linalg_lu_factor_ex` (not structured)."""
    n = A.shape[-1]
    lu = torch.empty(A.shape, dtype=A.dtype, device=A.device)
    piv = torch.empty(A.shape[:-2] + (n,), dtype=torch.int32, device=A.device)
    info = torch.empty(A.shape[:-2], dtype=torch.int32, device=A.device)
    return lu_factor_ex_out(A, pivot=pivot, check_errors=check_errors, LU=lu, pivots=piv,
                            info=info)


def linalg_lu(A: torch.Tensor, *, pivot: bool = True) -> tuple[torch.Tensor, ...]:  # noqa: N803
    """`linalg_lu` (not structured)."""
    outs = [torch.empty(A.shape, dtype=A.dtype, device=A.device) for _ in range(3)]
    return lu_out(A, pivot=pivot, P=outs[0], L=outs[1], U=outs[2])



def weight_norm_backward(grad_w: torch.Tensor, saved_v: torch.Tensor, saved_g: torch.Tensor,
                         saved_norms: torch.Tensor, dim: int
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """`_weight_norm_interface_backward` of w = g · v / |v| (norms over every dim but `dim`):
    grad_g = Σ grad_w · v / |v|, grad_v = g / |v| · (grad_w - v · Σ(grad_w · v) / |v|²)."""
    gw, v = operand(grad_w), operand(saved_v)
    g, norm = operand(saved_g, saved_v.dtype), operand(saved_norms, saved_v.dtype)
    axes = tuple(d for d in range(v.ndim) if d != dim % max(v.ndim, 1))  # type: ignore
    dot = pk.sum(pk.multiply(gw, v), axis=axes, keepdims=True)
    grad_g = pk.divide(dot, norm)
    grad_v = pk.multiply(pk.divide(g, norm), pk.subtract(
        gw, pk.multiply(v, pk.divide(dot, pk.multiply(norm, norm)))))
    return new(grad_v, saved_v.dtype), new(grad_g.reshape(tuple(saved_g.shape)), saved_g.dtype)


def embedding_renorm_(self: torch.Tensor, indices: torch.Tensor, max_norm: float,
                      norm_type: float) -> torch.Tensor:
    """`embedding_renorm_`: each row that indices name scaled to norm max_norm where its
    norm_type-norm is larger (max_norm / (norm + 1e-7), as PyTorch)."""
    w = operand(self)
    rows = pk.array_api.unique_values(operand(indices, torch.int64).reshape(-1))  # type: ignore
    if rows.shape[0] == 0:
        return self
    picked = pk.take(w, rows, axis=0)
    a = pk.abs(picked)
    if norm_type == math.inf:
        norm = pk.max(a, axis=1, keepdims=True)
    elif norm_type == 1:
        norm = pk.sum(a, axis=1, keepdims=True)
    else:
        norm = pk.pow(pk.sum(pk.pow(a, float(norm_type)), axis=1, keepdims=True),
                      1.0 / norm_type)
    scale = pk.where(pk.greater(norm, max_norm), pk.divide(max_norm, pk.add(norm, 1e-7)), 1.0)
    w[rows] = pk.multiply(picked, scale)  # type: ignore[index]
    return self


def scatter_legacy_reduce_out(self: torch.Tensor, dim: int, index: torch.Tensor,
                              src: torch.Tensor, reduce: str, *,
                              out: torch.Tensor) -> torch.Tensor:
    """`scatter.reduce_out`: scatter with reduce "add" or "multiply" (self's values
    included)."""
    return scatter_reduce_out(self, dim, index, src, _LEGACY[reduce], include_self=True,
                              out=out)


def scatter_value_reduce_out(self: torch.Tensor, dim: int, index: torch.Tensor, value: object,
                             reduce: str, *, out: torch.Tensor) -> torch.Tensor:
    """`scatter.value_reduce_out`: scatter_ of a scalar with reduce "add" or "multiply"."""
    src = torch.full(index.shape, value, dtype=self.dtype, device=self.device)  # type: ignore
    return scatter_legacy_reduce_out(self, dim, index, src, reduce, out=out)


_LEGACY = {"add": "sum", "multiply": "prod"}
