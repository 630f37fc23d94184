"""Backward of the ops that move elements by index: `take_along_axis`, `scatter_add`, `sort`
and `topk` (each declared with its op; `take` and `concat` beside theirs).

Each is the adjoint of the other: the gradient of a gather along an axis is a scatter-add of
`g` into zeros (repeated indices accumulate), and the gradient of a scatter-add's source is a
gather of `g`. sort and topk are gathers by the indices they found. Index tensors are
normalised first as the forward read them (negative ones wrapped, a device tensor's
out-of-range ones clipped), because scatter_add itself skips negative indices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykern as pk
from pykern.autograd.graph import needs_grad, record, refuse_complex
from pykern.autograd.mode import no_grad


def forward_index(idx: Any, n: int) -> Any:
    """The positions a gather with `idx` along an axis of length `n` read: negative indices
    counted from the end, the rest clipped to [0, n) as take/take_along_axis clip them."""
    return pk.clip(pk.where(idx < 0, idx + n, idx), 0, max(n - 1, 0))


def take_along_axis(fused: Any, x: Any, indices: Any, axis: int | None = -1) -> Any:
    """out = x gathered along `axis`; its gradient scatter-adds `g` back. Where the indices
    broadcast over a size-1 dimension of x, the engine sums the scattered gradient back."""
    return record_gather("take_along_axis", fused, pk.asarray(x), indices, axis,
                         _along_axis_gradient)


def _along_axis_gradient(x: Any, idx: Any, ax: int) -> Callable[[Any], tuple[Any, None]]:
    def back(g: Any) -> tuple[Any, None]:
        shape = tuple(g.shape[:ax]) + (x.shape[ax],) + tuple(g.shape[ax + 1:])
        index = forward_index(idx, x.shape[ax]).broadcast_to(g.shape)
        return pk.scatter_add(pk.zeros(shape, g.dtype), ax, index, g), None

    return back


def record_gather(name: str, forward: Callable[..., Any], x: Any, indices: Any,
                  axis: int | None, gradient: Callable[[Any, Any, int], Callable[..., Any]]
                  ) -> Any:
    """A gather of the tensor `x` at `indices` along `axis` (None: of the flattened x) run by
    `forward` and recorded with `gradient(x, indices, axis)`'s function of `g`. Complex x is
    gathered as a real view of its parts, which differentiates itself; results that are not
    floats are not recorded."""
    if x.dtype.is_complex:
        return forward(x, indices, axis)
    if axis is None:
        return record_gather(name, forward, x.reshape(-1), indices, 0, gradient)
    with no_grad():
        out = forward(x, indices, axis)  # host indices are range-checked there
    idx = pk.asarray(indices)
    if not out.dtype.is_float:
        return out
    ax = axis + x.ndim if axis < 0 else axis
    return record(name, out, (x, idx), gradient(x, idx, ax))


def scatter_add(fused: Any, x: Any, axis: int, index: Any, src: Any) -> Any:
    """out = x + src scattered along `axis`: x's gradient is `g`, src's the gather of `g` at
    the indices (zero where src lies outside index's shape or an index was skipped)."""
    if pk.asarray(x).dtype.is_complex:  # a real scatter of the part views (it differentiates)
        return fused(x, axis, index, src)
    refuse_complex((x, src))
    with no_grad():
        out = fused(x, axis, index, src)  # checks the arguments, host indices included
    xt, st, idx = pk.asarray(x), pk.asarray(src), pk.asarray(index)
    if not out.dtype.is_float:
        return out
    ax = axis + xt.ndim if axis < 0 else axis

    def back(g: Any) -> tuple[Any, Any]:
        gs = None
        if getattr(st, "requires_grad", False):
            n = xt.shape[ax]
            corner = tuple(slice(0, m) if d != ax else slice(None)
                           for d, m in enumerate(idx.shape))
            picked = pk.take_along_axis(g[corner], pk.clip(idx, 0, max(n - 1, 0)), axis=ax)
            gs = pk.where((idx >= 0) & (idx < n), picked, 0.0)
            if tuple(gs.shape) != tuple(st.shape):
                full = pk.zeros(st.shape, gs.dtype)
                full[tuple(slice(0, m) for m in gs.shape)] = gs
                gs = full
        return g, gs

    return record("scatter_add", out, (xt, st), back)


def sorted_values(values: Any, indices: Any, x: Any, axis: int, name: str) -> Any:
    """`values` (x sorted, or its top k, along `axis`) recorded as the gather of x at
    `indices`: the gradient goes back to the positions the values came from (a scatter of g:
    the same for complex values, numpy's order picking the positions)."""
    if not (values.dtype.is_float or values.dtype.is_complex) or \
            not needs_grad(x, complex_ok=True):
        return values
    if x.ndim == 0:
        return record(name, values, (x,), lambda g: (g,))
    ax = axis + x.ndim if axis < 0 else axis

    def back(g: Any) -> tuple[Any]:
        return (pk.scatter_add(pk.zeros(x.shape, g.dtype), ax, indices, g),)

    return record(name, values, (x,), back)
