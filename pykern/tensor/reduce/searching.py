"""Searching: `searchsorted` (a binary-search kernel), `nonzero` and `count_nonzero`, and the
index helper behind `repeat` with per-element counts."""

from __future__ import annotations

import functools

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.core import promotion as pr
from pykern.tensor.core import strided
from pykern.tensor.complex.complex_elementwise import not_defined
from pykern.tensor.index.indexing import take
from pykern.tensor.reduce.scan import cumsum
from pykern.ops.public import declare, torch_names
from pykern.tensor.reduce.reduction import sum as _sum
from pykern.tensor.create.creation import arange
from pykern.tensor.create.creation import fill


@pk.func
def sorts_before(a, b):
    """numpy's sort order: nan after every number."""
    return a < b or (b != b and a == a)


@functools.cache
def search_kernel(ct: DType) -> pk.Kernel:
    CT = ct  # noqa: N806

    @pk.kernel
    def search(x1: pk.Array, v: pk.Array, out: pk.Array, side: pk.constexpr, nd: pk.constexpr):
        i = pk.global_id(0)
        if nd == 1:
            value = CT(v[i])
        else:
            idx = pk.unravel(i, out.shape)
            value = CT(v[idx])
        lo = 0
        hi = len(x1)
        while lo < hi:
            mid = (lo + hi) // 2
            if side == "left":
                go_right = sorts_before(CT(x1[mid]), value)
            else:
                go_right = not sorts_before(value, CT(x1[mid]))
            if go_right:
                lo = mid + 1
            else:
                hi = mid
        if nd == 1:
            out[i] = lo
        else:
            out[idx] = lo

    return search


def searchsorted(x1: object, x2: object, /, *, side: str = "left", sorter: object = None
                 ) -> Tensor:
    """Indices (i64) where the values of `x2` would be inserted into the sorted 1-D `x1` to keep
    it sorted: before equal values with side='left', after them with 'right' (nan sorts
    last, as numpy)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', not {side!r}")
    x1 = ew.as_tensor(x1)
    x2 = ew.as_strong(x2)
    if pr.is_complex_operand(x1) or pr.is_complex_operand(x2):
        raise not_defined("searchsorted", x1.dtype if x1.dtype.is_complex else dt.c64)
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D, got shape {x1.shape}")
    if sorter is not None:
        x1 = take(x1, ew.as_tensor(sorter))
    p = pr.result_type(x1, x2)
    v = x2 if isinstance(x2, Tensor) else ew.constant(x2, p)
    out = empty(v.shape, dt.i64)
    if x1.shape[0] == 0:
        return fill(out, 0)
    kernel = search_kernel(pr.compute_dtype(p))
    for job in strided.plan(out.shape, [v, out]):
        kernel[job.n](x1, job.views[0], job.views[1], side, job.nd)
    return out


def count_nonzero(x: object, /, axis: object = None, *, keepdims: bool = False) -> Tensor:
    """The number of nonzero elements (i64, the standard's index dtype) over `axis`."""
    return _sum(ew.not_equal(ew.as_tensor(x), 0), axis=axis, keepdims=keepdims,
                dtype=dt.i64)


@pk.kernel
def _compact(mask: pk.Array, pos: pk.Array, out: pk.Array):
    i = pk.global_id(0)
    if mask[i] != 0:
        out[pos[i] - 1] = i


def nonzero(x: object, /) -> tuple[Tensor, ...]:
    """The indices (i64, one tensor per dimension) of the nonzero elements, in row-major
    order. The result's length depends on the data: the count is read back first."""
    x = ew.as_tensor(x)
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d tensor is not supported; use nonzero(x[None])")
    mask = ew.not_equal(x, 0).astype(dt.i64).reshape(-1)
    n = mask.shape[0]
    if n == 0:
        return tuple(empty((0,), dt.i64) for _ in range(x.ndim))
    pos = cumsum(mask, axis=0)
    total = int(pos[n - 1].item())
    flat = empty((total,), dt.i64)
    if total:
        _compact[n](mask, pos, flat)
    result = []
    stride = 1
    strides = []
    for s in reversed(x.shape):
        strides.append(stride)
        stride *= s
    for s, st in zip(x.shape, reversed(strides)):
        result.append(ew.remainder(ew.floor_divide(flat, st), s))
    return tuple(result)


def repeat_indices(repeats: Tensor) -> Tensor:
    """For per-element repeat counts r: the source index of each output element (i64), i.e.
    k repeated r[k] times, computed as searchsorted(cumsum(r), arange(total), 'right')."""
    ends = cumsum(repeats.astype(dt.i64), axis=0)
    total = int(ends[ends.shape[0] - 1].item()) if ends.shape[0] else 0
    if total < 0:
        raise ValueError("repeat: repeats must be >= 0")
    return searchsorted(ends, arange(total, dtype=dt.i64), side="right")


searchsorted = declare(searchsorted, "sort", exports=("array_api",), aliases=torch_names(
    "searchsorted", "aten::searchsorted.Tensor", numpy="searchsorted", array_api="searchsorted"))
count_nonzero = declare(count_nonzero, "reduction", exports=("pk", "array_api"),
                        aliases=torch_names("count_nonzero", "aten::count_nonzero.dim_IntList",
                                            numpy="count_nonzero", array_api="count_nonzero"))
nonzero = declare(nonzero, "index", exports=("array_api",),
                  samples={"shapes": ((3, 4),), "integers": (0, 3), "dtypes": ("f32", "i32")},
                  aliases=torch_names(
    "nonzero", "aten::nonzero", numpy="nonzero", array_api="nonzero"))
