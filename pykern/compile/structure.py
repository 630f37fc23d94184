"""The arguments and results of a compiled function as a structure with tensors in it.

`flatten` walks a value (tuples, lists and dicts inside each other, tensors and other values
as leaves) and gives a template, the tensors in order, and a key: what a call's recording
depends on. A tensor leaf contributes its dtype, shape, strides and device; one that requires
gradients (a parameter passed as an argument) is state the recording updates in place, and
counts by identity. A hashable value counts by value (an int, a float, a string, a dtype), any
other object by identity (a module, an optimizer). `fill` puts tensors back into a template.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pykern.runtime.errors import GraphError
from pykern.tensor.core.tensor import Tensor


class Leaf:
    """Where the template had the tensor `index` of the flattened list."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def flatten(value: Any, tensors: list[Tensor], key: list, what: str,
            keyed: Any = None) -> Any:
    """The template of `value`; appends its tensors to `tensors` and its key parts to `key`
    (a tensor's: `keyed(t)`, by default `tensor_key`). `what` names the value in an error (a
    numpy array, which cannot be part of a key)."""
    if isinstance(value, Tensor):
        same = next((i for i, t in enumerate(tensors) if t is value), None)
        if same is not None:  # the same tensor twice: one slot, as eager aliases them
            key.append(("same", same))
            return Leaf(same)
        tensors.append(value)
        key.append((keyed or tensor_key)(value))
        return Leaf(len(tensors) - 1)
    kind = type(value)
    if kind is tuple or kind is list:
        key.append((kind, len(value)))
        return kind(flatten(v, tensors, key, what, keyed) for v in value)
    if kind is dict:
        key.append((dict, tuple(value)))
        return {k: flatten(v, tensors, key, what, keyed) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        raise TypeError(f"pk.compile: {what} holds a numpy array; pass a pk.Tensor "
                        "(pk.asarray(x)) so that each call's values are copied in")
    try:
        hash(value)
    except TypeError:
        key.append(("id", id(value)))  # held by the template: the id stays its own
        return value
    key.append(("value", type(value), value))
    return value


def tensor_key(t: Tensor) -> tuple:
    """What a recording depends on of a tensor argument."""
    if t.requires_grad:
        return ("state", id(t))  # its storage and .grad are the recording's: this tensor only
    return ("tensor", t.dtype, t.shape, t._strides, t.buffer.device)  # type: ignore[attr-defined]


def _result_tensor_key(t: Tensor) -> tuple:
    return ("tensor", t.dtype, t.shape)


def fill(template: Any, tensors: list[Any]) -> Any:
    """`template` with each Leaf replaced by its tensor."""
    if type(template) is Leaf:
        return tensors[template.index]
    kind = type(template)
    if kind is tuple or kind is list:
        return kind(fill(v, tensors) for v in template)
    if kind is dict:
        return {k: fill(v, tensors) for k, v in template.items()}
    return template


def flatten_result(value: Any, tensors: list[Tensor]) -> tuple[Any, list]:
    """The template and key of a result (its structure and the values that are not tensors,
    which must be the same on every call for a replay to give them); refuses a value that
    cannot be compared (a numpy array: host data computed from tensors)."""
    key: list = []
    try:
        template = flatten(value, tensors, key, "the result", _result_tensor_key)
    except TypeError:
        raise GraphError("a pk.compile'd function returns a numpy array: results must be "
                         "tensors (read them after the call) or constant Python values"
                         ) from None
    return template, key
