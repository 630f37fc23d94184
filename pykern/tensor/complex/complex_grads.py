"""Recording the backward of the elementwise ops on complex tensors.

The formulas are the ops' own (`complex_backward` of their declarations: the real formula
conjugated for a holomorphic op, `unary_ops.holomorphic`, or one of its own for abs, sign,
angle, conj, round). A real input of a complex op (`x * z` with x real) gets the real part,
which the engine takes when it fits the gradient to the input's dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.graph import record
from pykern.autograd.records import reads, record_pair, refuse


def _detached(t: Any, dtype: Any) -> Any:
    """What a formula reads of an operand: a tensor in the op's complex dtype, without its
    graph (a real operand converted, so log and sqrt of it are complex); numbers as they are."""
    if not hasattr(t, "detach"):
        return t
    t = t.detach()
    return t if t.dtype == dtype else t.astype(dtype)


def record_unary(name: str, out: Any, x: Any, formula: Callable[..., Any] | None) -> Any:
    """`out` = the complex unary op `name` of `x`, with its backward `formula` (None: a
    refusal naming it)."""
    if formula is None:
        return record(name, out, (x,), refuse(name + " of a complex tensor"))
    read = reads(formula)
    tensors = {"x": x.detach(), "out": out.detach()}
    kw = {n: tensors[n] for n in read}
    saved = [x if n == "x" else out for n in read]
    return record(name, out, (x,), lambda g: (formula(g, **kw),), saved=saved)


def record_binary(name: str, out: Any, a: Any, b: Any,
                  pair: tuple[Callable[..., Any], Callable[..., Any]] | None) -> Any:
    """`out` = the binary op `name` of `a` and `b`, one of them complex, with the backward
    `pair` of each input that requires grad (None: a refusal naming it)."""
    if pair is None:
        return record(name, out, (a, b), refuse(name + " of complex tensors"))
    return record_pair(name, out, a, b, pair, lambda t: _detached(t, out.dtype))
