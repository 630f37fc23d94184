"""Grad mode: whether ops record the graph. On by default, per thread, as in PyTorch."""

from __future__ import annotations

import contextlib
import threading

_state = threading.local()


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def _set(enabled: bool) -> None:
    _state.enabled = enabled


class set_grad_enabled(contextlib.ContextDecorator):  # noqa: N801 (PyTorch's name)
    """`with pk.autograd.set_grad_enabled(False): ...`, or a decorator; the mode is restored
    on exit."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = bool(enabled)
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(is_grad_enabled())
        _set(self.enabled)

    def __exit__(self, *exc: object) -> None:
        _set(self._previous.pop())


class no_grad(set_grad_enabled):  # noqa: N801
    """`with pk.no_grad(): ...` (or `@pk.no_grad()`): ops record nothing inside."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(set_grad_enabled):  # noqa: N801
    """`with pk.enable_grad(): ...`: ops record again, inside a `no_grad` block too."""

    def __init__(self) -> None:
        super().__init__(True)
