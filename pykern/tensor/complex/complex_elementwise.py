"""Elementwise ops on complex tensors: the tables from op names to the element functions of
`complex_funcs`, and the runners `elementwise.unary` / `elementwise.binary` hand complex
operands to. Operands are flattened (a view where the layout allows, else a copy) and each op
is one launch of a `complex_kernels` kernel with its element function.

Ops numpy does not define on complex numbers (ordering comparisons, maximum/minimum,
floor division, remainder, bitwise ops, floor/ceil/trunc, erf, ...) raise a TypeError naming
the op and the dtype.
"""

from __future__ import annotations

import numpy as np

import pykern as pk

from pykern.autograd.graph import needs_grad, record
from pykern.autograd.mode import no_grad
from pykern.autograd.region import zeros_like
from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.ops.registry import Aliases, Op, bind, get, register
from pykern.tensor.complex import complex_funcs as cf
from pykern.tensor.complex import complex_grads
from pykern.tensor.core import promotion as pr
from pykern.tensor.core import strided
from pykern.tensor.complex.complex_kernels import complex_math_binary_kernel, complex_math_kernel
from pykern.tensor.complex.complex_views import parts, view_as_complex, view_as_real
from pykern.tensor.core.tensor import Tensor, asarray, empty
from pykern.tensor.elementwise import functions as ew

COMPLEX, REAL, BOOL = "complex", "real", "bool"

# op name -> (element function, what the result is)
UNARY: dict[str, tuple[Func, str]] = {
    "negative": (cf.c_negative, COMPLEX), "positive": (cf.c_positive, COMPLEX),
    "conj": (cf.c_conj, COMPLEX), "square": (cf.c_square, COMPLEX), "sign": (cf.c_sign, COMPLEX),
    "reciprocal": (cf.z_reciprocal, COMPLEX), "exp2": (cf.z_exp2, COMPLEX),
    **{name: (getattr(cf, "z_" + name), COMPLEX) for name in (
        "exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "sinh",
        "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh")},
    "abs": (cf.z_abs, REAL), "angle": (cf.z_angle, REAL),
    "logical_not": (cf.c_is_zero, BOOL), "isnan": (cf.c_isnan, BOOL),
    "isinf": (cf.c_isinf, BOOL), "isfinite": (cf.c_isfinite, BOOL),
}
BINARY: dict[str, tuple[Func, str]] = {
    "add": (cf.c_add, COMPLEX), "subtract": (cf.c_sub, COMPLEX), "multiply": (cf.c_mul, COMPLEX),
    "divide": (cf.z_divide, COMPLEX), "pow": (cf.z_pow, COMPLEX),
    "equal": (cf.c_equal, BOOL), "not_equal": (cf.c_not_equal, BOOL),
}
LOGICAL = ("logical_and", "logical_or", "logical_xor")
# integer powers up to this magnitude are repeated multiplications, as numpy does them
MAX_MULTIPLIED_POWER = 100


def not_defined(name: str, dtype: DType) -> TypeError:
    """The error for an op numpy does not define on complex numbers."""
    hint = " (complex numbers have no order)" if name in (
        "less", "less_equal", "greater", "greater_equal", "maximum", "minimum", "max", "min",
        "argmax", "argmin", "clip") else ""
    return TypeError(f"{name} is not defined for complex tensors ({dtype.name}){hint}")


def result_dtype(kind: str, p: DType) -> DType:
    return p if kind == COMPLEX else dt.bool_ if kind == BOOL else p.real_dtype


def run_unary(fn: Func, kind: str, x: Tensor) -> Tensor:
    """The element function `fn` of `UNARY` on every element of the complex tensor `x`."""
    out = empty(x.shape, result_dtype(kind, x.dtype))
    if x.size:
        complex_math_kernel[x.size](x.reshape(-1), out.reshape(-1), fn)
    return out


def unary(name: str, x: Tensor, out: Tensor | None = None) -> Tensor:
    """The unary op `name` on the complex tensor `x` (into `out` if given)."""
    entry = UNARY.get(name)
    if name != "round" and entry is None:
        raise not_defined(name, x.dtype)
    if needs_grad(x, complex_ok=True) and (entry is None or entry[1] != BOOL):
        if out is not None:
            raise _no_out_with_grad(name)
        with no_grad():
            result = unary(name, x)
        return complex_grads.record_unary(name, result, x, _complex_backward(name))
    if entry is None:  # round: each part rounded, as numpy
        result = view_as_complex(ew.round(view_as_real(x)))
    else:
        result = run_unary(*entry, x)
    return into(out, result, name)


