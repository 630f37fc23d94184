"""Backward of `gelu(x, approximate="tanh")`, 0.5·x·(1 + tanh(u)) with
u = √(2/π)·(x + 0.044715·x³): its derivative is
0.5·(1 + tanh u) + 0.5·x·(1 - tanh² u)·√(2/π)·(1 + 3·0.044715·x²). (The erf form's
derivative, which the elementwise table holds under the same op name, is off by up to 1e-3.)"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pykern as pk
from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad

_C = math.sqrt(2.0 / math.pi)
_A = 0.044715


def gelu_tanh(fused: Callable[[Any], Any], x: Any) -> Any:
    """`fused(x)` is the forward kernel's result, recorded with this derivative."""
    with no_grad():
        out = fused(x)
    if not out.dtype.is_float:
        return out

    def back(g: Any) -> tuple[Any]:
        t = pk.tanh(_C * (x + _A * x * x * x))
        return (g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _C * (1.0 + 3.0 * _A * x * x)),)

    return record("gelu_tanh", out, (x,), back)
