"""numpy's functions and ufuncs that pykern does not run on the device, given tensors: they run
on host copies and return numpy's own result, as they would for a torch CPU tensor or a JAX
array. Each copy is an implicit one (`pk.transfer_guard` can log or forbid it). A tensor given
as `out=` gets numpy's result written into it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.errors import PykernError
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.core.transfer_guard import implicit_copy


class Unsupported(PykernError, TypeError):
    """What pykern's own implementation of a numpy function cannot do (a function, a ufunc
    method, an option): the call falls back on numpy over host copies."""


def on_host(call: Callable[..., Any], what: str, args: tuple, kwargs: dict) -> Any:
    """`call(*args, **kwargs)` with every tensor among them (inside lists, tuples and dicts
    too) replaced by a host copy; tensors given as `out=` receive the result."""
    outs = kwargs.get("out")
    tensor_outs = _out_tensors(outs)
    if tensor_outs:
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    result = call(*_to_host(args, what), **_to_host(kwargs, what))
    if not tensor_outs:
        return result
    results = result if isinstance(result, tuple) else (result,)
    for target, value in zip(tensor_outs, results):
        target[...] = value
    return tensor_outs[0] if not isinstance(outs, tuple) or len(tensor_outs) == 1 else \
        tuple(tensor_outs)


def _out_tensors(outs: object) -> list[Tensor]:
    found = list(outs) if isinstance(outs, tuple) else [outs]
    if found and all(isinstance(o, Tensor) for o in found):
        return found  # type: ignore[return-value]
    if any(isinstance(o, Tensor) for o in found):
        raise TypeError("out= mixes pk.Tensors and other arrays; give one kind")
    return []


def _to_host(value: Any, what: str) -> Any:
    if isinstance(value, Tensor):
        implicit_copy(what, value)
        return value.numpy()
    if isinstance(value, (list, tuple)) and any(_holds_tensor(v) for v in value):
        converted = [_to_host(v, what) for v in value]
        return type(value)(converted) if type(value) in (list, tuple) else converted
    if isinstance(value, dict):
        return {k: _to_host(v, what) for k, v in value.items()}
    return value


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return isinstance(value, dict) and any(_holds_tensor(v) for v in value.values())
