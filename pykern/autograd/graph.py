"""The recorded graph: a `Node` per op result that requires grad.

A node holds its inputs (the tensors the op read; None where an input was a number or does
not require grad) and `backward`, a function from the gradient of the result to the
gradients of the inputs (a tuple, None for an input that gets none). `record` attaches one to
a result when grad mode is on and an input requires grad; otherwise it does nothing, so ops
pay one attribute test when nobody differentiates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pykern.autograd.mode import is_grad_enabled

Backward = Callable[[Any], Sequence[Any]]


class Node:
    """How the gradient of one op's result reaches the op's inputs."""

    __slots__ = ("name", "inputs", "backward", "__weakref__")

    def __init__(self, name: str, inputs: tuple[Any, ...], backward: Backward) -> None:
        self.name = name
        self.inputs = inputs
        self.backward: Backward | None = backward

    def __repr__(self) -> str:
        return f"<{self.name}Backward>"

    def release(self) -> None:
        """Drops what the backward function holds (its saved tensors) and the inputs, once it
        has run: a result kept after backward() (a loss in a list) keeps no activations."""
        self.backward = None
        self.inputs = ()


def needs_grad(*inputs: object) -> bool:
    """Whether an op on `inputs` records: grad mode is on and one input requires grad."""
    return is_grad_enabled() and any(getattr(t, "requires_grad", False) for t in inputs)


def record(name: str, result: Any, inputs: Sequence[object], backward: Backward) -> Any:
    """`result` with a `grad_fn` when `needs_grad(*inputs)`; `result` unchanged otherwise."""
    if not needs_grad(*inputs):
        return result
    kept = tuple(t if getattr(t, "requires_grad", False) else None for t in inputs)
    result.requires_grad = True
    result.grad_fn = Node(name, kept, backward)
    return result
