"""Complex tensors as the kernels see them: real tensors of interleaved (re, im) pairs, shape
S + (2,), and the 1-D transform along one axis of such a tensor.

Real and integer inputs are promoted first, as numpy does, but to pykern's dtypes: f64 to
c128, every other real dtype (f32, f16, bf16, integers, bool) to c64.
"""

from __future__ import annotations

from pykern.fft import engine
from pykern.lang import dtypes as dt
from pykern.tensor.complex.complex_views import view_as_complex, view_as_real
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.strided import prod, view
from pykern.tensor.core.tensor import Tensor, empty


def complex_dtype_for(d: dt.DType) -> dt.DType:
    """The complex dtype a transform of a `d` input computes in."""
    if d.is_complex:
        return d
    return dt.c128 if d == dt.f64 else dt.c64


def real_dtype_for(d: dt.DType) -> dt.DType:
    """The real dtype a real-input transform of a `d` input computes in."""
    return complex_dtype_for(d).real_dtype


def input_tensor(x: object, op: str) -> Tensor:
    """`x` as a tensor (numpy arrays and nested lists accepted)."""
    return as_tensor(x, f"{op}: x")


def as_pairs(t: Tensor) -> Tensor:
    """`t` as a contiguous pair tensor, promoted to complex if it is real."""
    c = complex_dtype_for(t.dtype)
    if t.dtype != c:
        t = t.astype(c)
    p = view_as_real(t)
    return p if p.is_contiguous else p.contiguous()


def as_complex(p: Tensor) -> Tensor:
    """A pair tensor as the complex tensor it holds (a view)."""
    return view_as_complex(p)


def real_as_pairs(t: Tensor) -> Tensor:
    """A real tensor of shape S as a pair tensor S + (2,) with zero imaginary parts."""
    return as_pairs(t.astype(complex_dtype_for(t.dtype)))


def four_d(p: Tensor, axis: int) -> Tensor:
    """A contiguous pair tensor as the (before, after, length, 2) view the kernels take, the
    transform running along `axis` of its complex shape."""
    shape = p.shape[:-1]
    before, after, length = prod(shape[:axis]), prod(shape[axis + 1:]), shape[axis]
    return view(p, (before, after, length, 2), (2 * length * after, 2, 2 * after, 1), p.offset)


def transform_axis(p: Tensor, axis: int, n: int, inverse: bool, scale: float,
                   in_place: bool = False) -> Tensor:
    """The complex FFT of length n along `axis` of the pair tensor p (padded or cropped to n),
    times `scale`; inverse: the unnormalised inverse. A new contiguous pair tensor, or, with
    `in_place` (p is a contiguous temporary of the caller's) where n is p's length, p itself
    overwritten: every launch reads its transforms whole before it writes them."""
    if not p.is_contiguous:
        p = p.contiguous()
    shape = p.shape[:-1]
    if in_place and shape[axis] == n:
        if p.size:
            engine.transform(four_d(p, axis), four_d(p, axis), inverse, scale)
        return p
    out = empty(shape[:axis] + (n,) + shape[axis + 1:] + (2,), p.dtype)
    if out.size:
        engine.transform(four_d(p, axis), four_d(out, axis), inverse, scale)
    return out
