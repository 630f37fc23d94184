"""The tensor functions the autograd engine uses (zeros, assignment, views as parts, the tensor
type), provided by the tensor library when it loads (`pykern.tensor.library` calls `provide`).
The engine imports no op module: it knows tensors by these functions and their methods, so the
layers stay one-way (tensor -> autograd), with no import hidden inside a function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class TensorLibrary:
    """The functions, as attributes: `zeros(shape, dtype)`, `assign(target, value)`,
    `view_as_real(t)`, `view_as_complex(t)`, `tensor(buffer, shape, dtype, strides, offset)` (a
    view of a buffer) and `tensor_type` (the class, for isinstance checks)."""

    zeros: Callable[..., Any]
    assign: Callable[[Any, object], None]
    view_as_real: Callable[[Any], Any]
    view_as_complex: Callable[[Any], Any]
    tensor: Callable[..., Any]
    tensor_type: type


TENSORS = TensorLibrary()


def provide(**functions: Any) -> None:
    """Sets the library's functions (the tensor library calls this once, at import)."""
    for name, function in functions.items():
        if name not in TensorLibrary.__annotations__:
            raise TypeError(f"the autograd engine uses no tensor function {name!r}")
        setattr(TENSORS, name, function)
