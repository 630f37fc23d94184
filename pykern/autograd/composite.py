"""Backward for the ops beyond elementwise, matmul, sum/mean and views.

Two ways, whichever is simpler and exact: an op whose fused kernel has a short backward
formula records it (softmax, log_softmax, max/min, where, concat, cumsum, take); an op that
is a short composition of differentiable ops runs as that composition while it is recorded
(var/std, clip, stack, layer_norm, attention), so its gradient follows from theirs. Other
ops have files of their own: gather_backward (take_along_axis, scatter_add, sort, topk),
conv_backward (conv2d, conv_transpose2d), prod_backward. An op with no backward refuses
tensors that require grad (`refuse_grad`), so no gradient is ever silently missing."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import pykern as pk
from pykern.autograd.gather_backward import forward_index
from pykern.autograd.graph import needs_grad, record
from pykern.autograd.mode import no_grad
from pykern.autograd.records import reduced_axes, with_reduced_axes


def refuse_grad(name: str, *inputs: Any) -> None:
    """For ops without a backward: a clear error when an input requires grad (and grad mode
    records), instead of a result that silently cuts the graph."""
    flat = [t for x in inputs for t in (x if isinstance(x, (list, tuple)) else (x,))]
    if needs_grad(*flat, complex_ok=True):
        raise NotImplementedError(f"pk.{name} has no backward yet: compute it under pk.no_grad() "
                                  "or on .detach()ed inputs")


def softmax(fused: Any, x: Any, axis: int) -> Any:
    with no_grad():
        out = fused(x, axis)
    return record("softmax", out, (x,),
                  lambda g: (out * (g - pk.sum(g * out, axis=axis, keepdims=True)),))


def log_softmax(fused: Any, x: Any, axis: int) -> Any:
    with no_grad():
        out = fused(x, axis)
    return record("log_softmax", out, (x,),
                  lambda g: (g - pk.exp(out) * pk.sum(g, axis=axis, keepdims=True),))


def extremum(name: str, fused: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    """max/min over `axis`: the gradient goes to the elements equal to the result, shared
    equally among ties."""
    with no_grad():
        out = fused(x, axis=axis, keepdims=keepdims)

    def back(g: Any) -> tuple[Any]:
        m = out if keepdims else with_reduced_axes(out, axis, x.ndim)
        gk = g if keepdims else with_reduced_axes(g, axis, x.ndim)
        hit = (x == m).astype(x.dtype)
        return (gk * hit / pk.sum(hit, axis=axis, keepdims=True),)

    return record(name, out, (x,), back)


def where(fused: Any, c: Any, a: Any, b: Any) -> Any:
    with no_grad():
        out = fused(c, a, b)
    return record("where", out, (c, a, b),
                  lambda g: (None, pk.where(c, g, 0.0), pk.where(c, 0.0, g)))


def var(x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
    n = math.prod(x.shape[a] for a in reduced_axes(axis, x.ndim))
    d = x - pk.mean(x, axis=axis, keepdims=True)
    dof = n - correction
    total = pk.sum(d * d, axis=axis, keepdims=keepdims)
    return total / dof if dof > 0 else total * math.nan


def clip(x: Any, lo: Any, hi: Any) -> Any:
    out = x
    if lo is not None:
        out = pk.maximum(out, lo)
    if hi is not None:
        out = pk.minimum(out, hi)
    return out


def concat(fused: Any, tensors: Sequence[Any], axis: int | None) -> Any:
    if axis is None:
        return concat(fused, [pk.asarray(t).reshape(-1) for t in tensors], 0)
    ts = [pk.asarray(t) for t in tensors]
    with no_grad():
        out = fused(ts, axis)
    ax = axis + out.ndim if axis < 0 else axis

    def back(g: Any) -> tuple[Any, ...]:
        grads, start = [], 0
        for t in ts:
            key = (slice(None),) * ax + (slice(start, start + t.shape[ax]),)
            grads.append(g[key])
            start += t.shape[ax]
        return tuple(grads)

    return record("concat", out, ts, back)


def cumsum(fused: Any, x: Any, axis: int | None, dtype: Any) -> Any:
    if axis is None:
        return cumsum(fused, x.reshape(-1), 0, dtype)
    with no_grad():
        out = fused(x, axis, dtype)
    if not out.dtype.is_float:  # dtype= an integer type: nothing to differentiate
        return out
    return record("cumsum", out, (x,),
                  lambda g: (pk.cumsum(g.flip(axis), axis=axis).flip(axis),))


def take(fused: Any, x: Any, indices: Any, axis: int | None) -> Any:
    """The gradient of `take` adds `g` back at the indices taken (scatter_add), so repeated
    indices accumulate."""
    if axis is None:
        return take(fused, x.reshape(-1), indices, 0)
    with no_grad():
        out = fused(x, indices, axis)  # host indices are range-checked there
    idx = pk.asarray(indices)
    ax = axis + x.ndim if axis < 0 else axis

    def back(g: Any) -> tuple[Any, None]:
        # g has x's shape with axis `ax` replaced by idx's shape: gather it as one axis
        g2 = g.reshape(g.shape[:ax] + (idx.size,) + g.shape[ax + idx.ndim:])
        shape = [1] * g2.ndim
        shape[ax] = idx.size
        index = forward_index(idx.reshape(-1), x.shape[ax]).reshape(tuple(shape))
        index = index.broadcast_to(g2.shape)
        return pk.scatter_add(pk.zeros(x.shape, g.dtype), ax, index, g2), None

    return record("take", out, (x, idx), back)


def layer_norm(x: Any, normalized_shape: Sequence[int], weight: Any, bias: Any,
               eps: float) -> Any:
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mu = pk.mean(x, axis=axes, keepdims=True)
    d = x - mu
    y = d / pk.sqrt(pk.mean(d * d, axis=axes, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def attention(q: Any, k: Any, v: Any, causal: bool, scale: float | None) -> Any:
    s = (1.0 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = (q @ k.mT) * s
    if causal:
        lq, lk = q.shape[-2], k.shape[-2]
        keep = pk.asarray(np.tril(np.ones((lq, lk), bool)))
        scores = pk.where(keep, scores, -math.inf)
    return pk.softmax(scores, axis=-1) @ v

