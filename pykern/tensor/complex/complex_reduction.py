"""Reductions of complex tensors. Sums and means add each part on its own, so they are the
real reductions over the part view (`complex_views.view_as_real`, whose extra last axis is
kept); products multiply halves pairwise (a tree of complex multiplications, log2(n)
launches); var and std are real: the variances of the two parts added (|z - mean|**2 is the
sum of the parts' squared deviations), as numpy. max/min/argmax/argmin raise TypeError:
complex numbers have no order.
"""

from __future__ import annotations

from typing import Any

from pykern.lang import dtypes as dt
from pykern.tensor.complex import complex_elementwise as ce
from pykern.tensor.complex.complex_views import parts, view_as_complex, view_as_real
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.reduce import reduction

Axis = Any


def axes_of(x: Tensor, axis: Axis) -> tuple[int, ...]:
    """`axis` (None, an int or a sequence) as non-negative axes of `x`."""
    return reduction.normalize_axes(axis, x.ndim)


def _as_complex(x: Tensor, dtype: object) -> Tensor:
    """`x` in the complex dtype `dtype` asks for (its own without one)."""
    if dtype is None:
        return x
    d = dt.as_dtype(dtype)
    if not d.is_complex:
        raise TypeError(f"sum/prod of a complex tensor into {d.name} would drop the imaginary "
                        "part; take .real first")
    return x if d == x.dtype else x.astype(d)


def sum(x: Tensor, axis: Axis, keepdims: bool, dtype: object) -> Tensor:  # noqa: A001
    """The sum of a complex tensor (each part summed in its own precision)."""
    x = _as_complex(x, dtype)
    r = reduction.sum(view_as_real(x), axis=axes_of(x, axis), keepdims=keepdims)
    return view_as_complex(r)


def mean(x: Tensor, axis: Axis, keepdims: bool) -> Tensor:
    """The mean of a complex tensor (nan + nanj for an empty selection, as numpy)."""
    r = reduction.mean(view_as_real(x), axis=axes_of(x, axis), keepdims=keepdims)
    return view_as_complex(r)


def var(x: Tensor, axis: Axis, keepdims: bool, correction: float, root: bool) -> Tensor:
    """var (or std with `root`) of a complex tensor: real, of its part dtype."""
    re, im = parts(x)
    axes = axes_of(x, axis)
    total = ew.add(reduction.var(re, axis=axes, correction=correction, keepdims=keepdims),
                   reduction.var(im, axis=axes, correction=correction, keepdims=keepdims))
    return ew.sqrt(total) if root else total


def prod(x: Tensor, axis: Axis, keepdims: bool, dtype: object) -> Tensor:
    """The product of a complex tensor over `axis`, as a tree of pairwise products."""
    x = _as_complex(x, dtype)
    axes = axes_of(x, axis)
    keep = [a for a in range(x.ndim) if a not in axes]
    out_shape = tuple(x.shape[a] for a in keep)
    n = 1
    for a in axes:
        n *= x.shape[a]
    z = x.permute(*keep, *axes).reshape(*out_shape, n)
    while z.shape[-1] > 1:
        half = z.shape[-1] // 2
        product = ce.run_binary(*ce.BINARY["multiply"], z[..., :half], z[..., half:2 * half])
        if z.shape[-1] % 2:  # the odd one out joins the first product
            product[..., :1] = ce.run_binary(*ce.BINARY["multiply"], product[..., :1],
                                             z[..., 2 * half:])
        z = product
    if z.shape[-1] == 0:
        result = empty(out_shape, x.dtype)
        ew.assign(result, 1.0)
    else:
        result = z.reshape(out_shape)
    if keepdims:
        result = result.reshape(tuple(1 if a in axes else s for a, s in enumerate(x.shape)))
    return result


def truth(op: str, x: Tensor, axis: Axis, keepdims: bool) -> Tensor:
    """any/all of a complex tensor: of `x != 0`."""
    nonzero = ew.not_equal(x, 0j)
    return getattr(reduction, op)(nonzero, axis=axis, keepdims=keepdims)