def _complex_backward(name: str) -> object:
    """The backward the op `name` declares for complex operands (None where it has none)."""
    op = get(name)
    return getattr(op, "complex_backward", op.backward)


def _no_out_with_grad(name: str) -> NotImplementedError:
    return NotImplementedError(f"pk.{name}(..., out=) of complex tensors that require grad "
                               f"is not recorded: assign the result instead (y = pk.{name}(x))")


def into(out: Tensor | None, result: Tensor, name: str) -> Tensor:
    """`result`, or `out` holding it (checked as for real ops: shape, same-kind casting)."""
    if out is None:
        return result
    ew._output(out, result.shape, result.dtype, name)
    ew.assign(out, result)
    return out


# ---------------------------------------------------------------- binary ops


def binary(name: str, a: object, b: object, out: Tensor | None = None) -> Tensor:
    """The binary op `name` where `a` or `b` is complex: both promoted to a complex dtype
    (Python scalars weakly), broadcast, then one kernel launch."""
    a, b = _operand_value(a), _operand_value(b)
    if name in LOGICAL:  # of the truth values, z != 0
        a, b = (ew.not_equal(x, 0) if pr.is_complex_operand(x) else x for x in (a, b))
        return ew.binary(name, a, b, out)
    p = pr.result_type(a, b)
    if not p.is_complex:
        p = pr.complex_of(p)
    entry = BINARY.get(name)
    if entry is None:
        raise not_defined(name, p)
    if needs_grad(a, b, complex_ok=True) and entry[1] != BOOL:
        if out is not None:
            raise _no_out_with_grad(name)
        with no_grad():
            result = binary(name, a, b)
        return complex_grads.record_binary(name, result, a, b, _complex_backward(name))
    if name == "pow" and isinstance(a, Tensor) and _is_real_number(b):
        result = _power_by_scalar(complex_tensor(a, p), b)  # type: ignore[arg-type]
        if result is not None:
            return into(out, result, name)
    return into(out, run_binary(*entry, complex_tensor(a, p), complex_tensor(b, p)), name)


def run_binary(fn: Func, kind: str, za: Tensor, zb: Tensor) -> Tensor:
    """`fn` of `BINARY` on complex tensors of one dtype, broadcast together."""
    shape = strided.broadcast_shapes(za.shape, zb.shape)
    out = empty(shape, result_dtype(kind, za.dtype))
    if out.size:
        complex_math_binary_kernel[out.size](za.broadcast_to(shape).reshape(-1),
                                             zb.broadcast_to(shape).reshape(-1),
                                             out.reshape(-1), fn)
    return out


def complex_tensor(x: object, p: DType) -> Tensor:
    """`x` (a tensor, numpy array or number) as a tensor of the complex dtype `p`."""
    if isinstance(x, Tensor):
        return x if x.dtype == p else ew.astype(x, p)
    if isinstance(x, (bool, int, float, complex, np.number, np.bool_)):
        return ew.constant(complex(x), p)  # type: ignore[arg-type]
    return ew.astype(ew.as_tensor(x), p)


def _operand_value(x: object) -> object:
    """Lists and other array-likes as tensors; tensors, numpy arrays and numbers as they are."""
    if isinstance(x, (list, tuple)):
        return asarray(x)
    return x


