"""What the tensor ops call to record their backward: one function per kind of op, so that
each op module adds a line, not a mechanism."""

from __future__ import annotations

from typing import Any

import pykern as pk
from pykern.autograd import derivatives
from pykern.autograd.graph import record


def _float(t: Any) -> bool:
    return t.dtype.is_float


def refuse_in_place(name: str, out: Any) -> None:
    """An op writing into `out` while grad mode records: not supported (yet), said clearly."""
    if out is not None:
        raise RuntimeError(f"{name}: an in-place op (or out=) on tensors that require grad is "
                           "not supported; compute a new tensor, or use pk.no_grad()")


def record_unary(name: str, out: Any, x: Any) -> Any:
    if not _float(out):
        return out
    fn = derivatives.UNARY.get(name)
    if fn is None:
        return record(name, out, (x,), derivatives.refuse(name))
    return record(name, out, (x,), lambda g: (fn(g, x, out),))


def record_binary(name: str, out: Any, a: Any, b: Any) -> Any:
    if not _float(out):
        return out
    fn = derivatives.BINARY.get(name)
    if fn is None:
        return record(name, out, (a, b), derivatives.refuse(name))
    return record(name, out, (a, b), lambda g: fn(g, a, b, out))


def record_cast(out: Any, x: Any) -> Any:
    """`astype`/`copy`: the gradient goes back converted (the engine fits the dtype)."""
    if out is x or not (_float(out) and _float(x)):
        return out
    return record("astype", out, (x,), lambda g: (g,))


def record_view(name: str, out: Any, x: Any, back: Any) -> Any:
    """A view of `x` (reshape, permute, slicing...): `back(g)` is the gradient of `x`."""
    if out is x:
        return out
    return record(name, out, (x,), lambda g: (back(g),))


def record_reduction(name: str, out: Any, x: Any, axis: Any, keepdims: bool,
                     scale: float) -> Any:
    """sum (`scale` 1) and mean (`scale` 1/n) over `axis`: the gradient broadcast back."""
    if not _float(out):
        return out
    def back(g: Any) -> tuple[Any]:
        if not keepdims:
            g = with_reduced_axes(g, axis, x.ndim)
        g = g.broadcast_to(x.shape)
        return (g * scale if scale != 1.0 else g,)

    return record(name, out, (x,), back)


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


def record_matmul(out: Any, a: Any, b: Any) -> Any:
    """numpy's matmul: 1-d operands are a row / a column that the result drops."""
    if not _float(out):
        return out

    def back(g: Any) -> tuple[Any, Any]:
        a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
        b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
        batch = _broadcast(a2.shape[:-2], b2.shape[:-2])
        g2 = g.reshape(batch + (a2.shape[-2], b2.shape[-1]))
        wide = None
        if a.dtype == b.dtype and a.dtype.is_float and a.dtype.itemsize == 2 \
                and g2.dtype != a.dtype:
            # 16-bit operands with a wider result (pk.autocast, dtype=): the gradients' products
            # take 16-bit operands too (the matrix engine's), and keep the wider result
            wide, g2 = g2.dtype, g2.astype(a.dtype)
        ga = pk.matmul(g2, b2.mT, dtype=wide) if a.requires_grad else None
        gb = pk.matmul(a2.mT, g2, dtype=wide) if b.requires_grad else None
        if ga is not None and a.ndim == 1:
            ga = ga.reshape(ga.shape[:-2] + ga.shape[-1:])
        if gb is not None and b.ndim == 1:
            gb = gb.reshape(gb.shape[:-1])
        return ga, gb

    return record("matmul", out, (a, b), back)


def _broadcast(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + tuple(x), (1,) * (n - len(y)) + tuple(y)
    return tuple(max(p, q) for p, q in zip(x, y))
