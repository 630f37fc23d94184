"""The binary operators' fast path: `a + b` of two tensors whose op plan exists replays it
without the layers between the operator and the plan.

An operator on two tensors goes through the operand-device edge (`operand_device`), the
method, `elementwise.binary` and `dispatch`; each is a Python call, and together they cost
about as much as the launch of a tiny op. Here each operator of `Tensor` is replaced by a
function that asks first whether the common case holds — both operands plain tensors on the
current device, no op being captured, a plan made for their signature — and then replays that
plan (recording the op for autograd as `elementwise.binary` does). Anything else goes the way
it always went (the wrapped method), so errors, broadcasting, promotion, scalars, complex
operands, `pk.fuse` tracing and the first call of a signature behave exactly as before: a plan
exists only for a signature that way made.

The in-place operators (`a += b`) take the same path where the write records nothing (no
operand, nor the tensor whose memory `a` shares, requires grad): the plan of `a`'s `out=` op
is replayed and the write counted in `a`'s version, as `elementwise.binary` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.mode import is_grad_enabled
from pykern.autograd.version import bump
from pykern.autograd.records import record_binary
from pykern.jit import capture as cap
from pykern.jit.strict_float import STRICT_BLOCK
from pykern.runtime import get_device
from pykern.tensor.core.dispatch import _PLANS, Plan, signature
from pykern.tensor.core.scalar_constants import scalar_constant
from pykern.tensor.elementwise import binary_ops as bo

# operator name -> (op, reflected)
OPERATORS = {
    "__add__": (bo.ADD, False), "__radd__": (bo.ADD, True),
    "__sub__": (bo.SUBTRACT, False), "__rsub__": (bo.SUBTRACT, True),
    "__mul__": (bo.MULTIPLY, False), "__rmul__": (bo.MULTIPLY, True),
    "__truediv__": (bo.DIVIDE, False), "__rtruediv__": (bo.DIVIDE, True),
    "__pow__": (bo.POW, False), "__rpow__": (bo.POW, True),
    "__eq__": (bo.EQUAL, False), "__ne__": (bo.NOT_EQUAL, False),
    "__lt__": (bo.LESS, False), "__le__": (bo.LESS_EQUAL, False),
    "__gt__": (bo.GREATER, False), "__ge__": (bo.GREATER_EQUAL, False),
}
INPLACE_OPERATORS = {
    "__iadd__": bo.ADD, "__isub__": bo.SUBTRACT, "__imul__": bo.MULTIPLY,
    "__itruediv__": bo.DIVIDE, "__ipow__": bo.POW,
}


def install(tensor: type) -> None:
    """Replaces each operator of OPERATORS on `tensor` (already wrapped by the operand-device
    edge) with its fast path, which falls back to the wrapped method."""
    for name, (op, reflected) in OPERATORS.items():
        setattr(tensor, name, _fast(tensor, getattr(tensor, name), op, reflected))
    for name, op in INPLACE_OPERATORS.items():
        setattr(tensor, name, _fast_inplace(tensor, getattr(tensor, name), op))


def _fast(tensor: type, wrapped: Callable[..., Any], op: bo.BinaryOp, reflected: bool
          ) -> Callable[..., Any]:
    def operator(self: Any, other: object) -> Any:
        # the plan key of `elementwise.binary` for two real tensors (a complex dtype never
        # has a plan under it), built here from the same parts as `dispatch.signature`
        if type(other) is tensor and type(self) is tensor and cap.ACTIVE[0] is None:
            a, b = (other, self) if reflected else (self, other)
            device = a.buffer.device
            if b.buffer.device is device and device is get_device():
                plan = _PLANS.get(((op, STRICT_BLOCK.get()), device, a.dtype, a.shape,
                                   a._strides, a.offset, b.dtype, b.shape, b._strides,
                                   b.offset, a.buffer is b.buffer))
                if type(plan) is Plan:
                    result = plan.run(device, (a, b))
                    # needs_grad(a, b), less its refusal of complex inputs (none here)
                    if (a.requires_grad or b.requires_grad) and is_grad_enabled():
                        return record_binary(op.name, result, a, b, op.backward)
                    return result
        elif (type(other) is float or type(other) is int) and type(self) is tensor \
                and op is not bo.POW and cap.ACTIVE[0] is None and self.dtype.is_float:
            result = _with_scalar(self, other, op, reflected)
            if result is not None:
                return result
        return wrapped(self, other)

    return named_like(operator, wrapped)


def _with_scalar(t: Any, scalar: float | int, op: bo.BinaryOp, reflected: bool) -> Any:
    """`t op scalar` (`scalar op t` where `reflected`) of a real floating tensor through the
    plan `elementwise.binary` makes for it: the scalar as its cached constant of t's dtype,
    the key of `_with_constant`. None where there is no plan yet, or t is on another device
    than the current one."""
    device = t.buffer.device
    if device is not get_device():
        return None
    c = scalar_constant(scalar, t.dtype)
    a, b = (c, t) if reflected else (t, c)
    plan = _PLANS.get(((op, t.dtype, STRICT_BLOCK.get()), device, a.dtype, a.shape,
                       a._strides, a.offset, b.dtype, b.shape, b._strides, b.offset, False))
    if type(plan) is not Plan:
        return None
    result = plan.run(device, (a, b))
    if t.requires_grad and is_grad_enabled():  # recorded with the scalar, as binary does
        return record_binary(op.name, result, *((scalar, t) if reflected else (t, scalar)),
                             op.backward)
    return result


def _fast_inplace(tensor: type, wrapped: Callable[..., Any], op: bo.BinaryOp
                  ) -> Callable[..., Any]:
    def operator(self: Any, other: object) -> Any:
        # `elementwise.binary(op, self, other, out=self)` where `inplace.records_write` is
        # False (nothing requires grad; a complex operand goes its own way there)
        if type(other) is tensor and type(self) is tensor and cap.ACTIVE[0] is None \
                and not (self.requires_grad or other.requires_grad) \
                and (self._base is None or not self._base.requires_grad) \
                and self.dtype.kind != "c" and other.dtype.kind != "c":
            device = self.buffer.device
            if other.buffer.device is device and device is get_device():
                operands = (self, other, self)
                plan = _PLANS.get(signature((op, "out", STRICT_BLOCK.get()), device, operands))
                if type(plan) is Plan:
                    plan.run(device, operands)
                    bump(self)
                    return self
        return wrapped(self, other)

    return named_like(operator, wrapped)


def named_like(operator: Callable[..., Any], wrapped: Callable[..., Any]) -> Callable[..., Any]:
    """`operator`, named and documented as `wrapped` (which it falls back to), marked as
    following its operands' device (`operand_device`: not wrapped again)."""
    operator.__name__ = operator.__qualname__ = wrapped.__name__
    operator.__doc__ = wrapped.__doc__
    operator.__wrapped__ = wrapped  # type: ignore[attr-defined]
    operator.__follows_operands__ = True  # type: ignore[attr-defined]
    return operator
