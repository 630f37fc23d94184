"""The backward of each differentiable elementwise op: the gradients of its inputs from the
gradient `g` of its result, as compositions of tensor ops (which run as kernels themselves).

Each entry takes (g, inputs, out) and returns one gradient per input; broadcasting and dtypes
are fitted by the engine. An op whose result is not a float (comparisons, integer ops) is not
differentiable and records nothing; a float op missing here is refused when a gradient is
asked of it, never silently given none.
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


Unary = Callable[[Any, Any, Any], Any]  # (g, x, out) -> the gradient of x

UNARY: dict[str, Unary] = {
    "negative": lambda g, x, out: -g,
    "positive": lambda g, x, out: g,
    "exp": lambda g, x, out: g * out,
    "exp2": lambda g, x, out: g * out * LN2,
    "expm1": lambda g, x, out: g * (out + 1.0),
    "log": lambda g, x, out: g / x,
    "log2": lambda g, x, out: g / (x * LN2),
    "log10": lambda g, x, out: g / (x * LN10),
    "log1p": lambda g, x, out: g / (x + 1.0),
    "sqrt": lambda g, x, out: g * 0.5 / out,
    "rsqrt": lambda g, x, out: g * -0.5 * out * out * out,
    "square": lambda g, x, out: g * 2.0 * x,
    "reciprocal": lambda g, x, out: -g * out * out,
    "sin": lambda g, x, out: g * pk.cos(x),
    "cos": lambda g, x, out: -g * pk.sin(x),
    "tan": lambda g, x, out: g * (1.0 + out * out),
    "sinh": lambda g, x, out: g * pk.cosh(x),
    "cosh": lambda g, x, out: g * pk.sinh(x),
    "tanh": lambda g, x, out: g * (1.0 - out * out),
    "asin": lambda g, x, out: g / pk.sqrt(1.0 - x * x),
    "acos": lambda g, x, out: -g / pk.sqrt(1.0 - x * x),
    "atan": lambda g, x, out: g / (1.0 + x * x),
    "asinh": lambda g, x, out: g / pk.sqrt(x * x + 1.0),
    "acosh": lambda g, x, out: g / pk.sqrt(x * x - 1.0),
    "atanh": lambda g, x, out: g / (1.0 - x * x),
    "abs": lambda g, x, out: g * pk.sign(x),
    "sigmoid": lambda g, x, out: g * out * (1.0 - out),
    "relu": lambda g, x, out: g * (x > 0),
    "silu": lambda g, x, out: elementwise_grads.silu_grad(g, x),
    "gelu": lambda g, x, out: elementwise_grads.gelu_grad(g, x),
    "erf": lambda g, x, out: g * (2.0 / math.sqrt(math.pi)) * pk.exp(-x * x),
    # piecewise constant: a zero gradient, as PyTorch gives
    "floor": lambda g, x, out: _zero(g),
    "ceil": lambda g, x, out: _zero(g),
    "trunc": lambda g, x, out: _zero(g),
    "round": lambda g, x, out: _zero(g),
    "sign": lambda g, x, out: _zero(g),
}


def _split(g: Any, first: Any) -> Any:
    """Ties of maximum/minimum share the gradient equally, as PyTorch's do."""
    return g * pk.where(first, 1.0, 0.0)


def _max_grads(g: Any, a: Any, b: Any) -> tuple[Any, Any]:
    share = pk.where(a > b, 1.0, pk.where(a == b, 0.5, 0.0))
    return g * share, g * (1.0 - share)


Binary = Callable[[Any, Any, Any, Any], tuple[Any, Any]]  # (g, a, b, out) -> (ga, gb)

BINARY: dict[str, Binary] = {
    "add": lambda g, a, b, out: (g, g),
    "subtract": lambda g, a, b, out: (g, -g),
    "multiply": lambda g, a, b, out: (g * b, g * a),
    "divide": lambda g, a, b, out: (g / b, -g * out / b),
    "pow": lambda g, a, b, out: (g * b * a ** (b - 1), g * out * pk.log(a)),
    "maximum": lambda g, a, b, out: _max_grads(g, a, b),
    "minimum": lambda g, a, b, out: _max_grads(g, b, a),
    "atan2": lambda g, a, b, out: (g * b / (a * a + b * b), -g * a / (a * a + b * b)),
    "hypot": lambda g, a, b, out: (g * a / out, g * b / out),
    "logaddexp": lambda g, a, b, out: (g * pk.exp(a - out), g * pk.exp(b - out)),
    "remainder": lambda g, a, b, out: (g, -g * pk.floor(a / b)),
    "floor_divide": lambda g, a, b, out: (_zero(g), _zero(g)),
    "copysign": lambda g, a, b, out: (g * pk.sign(a) * pk.sign(out), _zero(g)),
}


def refuse(name: str) -> Callable[..., Any]:
    """The backward of a float op without one here: a clear error when it is reached."""
    def backward(g: Any) -> Any:
        raise NotImplementedError(f"the gradient of {name} is not implemented in pykern yet")
    return backward
