"""What the tensor ops call to record their backward: one function per kind of op, so that
each op module adds a line, not a mechanism."""

from __future__ import annotations

from typing import Any

import pykern as pk
from pykern.autograd import derivatives
from pykern.autograd.graph import record


def _float(t: Any) -> bool:
    """Whether `t` has gradients: float and complex tensors (complex ops record through
    `complex_grads`; the formulas here that reach them are layout or linear)."""
    return t.dtype.is_float or t.dtype.is_complex


def _alias(t: Any) -> Any:
    """What a backward keeps of a tensor it reads: an alias of its memory without its graph
    (so a node holding its own result makes no reference cycle); numbers as they are."""
    return t.detach() if hasattr(t, "detach") else t


def record_unary(name: str, out: Any, x: Any) -> Any:
    if not _float(out):
        return out
    fn = derivatives.UNARY.get(name)
    if fn is None:
        return record(name, out, (x,), derivatives.refuse(name))
    tensors = {"x": x, "out": out}
    read = derivatives.reads(fn)
    kw = {n: _alias(tensors[n]) for n in read}
    return record(name, out, (x,), lambda g: (fn(g, **kw),), saved=[tensors[n] for n in read])


def record_binary(name: str, out: Any, a: Any, b: Any) -> Any:
    """A binary op's backward runs (and saves what it reads for) only the formulas of the
    inputs that require grad: `y * 3` saves nothing, `y * w` saves `w` for y's gradient."""
    if not _float(out):
        return out
    pair = derivatives.BINARY.get(name)
    if pair is None:
        return record(name, out, (a, b), derivatives.refuse(name))
    return record_pair(name, out, a, b, pair, _alias)


def record_pair(name: str, out: Any, a: Any, b: Any, pair: tuple[Any, Any],
                operand: Any) -> Any:
    """`out` = op `name` of `a` and `b`, recorded with `pair`, the formulas of a's and b's
    gradients (each run only for an input that requires grad); `operand(t)` is what a
    formula reads of a, b or out (an alias without the graph, or a converted copy)."""
    tensors = {"a": a, "b": b, "out": out}
    wanted = [fn if getattr(t, "requires_grad", False) else None for fn, t in zip(pair, (a, b))]
    read = {n for fn in wanted if fn is not None for n in derivatives.reads(fn)}
    values = {n: operand(tensors[n]) for n in read}
    calls = [(fn, {n: values[n] for n in derivatives.reads(fn)}) if fn is not None else None
             for fn in wanted]

    def backward(g: Any) -> tuple[Any, Any]:
        return tuple(c[0](g, **c[1]) if c is not None else None  # type: ignore[return-value]
                     for c in calls)

    saved = [tensors[n] for n in sorted(read) if hasattr(tensors[n], "buffer")]
    return record(name, out, (a, b), backward, saved=saved)


def record_cast(out: Any, x: Any) -> Any:
    """`astype`/`copy`: the gradient goes back converted (the engine fits the dtype)."""
    if out is x or not (_float(out) and _float(x)):
        return out
    return record("astype", out, (x,), lambda g: (g,), saved=())


def record_view(name: str, out: Any, x: Any, back: Any) -> Any:
    """A view of `x` (reshape, permute, slicing...): `back(g)` is the gradient of `x`."""
    if out is x:
        return out
    return record(name, out, (x,), lambda g: (back(g),), view=True)


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


def record_matmul(out: Any, a: Any, b: Any) -> Any:
    """numpy's matmul: 1-d operands are a row / a column that the result drops."""
    if not _float(out):
        return out

    need_a, need_b = a.requires_grad, b.requires_grad

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
        ga = pk.matmul(g2, _adjoint(b2), dtype=wide) if need_a else None
        gb = pk.matmul(_adjoint(a2), g2, dtype=wide) if need_b else None
        if ga is not None and a.ndim == 1:
            ga = ga.reshape(ga.shape[:-2] + ga.shape[-1:])
        if gb is not None and b.ndim == 1:
            gb = gb.reshape(gb.shape[:-1])
        return ga, gb

    # a's gradient reads b and b's reads a
    saved = [t for t, needed in ((b, need_a), (a, need_b)) if needed]
    return record("matmul", out, (a, b), back, saved=saved)


def _adjoint(t: Any) -> Any:
    """The conjugate transpose (of a complex matrix; a real one's transpose): what a matrix
    product's gradient multiplies by."""
    return pk.conj(t).mT if t.dtype.is_complex else t.mT


def _broadcast(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + tuple(x), (1,) * (n - len(y)) + tuple(y)
    return tuple(q if p == 1 else p for p, q in zip(x, y))  # (not max: 1 against 0 is 0)
