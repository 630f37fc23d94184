"""The backward of each differentiable elementwise op: the gradients of its inputs from the
gradient `g` of its result, as compositions of tensor ops (which run as kernels themselves).

Each formula takes `g` and, by name, only the tensors it reads (`x`, or `a`/`b`, and `out` the
result): its parameters are what the op saves, so an in-place write to anything else does
not stop its backward. A binary op has one formula per input, run only for an input that
requires grad. Broadcasting and dtypes are fitted by the engine. An op whose result is not a
float (comparisons, integer ops) is not differentiable and records nothing; a float op
missing here is refused when a gradient is asked of it, never silently given none.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pykern as pk
from pykern.autograd import elementwise_grads

LN2, LN10 = math.log(2.0), math.log(10.0)


def _zero(g: Any) -> Any:
    return g * 0.0


# (g, then `x` and/or `out` by name) -> the gradient of x
UNARY: dict[str, Callable[..., Any]] = {
    "negative": lambda g: -g,
    "positive": lambda g: g,
    "exp": lambda g, out: g * out,
    "exp2": lambda g, out: g * out * LN2,
    "expm1": lambda g, out: g * (out + 1.0),
    "log": lambda g, x: g / x,
    "log2": lambda g, x: g / (x * LN2),
    "log10": lambda g, x: g / (x * LN10),
    "log1p": lambda g, x: g / (x + 1.0),
    "sqrt": lambda g, out: g * 0.5 / out,
    "rsqrt": lambda g, out: g * -0.5 * out * out * out,
    "square": lambda g, x: g * 2.0 * x,
    "reciprocal": lambda g, out: -g * out * out,
    "sin": lambda g, x: g * pk.cos(x),
    "cos": lambda g, x: -g * pk.sin(x),
    "tan": lambda g, out: g * (1.0 + out * out),
    "sinh": lambda g, x: g * pk.cosh(x),
    "cosh": lambda g, x: g * pk.sinh(x),
    "tanh": lambda g, out: g * (1.0 - out * out),
    "asin": lambda g, x: g / pk.sqrt(1.0 - x * x),
    "acos": lambda g, x: -g / pk.sqrt(1.0 - x * x),
    "atan": lambda g, x: g / (1.0 + x * x),
    "asinh": lambda g, x: g / pk.sqrt(x * x + 1.0),
    "acosh": lambda g, x: g / pk.sqrt(x * x - 1.0),
    "atanh": lambda g, x: g / (1.0 - x * x),
    "abs": lambda g, x: g * pk.sign(x),
    "sigmoid": lambda g, out: g * out * (1.0 - out),
    "relu": lambda g, x: g * (x > 0),
    "silu": elementwise_grads.silu_grad,
    "gelu": elementwise_grads.gelu_grad,
    "erf": lambda g, x: g * (2.0 / math.sqrt(math.pi)) * pk.exp(-x * x),
    # piecewise constant: a zero gradient, as PyTorch gives
    "floor": _zero,
    "ceil": _zero,
    "trunc": _zero,
    "round": _zero,
    "sign": _zero,
}


def _max_share(a: Any, b: Any) -> Any:
    """The share of maximum(a, b)'s gradient that goes to `a`: ties split it equally, as
    PyTorch's do."""
    return pk.where(a > b, 1.0, pk.where(a == b, 0.5, 0.0))


def _pow_a(g: Any, a: Any, b: Any) -> Any:
    """d a**b / da = b·a^(b-1), and 0 where b == 0 (a**0 is constant; the formula would give
    0·0^-1 = NaN at a = 0), as PyTorch's."""
    if isinstance(b, (int, float)):
        return g * 0.0 if b == 0 else g * b * a ** (b - 1)
    return pk.where(b == 0, 0.0, g * b * a ** (b - 1))


def _pow_b(g: Any, a: Any, b: Any, out: Any) -> Any:
    """d a**b / db = a**b·log a, and 0 where a == 0 and b >= 0 (0**b is constant there; the
    formula would give 0·-inf = NaN), as PyTorch's. A base of 0 given as a Python number has
    log -inf."""
    if isinstance(a, (int, float)):
        if a == 0:
            return pk.where(b >= 0, 0.0, g * out * float("-inf"))
        return g * out * math.log(a)
    return pk.where((a == 0) & (b >= 0), 0.0, g * out * pk.log(a))


def _hypot_a(g: Any, a: Any, out: Any) -> Any:
    return g * a / out


def _hypot_b(g: Any, b: Any, out: Any) -> Any:
    return g * b / out


# name -> (the gradient of a, the gradient of b), each (g, then `a`, `b`, `out` by name)
BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "add": (lambda g: g, lambda g: g),
    "subtract": (lambda g: g, lambda g: -g),
    "multiply": (lambda g, b: g * b, lambda g, a: g * a),
    "divide": (lambda g, b: g / b, lambda g, b, out: -g * out / b),
    "pow": (_pow_a, _pow_b),
    "maximum": (lambda g, a, b: g * _max_share(a, b), lambda g, a, b: g * _max_share(b, a)),
    "minimum": (lambda g, a, b: g * _max_share(b, a), lambda g, a, b: g * _max_share(a, b)),
    "atan2": (lambda g, a, b: g * b / (a * a + b * b), lambda g, a, b: -g * a / (a * a + b * b)),
    "hypot": (_hypot_a, _hypot_b),
    "logaddexp": (lambda g, a, out: g * pk.exp(a - out), lambda g, b, out: g * pk.exp(b - out)),
    "remainder": (lambda g: g, lambda g, a, b: -g * pk.floor(a / b)),
    "floor_divide": (_zero, _zero),
    "copysign": (lambda g, a, out: g * pk.sign(a) * pk.sign(out), _zero),
    # one ulp from x: x's own slope; y only picks the direction
    "nextafter": (lambda g: g, _zero),
}


def reads(formula: Callable[..., Any]) -> tuple[str, ...]:
    """The names of the tensors a formula reads: its parameters after `g` (what its op must
    save for it), or those a wrapper declares in its `reads` attribute."""
    declared = getattr(formula, "reads", None)
    if declared is not None:
        return tuple(declared)
    code = formula.__code__
    return code.co_varnames[1:code.co_argcount]


def refuse(name: str) -> Callable[..., Any]:
    """The backward of a float op without one here: a clear error when it is reached."""
    def backward(g: Any) -> Any:
        raise NotImplementedError(f"the gradient of {name} is not implemented in pykern yet")
    return backward
