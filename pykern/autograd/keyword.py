"""`requires_grad=` on the creation functions (`pk.zeros(3, requires_grad=True)`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def accepts_requires_grad(fn: F) -> F:
    """`fn` with a keyword `requires_grad` (default False) that marks the tensor it makes."""
    @functools.wraps(fn)
    def wrapper(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Any:
        t = fn(*args, **kwargs)
        return t.requires_grad_() if requires_grad else t
    return wrapper  # type: ignore[return-value]
