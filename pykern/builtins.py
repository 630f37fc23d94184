"""The names a kernel body calls: `pk.global_id(0)`, `pk.sqrt(x)`, ...

These are real Python objects so that the frontend can resolve `pk.sqrt`, `from pykern import
sqrt` or any alias to the same thing by identity. Called from ordinary Python (outside a kernel)
they raise, except the math functions, which compute on Python/numpy numbers so a `@pk.func`-
style helper can be tried on the host.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


class KernelBuiltin:
    """A name that only means something inside a kernel body."""

    def __init__(self, name: str, doc: str, host: Callable | None = None):
        self.__name__ = self.name = name
        self.__doc__ = doc
        self._host = host

    def __call__(self, *args: object) -> object:
        if self._host is None:
            raise RuntimeError(f"pk.{self.name}() can only be used inside a @pk.kernel")
        return self._host(*args)

    def __repr__(self) -> str:
        return f"<pykern builtin {self.name}>"


def _id_builtin(name: str, what: str) -> KernelBuiltin:
    return KernelBuiltin(name, f"pk.{name}(dim): {what} along dimension dim (0, 1 or 2), an i32.")


global_id = _id_builtin("global_id", "this invocation's index in the launch grid")
local_id = _id_builtin("local_id", "this invocation's index inside its workgroup")
group_id = _id_builtin("group_id", "the index of this invocation's workgroup")
group_size = _id_builtin("group_size", "the workgroup size")
num_groups = _id_builtin("num_groups", "the number of workgroups of the launch")
grid = _id_builtin("grid", "the launch's logical size (the grid of kernel[grid])")


def _math(name: str, fn: Callable, doc: str) -> KernelBuiltin:
    return KernelBuiltin(name, f"pk.{name}: {doc}", fn)


sqrt = _math("sqrt", np.sqrt, "square root")
exp = _math("exp", np.exp, "e raised to x")
log = _math("log", np.log, "natural logarithm")
sin = _math("sin", np.sin, "sine (radians)")
cos = _math("cos", np.cos, "cosine (radians)")
tanh = _math("tanh", np.tanh, "hyperbolic tangent")
floor = _math("floor", np.floor, "largest integral value <= x, in x's float type")
ceil = _math("ceil", np.ceil, "smallest integral value >= x, in x's float type")
pow = _math("pow", math.pow, "x raised to y (Python semantics for negative x)")  # noqa: A001

ID_BUILTINS = (global_id, local_id, group_id, group_size, num_groups, grid)
MATH_BUILTINS = (sqrt, exp, log, sin, cos, tanh, floor, ceil, pow)
