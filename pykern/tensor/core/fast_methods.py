"""The unary methods' and full reductions' fast path: `x.relu()`, `-x`, `abs(x)`, `x.exp()`,
`x.sum()`, `x.mean()` of a tensor whose op plan exists replay it without the layers between
the method and the plan.

As the binary operators' (`fast_operators`): each method of `Tensor` named here is replaced
by a function that asks first whether the common case holds — a plain real tensor on the
current device, no op being captured, a plan made for its signature (a reduction: over every
axis, no `keepdims` or `dtype`, an input that does not require grad) — and then replays that
plan, recording a unary op for autograd as `elementwise.unary` does. Anything else goes the
way it always went (the method it replaced), so errors, complex inputs, `pk.fuse` tracing,
reductions that record their backward and the first call of a signature behave as before: a
plan exists only for a signature that way made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.mode import is_grad_enabled
from pykern.autograd.records import record_unary
from pykern.jit import capture as cap
from pykern.jit.strict_float import STRICT_BLOCK
from pykern.runtime import get_device
from pykern.tensor.core.dispatch import _PLANS, Plan
from pykern.tensor.core.fast_operators import named_like
from pykern.tensor.elementwise.unary_ops import UNARY

# method -> the unary op it runs (`elementwise.<op>(self)`)
UNARY_METHODS = {
    "__neg__": "negative", "__abs__": "abs", "neg": "negative", "abs": "abs", "exp": "exp",
    "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "sin": "sin", "cos": "cos", "tanh": "tanh",
    "sigmoid": "sigmoid", "relu": "relu", "square": "square",
}
# method -> the first part of its dispatch key over every axis (`reduction._sum_like`, `_mean`)
REDUCTIONS = {"sum": ("sum", None, False, None), "mean": ("mean", None, False)}


def install(tensor: type) -> None:
    """Replaces each method of UNARY_METHODS and REDUCTIONS on `tensor` with its fast path,
    which falls back to the method it replaced."""
    for name, op in UNARY_METHODS.items():
        setattr(tensor, name, _fast_unary(tensor, getattr(tensor, name), UNARY[op]))
    for name, key in REDUCTIONS.items():
        setattr(tensor, name, _fast_reduction(tensor, getattr(tensor, name), key))


def _plan(tensor: type, x: Any, key: tuple) -> tuple[Any, Plan] | None:
    """The device and plan of `key` for `x` (`dispatch.signature` of one operand), where the
    common case holds; None otherwise."""
    if type(x) is tensor and cap.ACTIVE[0] is None and x.dtype.kind != "c":
        device = x.buffer.device
        if device is get_device():
            plan = _PLANS.get((key, device, x.dtype, x.shape, x._strides, x.offset))
            if type(plan) is Plan:
                return device, plan
    return None


def replay_unary(tensor: type, x: Any, op: Any) -> Any:
    """`op(x)` by replaying its plan, recorded for autograd, where the common case holds (`x`
    of type `tensor`); None otherwise. The unary methods and functions (`pk.exp(x)`) both
    start here."""
    found = _plan(tensor, x, (op, STRICT_BLOCK.get()))
    if found is None:
        return None
    result = found[1].run(found[0], (x,))
    # needs_grad(x), less its refusal of complex inputs (none here)
    if x.requires_grad and is_grad_enabled():
        return record_unary(op.name, result, x, op.backward)
    return result


def _fast_unary(tensor: type, wrapped: Callable[..., Any], op: Any) -> Callable[..., Any]:
    def method(self: Any) -> Any:
        result = replay_unary(tensor, self, op)
        return wrapped(self) if result is None else result

    return named_like(method, wrapped)


def _fast_reduction(tensor: type, wrapped: Callable[..., Any], key: tuple
                    ) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and not self.requires_grad:
            found = _plan(tensor, self, key)
            if found is not None:
                return found[1].run(found[0], (self,))
        return wrapped(self, *args, **kwargs)

    return named_like(method, wrapped)

