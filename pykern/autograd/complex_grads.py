"""The backward of the elementwise ops on complex tensors.

pykern follows PyTorch's convention: a complex number is a pair of reals, and the gradient
of a real loss L with respect to z = x + iy is dL/dx + i dL/dy (so `z -= lr * z.grad` descends).
For a holomorphic f, w = f(z), that makes the gradient of z `g * conj(f'(z))` for the
gradient g of w — the real formulas of `derivatives`, run on conj(g) and conjugated back, so
each holomorphic op reuses its real formula as written. Ops that are not holomorphic (abs,
angle, conj) have their own. A real input of a complex op (`x * z` with x real) gets the
real part, which the engine takes when it fits the gradient to the input's dtype.
"""

from __future__ import annotations

import cmath
from collections.abc import Callable
from typing import Any

import pykern as pk
from pykern.autograd import derivatives
from pykern.autograd.graph import record
from pykern.autograd.records import record_pair


def _holomorphic(formula: Callable[..., Any]) -> Callable[..., Any]:
    """g * conj(f'(z)) from a formula that gives g * f'(z): conj(formula(conj(g)))."""
    def backward(g: Any, **tensors: Any) -> Any:
        return pk.conj(formula(pk.conj(g), **tensors))
    backward.reads = derivatives.reads(formula)  # type: ignore[attr-defined]
    return backward


def _acosh(g: Any, x: Any) -> Any:
    """acosh'(z) = 1 / (sqrt(z - 1) sqrt(z + 1)): for complex z the two roots are not
    sqrt(z*z - 1), whose branch differs left of the imaginary axis."""
    return g / (pk.sqrt(x - 1.0) * pk.sqrt(x + 1.0))


_UNARY_FORMULAS = {**{name: derivatives.UNARY[name] for name in (
    "negative", "positive", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "square", "reciprocal", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
    "asinh", "atanh")}, "acosh": _acosh}
UNARY: dict[str, Callable[..., Any]] = {n: _holomorphic(f) for n, f in _UNARY_FORMULAS.items()}


def _abs(g: Any, x: Any, out: Any) -> Any:
    """d|z|: g * z/|z| (0 at z = 0, as PyTorch)."""
    return g * pk.where(out == 0, 0.0, x / out)


def _angle(g: Any, x: Any, out: Any) -> Any:
    """d atan2(y, x) = (-y dx + x dy) / |z|^2: g * i z / |z|^2 (0 at z = 0)."""
    m2 = pk.real(x * pk.conj(x))
    return g * pk.where(m2 == 0, 0.0, x * 1j / m2)


def _sign(g: Any, x: Any, out: Any) -> Any:
    """sgn(z) = z/|z|: (g - Re(conj(g) s) s) / |z| (0 at z = 0), the part of g across s."""
    m = pk.abs(x)
    return pk.where(m == 0, 0.0, (g - pk.real(pk.conj(g) * out) * out) / m)


def _conj(g: Any) -> Any:
    return pk.conj(g)


def _round(g: Any) -> Any:
    return g * 0.0


UNARY.update(abs=_abs, angle=_angle, sign=_sign, conj=_conj, round=_round)


def _pow_a(g: Any, a: Any, b: Any) -> Any:
    """d a**b / da = b a**(b-1), 0 where b == 0 (a**0 is constant)."""
    if isinstance(b, (int, float, complex)):
        return g * 0.0 if b == 0 else g * b * a ** (b - 1)
    return pk.where(b == 0, 0.0, g * b * a ** (b - 1))


def _pow_b(g: Any, a: Any, out: Any) -> Any:
    """d a**b / db = a**b log a, 0 where a == 0 (log 0 = -inf; 0**b is 0 or nan there)."""
    if isinstance(a, (int, float, complex)):
        return g * 0.0 if a == 0 else g * out * cmath.log(a)
    return pk.where(a == 0, 0.0, g * out * pk.log(a))


BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    name: (_holomorphic(fa), _holomorphic(fb)) for name, (fa, fb) in (
        *((n, derivatives.BINARY[n]) for n in ("add", "subtract", "multiply", "divide")),
        ("pow", (_pow_a, _pow_b)))}


def _detached(t: Any, dtype: Any) -> Any:
    """What a formula reads of an operand: a tensor in the op's complex dtype, without its
    graph (a real operand converted, so log and sqrt of it are complex); numbers as they are."""
    if not hasattr(t, "detach"):
        return t
    t = t.detach()
    return t if t.dtype == dtype else t.astype(dtype)


def record_unary(name: str, out: Any, x: Any) -> Any:
    """`out` = the complex unary op `name` of `x`, with its backward (or a refusal naming it)."""
    fn = UNARY.get(name)
    if fn is None:
        return record(name, out, (x,), derivatives.refuse(name + " of a complex tensor"))
    read = derivatives.reads(fn)
    tensors = {"x": x.detach(), "out": out.detach()}
    kw = {n: tensors[n] for n in read}
    saved = [x if n == "x" else out for n in read]
    return record(name, out, (x,), lambda g: (fn(g, **kw),), saved=saved)


def record_binary(name: str, out: Any, a: Any, b: Any) -> Any:
    """`out` = the binary op `name` of `a` and `b`, one of them complex, with the backward of
    each input that requires grad."""
    pair = BINARY.get(name)
    if pair is None:
        return record(name, out, (a, b), derivatives.refuse(name + " of complex tensors"))
    return record_pair(name, out, a, b, pair, lambda t: _detached(t, out.dtype))
