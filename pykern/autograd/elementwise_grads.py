"""Backward formulas of elementwise ops fused into one element function each, so that the
gradient of an activation is one kernel over (g, x) instead of a chain of ops (and of
launches): they run through the generic binary kernel as internal BinaryOps, with the type
rules of the float ops they differentiate."""

from __future__ import annotations

import math
from typing import Any

import pykern as pk
from pykern.tensor.elementwise.binary_ops import BinaryOp, _float_math

_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@pk.func
def gelu_grad_f(g, x):
    cdf = 0.5 * (1.0 + pk.erf(x * _SQRT1_2))
    return g * (cdf + x * pk.exp(-0.5 * x * x) * _INV_SQRT_2PI)


@pk.func
def silu_grad_f(g, x):
    s = 1.0 / (1.0 + pk.exp(-x))
    return g * (s * (1.0 + x * (1.0 - s)))


GELU_GRAD = BinaryOp("gelu_backward", gelu_grad_f, _float_math)
SILU_GRAD = BinaryOp("silu_backward", silu_grad_f, _float_math)


def gelu_grad(g: Any, x: Any) -> Any:
    """d gelu(x) · g: g · (Φ(x) + x φ(x))."""
    from pykern.tensor.elementwise.functions import binary  # (elementwise imports autograd)

    return binary(GELU_GRAD, g, x)


def silu_grad(g: Any, x: Any) -> Any:
    """d silu(x) · g: g · σ(x) (1 + x (1 − σ(x)))."""
    from pykern.tensor.elementwise.functions import binary

    return binary(SILU_GRAD, g, x)
