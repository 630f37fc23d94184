"""Backward of the reductions: `sum` and `mean` send the gradient back broadcast over the
reduced axes (`record_reduction`); `prod` gives each element the product of the other elements
of its slice, computed without dividing by zero.

With z the number of zeros in a slice and P the product of its non-zero elements: when z is 0
an element x gets P / x; when z is 1 the zero element gets P and the others 0 (their
product includes the zero); when z is 2 or more every element gets 0.

Complex elements (PyTorch's convention, z.grad = dL/dx + i dL/dy): the product is
holomorphic in each element, so an element gets g times the conjugate of that share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykern as pk
from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad


def prod(fused: Callable[[Any], Any], x: Any, axis: Any, keepdims: bool) -> Any:
    """`fused(x)` is the product kernel's result; recorded when it is a float or complex."""
    with no_grad():
        out = fused(x)
    if not (out.dtype.is_float or out.dtype.is_complex):
        return out

    def back(g: Any) -> tuple[Any]:
        gk = g if keepdims else with_reduced_axes(g, axis, x.ndim)
        zero = x == 0
        nonzero_x = pk.where(zero, 1.0, x)
        zeros = pk.sum(zero.astype(pk.i32), axis=axis, keepdims=True)
        others = pk.prod(nonzero_x, axis=axis, keepdims=True)
        share = pk.where(zeros == 0, others / nonzero_x,
                         pk.where((zeros == 1) & zero, others, 0.0))
        return (gk * (pk.conj(share) if share.dtype.is_complex else share),)

    return record("prod", out, (x,), back)


def record_reduction(name: str, out: Any, x: Any, axis: Any, keepdims: bool,
                     scale: float) -> Any:
    """sum (`scale` 1) and mean (`scale` 1/n) over `axis`: the gradient broadcast back."""
    if not (out.dtype.is_float or out.dtype.is_complex):
        return out

    def back(g: Any) -> tuple[Any]:
        if not keepdims:
            g = with_reduced_axes(g, axis, x.ndim)
        g = g.broadcast_to(x.shape)
        return (g * scale if scale != 1.0 else g,)

    return record(name, out, (x,), back, saved=())


def reduced_axes(axis: Any, ndim: int) -> list[int]:
    """The axes a reduction's `axis` (None, an int or a sequence) names, non-negative, sorted."""
    if axis is None:
        return list(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return sorted(a + ndim if a < 0 else a for a in axes)


def with_reduced_axes(g: Any, axis: Any, ndim: int) -> Any:
    """`g`, shaped as a reduction over `axis` without keepdims, with those axes back (size 1)."""
    shape = list(g.shape)
    for a in reduced_axes(axis, ndim):
        shape.insert(a, 1)
    return g.reshape(tuple(shape))
