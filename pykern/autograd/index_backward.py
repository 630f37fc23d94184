"""Backward of advanced indexing (`t[idx]`, `t[mask]`) and of writes through it (`t[idx] = v`).

Reading is a gather, so its gradient is a scatter-add of `g` into zeros, where repeated
indices accumulate (as PyTorch's `index` backward). A write is recorded as an out-of-place
"put" (x with the selected elements replaced) that `inplace.assign` then copies into x: x's
gradient is `g` with zeros at the written elements, the value's the gather of `g` there,
zero for entries that lost to a later repeat of their index (they do not reach the result).
"""

from __future__ import annotations

from typing import Any

from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad


def gathered(x: Any, sel: Any, out: Any) -> Any:
    """`out` (= x[sel], computed without recording) with its backward recorded (any float or
    complex dtype: the scatter-add moves g as the gather moved x)."""
    if not (out.dtype.is_float or out.dtype.is_complex):
        return out
    shape = tuple(x.shape)
    return record("getitem", out, (x,), lambda g: (scatter_add_into_zeros(shape, sel, g),),
                  saved=())


def scatter_add_into_zeros(shape: tuple[int, ...], sel: Any, g: Any) -> Any:
    """Zeros of `shape` with `g` (shaped as x[sel]) added at the elements `sel` picks."""
    import pykern as pk
    from pykern.lang import dtypes as dt
    from pykern.tensor.index.advanced_index import layout

    narrow = g.dtype in (dt.f16, dt.bf16)  # summed in f32, rounded once
    acc = dt.f32 if narrow else g.dtype
    size = _prod(shape)
    with no_grad():
        lay = layout(pk.zeros(shape, acc), sel)  # a row-major stand-in: offsets only
        p, b, q = lay.pbq
        where = (lay.pre.reshape(p, 1, 1) + lay.lin.reshape(1, b, 1)
                 + lay.post.reshape(1, 1, q)).reshape(-1) + lay.span.offset
        flat = pk.scatter_add(pk.zeros((size,), acc), 0, where, g.astype(acc).reshape(-1))
        return flat.reshape(shape).astype(g.dtype, copy=False)


def put(x: Any, sel: Any, value: Any) -> Any:
    """x with the elements `sel` picks replaced by `value`, as a new tensor, recorded."""
    from pykern.tensor.index.advanced_index import gather, scatter, winners
    from pykern.tensor.elementwise.functions import as_tensor

    v = as_tensor(value, "t[key] = value: value")
    with no_grad():
        out = x.copy()
        scatter(out, sel, v)
    if not out.dtype.is_float:
        return out

    def back(g: Any) -> tuple[Any, Any]:
        gx = g.copy()
        scatter(gx, sel, 0)
        gv = None
        if getattr(v, "requires_grad", False):
            gv = gather(g, sel)
            if not sel.unique:
                w = winners(sel).astype(gv.dtype)
                gv = (gv.reshape(_pbq(gv.shape, sel)) * w.reshape(1, -1, 1)).reshape(gv.shape)
            if v.dtype.is_float:
                gv = gv.astype(v.dtype, copy=False)
        return gx, gv

    return record("index_put", out, (x, v), back, saved=())  # reads no values


def _pbq(result_shape: tuple[int, ...], sel: Any) -> tuple[int, int, int]:
    """The result's shape as (P, B, Q): sliced dims before the broadcast ones, those, after
    (adjacent index arrays sit where their first dimension was; others go first)."""
    lead = sel.dims[0] if sel.adjacent else 0
    n = len(sel.shape)
    return (_prod(result_shape[:lead]), _prod(result_shape[lead:lead + n]),
            _prod(result_shape[lead + n:]))


def _prod(shape: tuple[int, ...]) -> int:
    out = 1
    for s in shape:
        out *= s
    return out
