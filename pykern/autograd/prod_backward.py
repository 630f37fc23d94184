"""Backward of `prod`: each element's gradient is the product of the other elements of its
slice, computed without dividing by zero.

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
from pykern.autograd.records import with_reduced_axes


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
