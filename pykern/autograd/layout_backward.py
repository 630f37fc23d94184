"""Backward of `tril` and `triu`: the triangle's mask applied to `g` (the op is linear and
its own adjoint)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad


def triangle(fused: Callable[[Any], Any], x: Any, name: str) -> Any:
    """`fused(t)` keeps the triangle of `t` (tril or triu with its k): recorded for x, the
    gradient being the same triangle of g."""
    with no_grad():
        out = fused(x)
    if not (out.dtype.is_float or out.dtype.is_complex):
        return out
    return record(name, out, (x,), lambda g: (fused(g),))