def _is_real_number(x: object) -> bool:
    if isinstance(x, (complex, np.complexfloating)):
        return complex(x).imag == 0
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _power_by_scalar(z: Tensor, exponent: object) -> Tensor | None:
    """`z ** n` for a real scalar `n` where numpy takes a shortcut: integers up to 100 by
    repeated squaring (exact as numpy's; negative ones then divide 1 by it, -1 is the
    reciprocal), 0.5 as sqrt; None for the general formula."""
    e = complex(exponent).real  # type: ignore[arg-type]
    if e == 0.5:
        return run_unary(*UNARY["sqrt"], z)
    if e != int(e) or abs(e) > MAX_MULTIPLIED_POWER:
        return None
    n = int(abs(e))
    result: Tensor | None = None
    square = z
    while n:
        if n & 1:
            result = square.copy() if result is None else \
                run_binary(*BINARY["multiply"], result, square)
        n >>= 1
        if n:
            square = run_unary(*UNARY["square"], square)
    if result is None:  # z ** 0
        result = empty(z.shape, z.dtype)
        ew.assign(result, 1.0)
    if e == -1:  # numpy's `z ** -1` is its reciprocal
        result = run_unary(*UNARY["reciprocal"], result)
    elif e < 0:  # numpy's power: 1 / z**n, a division, and nan + nan j for z = 0
        result = run_binary(*BINARY["divide"], complex_tensor(1.0, z.dtype), result)
        result = ew.where(ew.equal(z, 0), complex_tensor(complex(np.nan, np.nan), z.dtype),
                          result)
    return result


# ---------------------------------------------------------------- parts


def real(x: object) -> Tensor:
    """The real part: a view of a complex tensor's buffer (as numpy's `.real`); a real
    tensor itself."""
    t = ew.as_tensor(x, "x")
    return parts(t)[0] if t.dtype.is_complex else t


def imag(x: object) -> Tensor:
    """The imaginary part: a view of a complex tensor's buffer (as numpy's `.imag`); for a
    real tensor a new tensor of zeros of its dtype (numpy gives a read-only zero array; here
    writes to it reach nothing)."""
    t = ew.as_tensor(x, "x")
    if t.dtype.is_complex:
        return parts(t)[1]
    out = empty(t.shape, t.dtype)
    ew.assign(out, 0)
    return out


def conj(x: object) -> Tensor:
    """The complex conjugate (a new tensor); a copy of a real tensor."""
    t = ew.as_tensor(x, "x")
    return unary("conj", t) if t.dtype.is_complex else t.copy()


def angle(x: object, deg: bool = False) -> Tensor:
    """The argument of each element, atan2(imag, real), in radians (degrees with `deg`): of
    the real dtype of a complex tensor; for a real tensor 0 or pi (f32 for integers)."""
    t = ew.as_tensor(x, "x")
    if t.dtype.is_complex:
        result = unary("angle", t)
    else:
        f = t.dtype if t.dtype.is_float else pr.DEFAULT_FLOAT
        with no_grad():
            result = ew.atan2(ew.astype(imag(t), f), ew.astype(t, f))
        # 0 or pi, piecewise constant: a zero gradient, as PyTorch's (atan2's is 0/0 at 0)
        result = record("angle", result, (t,), lambda g: (zeros_like(g),), saved=())
    return ew.multiply(result, 180.0 / np.pi) if deg else result


# ---------------------------------------------------------------- the declarations


def _conj_grad(g: object) -> object:
    return conj(g)


def _angle_grad(g: object, x: object, out: object) -> object:
    """d atan2(y, x) = (-y dx + x dy) / |z|^2: g * i z / |z|^2 (0 at z = 0)."""
    m2 = pk.real(x * pk.conj(x))
    return g * pk.where(m2 == 0, 0.0, x * 1j / m2)


def _part(name: str, doc: str, builtin: object, torch: str, **kw: object) -> Op:
    return register(Op(name, doc, "complex", builtin=builtin, aliases=Aliases(
        numpy=(name,), torch=(torch,), aten=(f"aten::{torch}",)), **kw))  # type: ignore[arg-type]


_part("real", "The real part (a view of a complex tensor; a real tensor itself).", bi.real,
      "real", grad="linear", complex_grad=True)
_part("imag", "The imaginary part (a view of a complex tensor; zeros for a real one).", bi.imag,
      "imag", grad="linear", complex_grad=True)
_part("conj", "The complex conjugate (a copy of a real tensor).", bi.conj, "conj",
      grad="formula", backward=_conj_grad, complex_grad=True)
_part("angle", "The argument atan2(imag, real) of each element (radians, or deg=True).",
      bi.angle, "angle", grad="formula", backward=_angle_grad, complex_grad=True)
for _name in ("real", "imag", "conj", "angle"):
    bind(_name, globals()[_name])
