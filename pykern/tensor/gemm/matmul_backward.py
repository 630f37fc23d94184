"""The backward of matmul (numpy's: 1-d operands are a row / a column that the result drops):
each operand's gradient is a matmul of g with the other's adjoint. Also what the complex
matmul records (`complex_layout`)."""

from __future__ import annotations

from typing import Any

import pykern as pk
from pykern.autograd.graph import record


def _float(t: Any) -> bool:
    return t.dtype.is_float or t.dtype.is_complex


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
        ga = _product(g2, _adjoint(b2), wide, a2) if need_a else None
        gb = _product(_adjoint(a2), g2, wide, b2) if need_b else None
        if ga is not None and a.ndim == 1:
            ga = ga.reshape(ga.shape[:-2] + ga.shape[-1:])
        if gb is not None and b.ndim == 1:
            gb = gb.reshape(gb.shape[:-1])
        return ga, gb

    # a's gradient reads b and b's reads a
    saved = [t for t, needed in ((b, need_a), (a, need_b)) if needed]
    return record("matmul", out, (a, b), back, saved=saved)


def _product(x: Any, y: Any, wide: Any, operand: Any) -> Any:
    """x @ y, the gradient of `operand`: in its layout where that is a transposed matrix (a
    weight seen as `w.mT`, as `F.linear` multiplies by), so that the gradient of the matrix
    underneath comes out row-major, as its `.grad` is kept (the product of the transposes,
    transposed back; real matrices only)."""
    if operand.ndim == 2 and x.ndim == 2 and y.ndim == 2 and not operand.dtype.is_complex \
            and not operand.is_contiguous and operand.mT.is_contiguous:
        return pk.matmul(y.mT, x.mT, dtype=wide).mT
    return pk.matmul(x, y, dtype=wide)


def _adjoint(t: Any) -> Any:
    """The conjugate transpose (of a complex matrix; a real one's transpose): what a matrix
    product's gradient multiplies by."""
    return pk.conj(t).mT if t.dtype.is_complex else t.mT


def _broadcast(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + tuple(x), (1,) * (n - len(y)) + tuple(y)
    return tuple(q if p == 1 else p for p, q in zip(x, y))  # (not max: 1 against 0 is 0)
