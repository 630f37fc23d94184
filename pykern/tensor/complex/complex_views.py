"""Complex tensors seen as real ones and back, sharing the buffer (PyTorch's names).

A c64 element is two f32 words, real part first (c128: two f64), as numpy stores it. So a
complex view of shape S, strides s and offset o (in complex elements) is the same memory as a
real view of shape S + (2,), strides 2s + (1,) and offset 2o (in part elements). Every complex
op that only moves or combines parts runs as real ops on these views.

Both views pass gradients through unchanged in meaning: pykern's gradient of a complex
tensor is the pair (d/d real, d/d imag), which is exactly the gradient of its real view. So
the complex ops built on part views (sums, concat, take, ...) differentiate through the real
ops they run.
"""

from __future__ import annotations

from pykern.autograd.graph import needs_grad
from pykern.autograd.records import record_view
from pykern.lang import dtypes as dt
from pykern.tensor.core.tensor import Tensor
from pykern.ops.public import declare, torch_names


def view_as_real(t: Tensor) -> Tensor:
    """A c64 tensor of shape S as an f32 view of shape S + (2,) (c128 as f64): `[..., 0]` is the
    real part, `[..., 1]` the imaginary part. Writes through the view change `t`.

    >>> import pykern as pk
    >>> pk.view_as_real(pk.asarray([1 + 2j, 3 - 4j])).numpy()
    array([[ 1.,  2.],
           [ 3., -4.]], dtype=float32)
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"view_as_real: t must be a pk.Tensor, not {type(t).__name__}")
    if not t.dtype.is_complex:
        raise TypeError(f"view_as_real: t must be a complex tensor (c64 or c128), not "
                        f"{t.dtype.name}")
    strides = tuple(2 * s for s in t.element_strides) + (1,)
    view = Tensor(t.buffer, t.shape + (2,), t.dtype.real_dtype, strides, 2 * t.offset)
    view._base = t if t._base is None else t._base
    if needs_grad(t, complex_ok=True):
        return record_view("view_as_real", view, t, lambda g: view_as_complex(_pairs(g)))
    return view


def view_as_complex(t: Tensor) -> Tensor:
    """The inverse of `view_as_real`: an f32 tensor of shape S + (2,) as a c64 view of shape S
    (f64 as c128). The last dimension must have size 2 and stride 1, and every other stride
    and the offset must be even (a whole number of complex elements).

    >>> import pykern as pk
    >>> pk.view_as_complex(pk.asarray([[1.0, 2.0], [3.0, -4.0]])).numpy()
    array([1.+2.j, 3.-4.j], dtype=complex64)
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"view_as_complex: t must be a pk.Tensor, not {type(t).__name__}")
    if t.dtype not in (dt.f32, dt.f64):
        raise TypeError(f"view_as_complex: t must be an f32 or f64 tensor, not {t.dtype.name}")
    if t.ndim == 0 or t.shape[-1] != 2:
        raise ValueError(f"view_as_complex: the last dimension must have size 2, t has shape "
                         f"{t.shape}")
    if t.element_strides[-1] != 1:
        raise ValueError(f"view_as_complex: the last dimension must have stride 1 (adjacent "
                         f"parts), t has element strides {t.element_strides}")
    odd = [s for s, n in zip(t.element_strides[:-1], t.shape[:-1]) if s % 2 and n != 1]
    if odd or t.offset % 2:
        raise ValueError(f"view_as_complex: every stride but the last, and the offset, must be "
                         f"even (whole complex elements); t has element strides "
                         f"{t.element_strides} and offset {t.offset}")
    complex_dtype = dt.c64 if t.dtype == dt.f32 else dt.c128
    strides = tuple(s // 2 for s in t.element_strides[:-1])
    view = Tensor(t.buffer, t.shape[:-1], complex_dtype, strides, t.offset // 2)
    view._base = t if t._base is None else t._base
    if needs_grad(t):
        return record_view("view_as_complex", view, t, view_as_real)
    return view


def _pairs(g: Tensor) -> Tensor:
    """A real gradient of shape S + (2,) laid out as `view_as_complex` takes it (a gradient
    may arrive broadcast, with stride 0)."""
    if g.element_strides[-1] == 1 and g.offset % 2 == 0 and \
            all(s % 2 == 0 or n == 1 for s, n in zip(g.element_strides[:-1], g.shape[:-1])):
        return g
    # an empty g counts as contiguous whatever its strides (the gradient of a product with a
    # 0-length dimension has odd ones): only a copy lays it out row-major
    return g.copy() if g.size == 0 else g.contiguous()


def parts(t: Tensor) -> tuple[Tensor, Tensor]:
    """The real and imaginary parts of a complex tensor, as views of its buffer."""
    r = view_as_real(t)
    return r[..., 0], r[..., 1]


view_as_real = declare(view_as_real, "complex", grad="linear", complex_grad=True,
                       aliases=torch_names("view_as_real", "aten::view_as_real"))
view_as_complex = declare(view_as_complex, "complex", grad="linear", complex_grad=True,
                          aliases=torch_names("view_as_complex", "aten::view_as_complex"))
