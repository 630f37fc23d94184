"""Ops that move complex elements without combining them (concat, stack, take,
take_along_axis, scatter_add, cumsum), run as the real op on the part views of
`complex_views`: the parts travel in the view's last axis, which the op leaves alone. The
entry points in `indexing`, `scan` and `linalg` hand complex operands here; roll, tile and
repeat are built on these and need nothing of their own. The complex matrix product is here
too: four real products of the parts.
"""

from __future__ import annotations

from collections.abc import Sequence

from pykern.autograd.graph import needs_grad
from pykern.autograd.mode import no_grad
from pykern.tensor.gemm.matmul_backward import record_matmul
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core import promotion as pr
from pykern.tensor.complex.complex_elementwise import complex_tensor
from pykern.tensor.complex.complex_views import parts, view_as_complex, view_as_real
from pykern.tensor.core.tensor import Tensor, empty, normalize_axis
from pykern.tensor.index import indexing
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.reduce import scan
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.gemm import matmul as linalg


def any_complex(*xs: object) -> bool:
    return any(pr.is_complex_operand(x) for x in xs)


def _complex_all(tensors: Sequence[Tensor]) -> list[Tensor]:
    p = pr.promote(*(t.dtype for t in tensors))
    p = p if p.is_complex else pr.complex_of(p)
    return [complex_tensor(t, p) for t in tensors]


def concat(tensors: Sequence[Tensor], axis: int | None) -> Tensor:
    zs = _complex_all(tensors)
    if axis is None:
        zs, axis = [z.reshape(-1) for z in zs], 0
    ax = normalize_axis(axis, zs[0].ndim, op="concat") if zs[0].ndim else axis
    return view_as_complex(indexing.concat([view_as_real(z) for z in zs], axis=ax))


def stack(tensors: Sequence[Tensor], axis: int) -> Tensor:
    zs = _complex_all(tensors)
    ax = normalize_axis(axis, zs[0].ndim + 1, op="stack")
    return view_as_complex(indexing.stack([view_as_real(z) for z in zs], axis=ax))


def take(x: Tensor, indices: object, axis: int | None) -> Tensor:
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = normalize_axis(axis, x.ndim, op="take")
    return view_as_complex(indexing.take(view_as_real(x), indices, axis=ax))


def take_along_axis(x: Tensor, indices: object, axis: int | None) -> Tensor:
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = normalize_axis(axis, x.ndim, op="take_along_axis")
    idx = as_tensor(indices, "take_along_axis: indices")
    pairs = idx.unsqueeze(idx.ndim).broadcast_to(idx.shape + (2,))
    return view_as_complex(indexing.take_along_axis(view_as_real(x), pairs, axis=ax))


def scatter_add(x: Tensor, axis: int, index: object, src: object) -> Tensor:
    ax = normalize_axis(axis, x.ndim, op="scatter_add")
    idx = as_tensor(index, "scatter_add: index")
    s = complex_tensor(src, x.dtype)
    pairs = idx.unsqueeze(idx.ndim).broadcast_to(idx.shape + (2,))
    return view_as_complex(indexing.scatter_add(view_as_real(x), ax, pairs, view_as_real(s)))


def cumsum(x: Tensor, axis: int | None, dtype: object) -> Tensor:
    if dtype is not None:
        d = _dtype(dtype)
        if not d.is_complex:
            raise TypeError(f"cumsum of a complex tensor into {d.name} would drop the "
                            "imaginary part; take .real first")
        x = complex_tensor(x, d)
    if axis is None:
        x, axis = x.reshape(-1), 0
    if x.ndim == 0:
        raise ValueError("cumsum: x is 0-d; use axis=None")
    ax = normalize_axis(axis, x.ndim, op="cumsum")
    return view_as_complex(scan.cumsum(view_as_real(x), axis=ax))


def _dtype(dtype: object) -> DType:
    return dt.as_dtype(dtype)


def matmul(a: Tensor, b: Tensor, dtype: object) -> Tensor:
    """The matrix product where `a` or `b` is complex: (ar + i ai)(br + i bi) from four real
    matrix products of the part views."""
    if needs_grad(a, b, complex_ok=True):
        with no_grad():
            out = matmul(a, b, dtype)
        return record_matmul(out, a, b)
    p = pr.promote(a.dtype, b.dtype) if dtype is None else _dtype(dtype)
    if not p.is_complex:
        p = pr.complex_of(p)
    za, zb = complex_tensor(a, p), complex_tensor(b, p)
    ar, ai = parts(za)
    br, bi = parts(zb)
    rr, ii = linalg.matmul(ar, br), linalg.matmul(ai, bi)
    ri, ir = linalg.matmul(ar, bi), linalg.matmul(ai, br)
    out = empty(rr.shape, p)
    re, im = parts(out)
    ew.subtract(rr, ii, out=re)
    ew.add(ri, ir, out=im)
    return out
