"""Reading and writing a parameter's `.grad`, also before `pk.Tensor` has the attribute.

Autograd gives `pk.Tensor` its `.grad`; until a Tensor has that attribute (its `__slots__`
lack it), gradients assigned with `set_grad` are kept here, by the parameter's id, and removed
when the parameter dies. Once Tensors have `.grad`, both functions are plain attribute access.
"""

from __future__ import annotations

import weakref

from pykern.jit import compiling
from pykern.tensor.core.tensor import Tensor

# id(parameter) -> its gradient, only for Tensors that cannot hold a `.grad` themselves
_kept: dict[int, Tensor] = {}


def get_grad(p: Tensor) -> Tensor | None:
    """`p.grad`: the gradient last assigned, or None."""
    try:
        return p.grad  # type: ignore[attr-defined]
    except AttributeError:
        return _kept.get(id(p))


def set_grad(p: Tensor, grad: Tensor | None) -> None:
    """`p.grad = grad` (None removes it)."""
    if compiling.ACTIVE[0] is not None:
        compiling.note_grad_set(p)  # a pk.compile recording: no longer the entry's .grad
    try:
        p.grad = grad  # type: ignore[attr-defined]
        return
    except AttributeError:
        pass
    key = id(p)
    if grad is None:
        _kept.pop(key, None)
        return
    if key not in _kept:
        weakref.finalize(p, _kept.pop, key, None)
    _kept[key] = grad
