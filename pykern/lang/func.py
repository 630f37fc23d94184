"""`@pk.func`: device functions, callable from kernels and from each other.

A device function is typed at each call site: it is compiled once per combination of argument
types (and of the arrays passed to it) that the kernels calling it use. Called from ordinary
Python, it runs as the Python function it is, which makes it easy to test on the host.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pykern.frontend.source import KernelSource, load_source


class Func:
    """A `@pk.func` device function."""

    is_pykern_func = True  # how the frontend recognises one without importing this module

    def __init__(self, fn: Callable):
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self._source: KernelSource | None = None

    @property
    def source(self) -> KernelSource:
        if self._source is None:
            self._source = load_source(self.__wrapped__)
        return self._source

    def __call__(self, *args: Any) -> Any:
        return self.__wrapped__(*args)

    def __repr__(self) -> str:
        return f"<pk.func {self.__module__}.{self.__qualname__}>"


def func(fn: Callable) -> Func:
    """Makes `fn` a device function: `@pk.func`."""
    return Func(fn)
