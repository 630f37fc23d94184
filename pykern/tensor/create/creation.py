"""Creating tensors on the device: filled (`zeros`, `ones`, `full`, `eye`), ranges (`arange`,
`linspace`), triangles (`tril`, `triu`). Fills run the elementwise copy kernel from a
one-element constant broadcast with stride 0; ranges have their own small kernels."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence

import pykern as pk

from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad
from pykern.ops.public import declare, torch_names
from pykern.autograd.keyword import accepts_requires_grad
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.tensor import Tensor, _like_dtype, empty, shape_args
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.complex.complex_views import parts
from pykern.tensor.core import promotion as pr

Shape = int | Sequence[int]


def fill(out: Tensor, value: object) -> Tensor:
    """Writes `value` into every element of `out` (a tensor or any view); returns `out`."""
    ew.assign(out, value)
    return out


def _filled(shape: tuple[int, ...], dtype: DType, value: object) -> Tensor:
    """A new tensor of `shape` and `dtype` holding `value`; for a Python number (not nan)
    through the op plans (`pykern.tensor.core.dispatch`), so that a repeated `zeros` or `ones`
    costs a replayed launch (its key holds the number's repr: 0.0 and -0.0 differ)."""
    if type(value) in (int, float, bool) and value == value:
        key = ("fill", shape, dtype, type(value), repr(value))
        return dispatch(key, (), lambda: fill(empty(shape, dtype), value))
    return fill(empty(shape, dtype), value)


def _fill_dtype(value: object, dtype: object) -> DType:
    if dtype is not None:
        return dt.as_dtype(dtype)
    if isinstance(value, Tensor):
        return value.dtype
    if pr.is_python_scalar(value) or pr.is_python_complex(value):
        return pr.scalar_kind_dtype(value)
    d = pr.operand_dtype(value)
    if d is None:
        raise TypeError(f"full: cannot fill with a {type(value).__name__}")
    return d


@accepts_requires_grad
def zeros(shape: Shape, *dims: int | object, dtype: object = None, device: object = None
          ) -> Tensor:
    """A tensor of zeros: `pk.zeros((2, 3), pk.i32)`, or `pk.zeros(2, 3)` as in PyTorch
    (dtype None: f32)."""
    shape, dtype = shape_args(shape, dims, dtype)
    return _filled(shape, dtype, 0)


@accepts_requires_grad
def ones(shape: Shape, *dims: int | object, dtype: object = None, device: object = None
         ) -> Tensor:
    """A tensor of ones: `pk.ones((2, 3))` or `pk.ones(2, 3)`."""
    shape, dtype = shape_args(shape, dims, dtype)
    return _filled(shape, dtype, 1)


@accepts_requires_grad
def full(shape: Shape, fill_value: object, dtype: object = None, *, device: object = None
         ) -> Tensor:
    """A tensor of `shape` with every element `fill_value`. Without `dtype`: bool_ for a
    bool, i32 for an int, f32 for a float (the defaults), a numpy scalar's own dtype."""
    d = _fill_dtype(fill_value, dtype)
    pr.check_number(fill_value, d)
    return _filled(shape, d, fill_value)


@accepts_requires_grad
def zeros_like(x: object, dtype: object = None, *, device: object = None) -> Tensor:
    """Zeros of x's shape and (unless given) dtype, on x's device (or `device`'s)."""
    return zeros(x.shape, _like_dtype(x, dtype))  # type: ignore[attr-defined]


@accepts_requires_grad
def ones_like(x: object, dtype: object = None, *, device: object = None) -> Tensor:
    """Ones of x's shape and (unless given) dtype, on x's device (or `device`'s)."""
    return ones(x.shape, _like_dtype(x, dtype))  # type: ignore[attr-defined]


@accepts_requires_grad
def full_like(x: object, fill_value: object, dtype: object = None, *, device: object = None
              ) -> Tensor:
    """`fill_value` in x's shape and (unless given) dtype, on x's device (or `device`'s)."""
    return full(x.shape, fill_value, _like_dtype(x, dtype))  # type: ignore[attr-defined]


@accepts_requires_grad
def eye(n_rows: int, n_cols: int | None = None, k: int = 0, dtype: object = dt.f32, *,
        device: object = None) -> Tensor:
    """A 2-D tensor with ones on the `k`-th diagonal, zeros elsewhere."""
    n_cols = n_rows if n_cols is None else n_cols
    dtype = dt.f32 if dtype is None else dtype
    out = zeros((n_rows, n_cols), dtype)
    start = k if k >= 0 else -k * n_cols
    length = max(0, min(n_rows - max(-k, 0), n_cols - max(k, 0)))
    if length:
        diagonal = Tensor(out.buffer, (length,), out.dtype, (n_cols + 1,), start)
        fill(diagonal, 1)
    return out


# ---------------------------------------------------------------- ranges


@functools.cache
def _range_kernel(ct: DType) -> pk.Kernel:
    CT = ct  # noqa: N806

    @pk.kernel
    def value_range(out: pk.Array, start: CT, step: CT, stop: CT, last_is_stop: pk.bool_,
                    floor_ints: pk.constexpr):
        i = pk.global_id(0)
        v = start + CT(i) * step
        if last_is_stop and i == len(out) - 1:
            v = stop
        if floor_ints:
            out[i] = pk.floor(v)
        else:
            out[i] = v

    return value_range


@accepts_requires_grad
def arange(start: float, stop: float | None = None, step: float = 1, dtype: object = None, *,
           device: object = None) -> Tensor:
    """Values start, start + step, ... below `stop` (above it for a negative step), as numpy:
    `arange(5)`, `arange(1, 2, 0.25)`. Without `dtype`: i32 if every argument is an int,
    else f32. Element i is computed as start + i * step on the device (in f64 for f64, f32 for
    the other floats)."""
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not isinstance(v, (int, float)) or isinstance(v, complex):
            try:
                operator.index(v)
            except TypeError:
                if not hasattr(v, "__float__"):
                    raise TypeError(f"arange takes numbers, got {type(v).__name__}") from None
    if step == 0:
        raise ValueError("arange: step must not be 0")
    all_int = all(isinstance(v, int) or _is_integer_scalar(v) for v in (start, stop, step))
    d = dt.as_dtype(dtype) if dtype is not None else (pr.DEFAULT_INT if all_int else
                                                      pr.DEFAULT_FLOAT)
    if d.is_complex:  # real steps (numpy's complex steps are rarely meant), complex values
        return arange(start, stop, step, d.real_dtype).astype(d)
    if all_int:
        start, stop, step = int(start), int(stop), int(step)
        n = max(0, -(-(stop - start) // step))
    else:
        n = max(0, math.ceil((float(stop) - float(start)) / float(step)))
        if d.is_int and n:  # (numpy converts nothing for an empty range)
            start, step = _integer_start_and_step(start, step, n, d)
            all_int = True
    if d == dt.bool_:
        return _bool_range(start, step, n)
    out = empty((n,), d)
    if n:
        if d.is_int:
            for v in (start, start + (n - 1) * step):
                pr.check_scalar_fits(int(v), d)
        ct = pr.compute_dtype(d) if d != dt.bool_ else dt.i32
        if all_int and ct.kind in "iu":  # wrapping arithmetic is exact where every value
            bits = 8 * ct.itemsize  # fits: a negative step of an unsigned dtype wraps
            step %= 1 << bits
            if ct.kind == "i" and step >= 1 << (bits - 1):
                step -= 1 << bits
        _range_kernel(ct)[n](out, start, step, start, False, False)
    return out


def _bool_range(start: object, step: object, n: int) -> Tensor:
    """A bool range, as numpy makes it: its first two values are `start` and `start + step`
    as truths, and a longer one is a TypeError (numpy has no third bool to step to)."""
    if n > 2:
        raise TypeError(f"arange: a bool range has at most 2 values (False, True), this one "
                        f"would have {n}")
    out = empty((n,), dt.bool_)
    for i, value in enumerate((start, start + step)[:n]):  # type: ignore[operator]
        ew.assign(out[i], bool(value))
    return out


def _integer_start_and_step(start: object, step: object, n: int, d: DType) -> tuple[int, int]:
    """The first value and the step of an integer `d` range from non-integer arguments, as
    numpy computes them: the first value is `start` converted to the dtype (truncated toward
    zero), and the step is the second value, `start + step` converted, minus the first; the
    length stays ceil((stop - start) / step). So `arange(0, 3, 0.5, dtype=i32)` is six zeros
    and `arange(0.5, 3, 0.5, dtype=i32)` is 0, 1, 2, 3, 4, as numpy's."""
    first = int(start)  # type: ignore[call-overload]
    pr.check_scalar_fits(first, d)
    if n < 2:  # numpy converts no second value: only the first is an element
        return first, 0
    return first, int(start + step) - first  # type: ignore[operator]


def _is_integer_scalar(v: object) -> bool:
    try:
        operator.index(v)
        return True
    except TypeError:
        return False


@accepts_requires_grad
def linspace(start: float, stop: float, num: int, dtype: object = None, *,
             endpoint: bool = True, device: object = None) -> Tensor:
    """`num` evenly spaced values from `start` to `stop` (included unless endpoint=False), as
    numpy; the default dtype is f32. Computed on the device in f64 for f64 and f32 otherwise;
    integer dtypes take the floor, as numpy 2."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: num must be >= 0, got {num}")
    d = dt.as_dtype(dtype) if dtype is not None else pr.DEFAULT_FLOAT
    if d.is_complex or isinstance(start, complex) or isinstance(stop, complex):
        return _complex_linspace(complex(start), complex(stop), num, d, endpoint)
    out = empty((num,), d)
    if num == 0:
        return out
    div = (num - 1) if endpoint else num
    step = (float(stop) - float(start)) / div if div > 0 else 0.0
    ct = dt.f64 if d == dt.f64 else dt.f32
    _range_kernel(ct)[num](out, float(start), step, float(stop), bool(endpoint and num > 1),
                           not d.is_float and d != dt.bool_)
    return out


def _complex_linspace(start: complex, stop: complex, num: int, d: DType, endpoint: bool
                      ) -> Tensor:
    """`linspace` with complex ends or dtype: each part spaced on its own, as numpy."""
    d = d if d.is_complex else pr.DEFAULT_COMPLEX
    part = d.real_dtype
    out = empty((num,), d)
    re, im = parts(out)
    fill(re, linspace(start.real, stop.real, num, part, endpoint=endpoint))
    fill(im, linspace(start.imag, stop.imag, num, part, endpoint=endpoint))
    return out


# ---------------------------------------------------------------- triangles


@pk.kernel
def _triangle(x: pk.Array, out: pk.Array, k: int, lower: pk.constexpr):
    i = pk.global_id(0)
    b, row, col = pk.unravel(i, out.shape)
    keep = col - row <= k if lower else col - row >= k
    if keep:
        out[b, row, col] = x[b, row, col]
    else:
        out[b, row, col] = 0


def _tri(x: Tensor, k: int, lower: bool) -> Tensor:
    x = ew.as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'} needs at least 2 dimensions, got "
                         f"shape {x.shape}")
    out = empty(x.shape, x.dtype)
    if x.size:
        m, n = x.shape[-2:]
        x3 = x.reshape(-1, m, n)
        _triangle[x.size](x3, out.reshape(-1, m, n), int(k), lower)
    return out


def tril(x: Tensor, /, k: int = 0, *, diagonal: int | None = None) -> Tensor:
    """The lower triangle of the last two dimensions (elements above diagonal `k` zeroed;
    `diagonal=` is PyTorch's name for `k`)."""
    return _tri(x, _diagonal(k, diagonal, "tril"), True)


def triu(x: Tensor, /, k: int = 0, *, diagonal: int | None = None) -> Tensor:
    """The upper triangle of the last two dimensions (elements below diagonal `k` zeroed;
    `diagonal=` is PyTorch's name for `k`)."""
    return _tri(x, _diagonal(k, diagonal, "triu"), False)


def _diagonal(k: int, diagonal: int | None, op: str) -> int:
    if diagonal is None:
        return k
    if k != 0:
        raise TypeError(f"{op}: give k= or diagonal=, not both")
    return diagonal


def _triangle_backward(forward: Callable[..., Tensor], x: Tensor, /, *, k: int = 0) -> Tensor:
    """tril or triu recorded: the op is linear and its own adjoint, so the gradient is the
    same triangle of g (any float or complex dtype)."""
    x = ew.as_tensor(x)
    with no_grad():
        out = forward(x, k=k)
    if not (out.dtype.is_float or out.dtype.is_complex):
        return out
    return record(forward.__name__, out, (x,), lambda g: (forward(g, k=k),))


TRIANGLE_SAMPLES = {"shapes": ((4, 5),), "calls": ({}, {"k": 1}, {"k": -2})}
tril = declare(tril, "creation", grad="rule", backward=_triangle_backward, complex_grad=True,
               exports=("pk", "array_api"), samples=TRIANGLE_SAMPLES,
               aliases=torch_names("tril", "aten::tril", numpy="tril", array_api="tril"))
triu = declare(triu, "creation", grad="rule", backward=_triangle_backward, complex_grad=True,
               exports=("pk", "array_api"), samples=TRIANGLE_SAMPLES,
               aliases=torch_names("triu", "aten::triu", numpy="triu", array_api="triu"))


def _created(fn: Callable[..., Tensor], torch: str, *aten: str, array_api: bool = True
             ) -> Callable[..., Tensor]:
    """A creation op declared: no tensor operand to differentiate."""
    name = fn.__name__
    return declare(fn, "creation", exports=("pk", "array_api") if array_api else ("pk",),
                   aliases=torch_names(torch, *aten, numpy=name,
                                       array_api=name if array_api else None))


zeros = _created(zeros, "zeros", "aten::zeros")
ones = _created(ones, "ones", "aten::ones")
full = _created(full, "full", "aten::full")
zeros_like = _created(zeros_like, "zeros_like", "aten::zeros_like")
ones_like = _created(ones_like, "ones_like", "aten::ones_like")
full_like = _created(full_like, "full_like", "aten::full_like")
eye = _created(eye, "eye", "aten::eye")
arange = _created(arange, "arange", "aten::arange", "aten::arange.start_step")
linspace = _created(linspace, "linspace", "aten::linspace")
