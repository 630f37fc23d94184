"""`pk.autograd.Function`: an op of the user's own, with its forward and backward.

    class Square(pk.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return my_square_kernel_op(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    y = Square.apply(x)

`forward` runs without recording (its own ops are not differentiated); `backward` gets the
gradient of the result and returns one gradient per argument of `forward` (None for those
that take none). One tensor result.
"""

from __future__ import annotations

from typing import Any

from pykern.autograd.graph import record
from pykern.autograd.library import TENSORS
from pykern.autograd.mode import no_grad


class FunctionCtx:
    """What `forward` leaves for `backward`: `save_for_backward(*tensors)` and
    `saved_tensors`; `needs_input_grad` says which arguments require grad."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self._saved: tuple[Any, ...] = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        return self._saved


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `apply`."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:
        raise NotImplementedError("a pk.autograd.Function needs a static forward(ctx, *args)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError("a pk.autograd.Function needs a static backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = FunctionCtx(tuple(bool(getattr(a, "requires_grad", False)) for a in args))
        with no_grad():
            result = cls.forward(ctx, *args)
        if not isinstance(result, TENSORS.tensor_type):
            raise TypeError(f"{cls.__name__}.forward must return one pk.Tensor, not "
                            f"{type(result).__name__}")
        if result.requires_grad or any(result is a for a in args):
            # an argument (or another tensor of a graph) returned as it is: recording on it
            # would give that very tensor this op's grad_fn, so that a leaf stops being one
            # and every later use of it passes through this backward; the result is a new
            # tensor on the same memory instead, as in PyTorch
            result = result.detach()

        def backward(g: Any) -> tuple[Any, ...]:
            grads = cls.backward(ctx, g)
            grads = grads if isinstance(grads, tuple) else (grads,)
            if len(grads) != len(args):
                raise RuntimeError(f"{cls.__name__}.backward returned {len(grads)} gradients "
                                   f"for {len(args)} arguments of forward")
            return grads

        return record(cls.__name__, result, args, backward)
