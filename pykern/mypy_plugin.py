"""A mypy plugin that lets kernel signatures through: `x: pk.f32[:]`, `m: pk.f32[:, :]`.

mypy refuses a slice inside any annotation before a class can have a say ("did you mean to use
',' instead of ':'?"); pyright takes `pk.f32[:]` as it is. Enable the plugin in the project's
mypy configuration:

    [tool.mypy]
    plugins = ["pykern.mypy_plugin"]

It makes `pk.f32[...]` (any dtype, any number of `:`) a `KernelArray`, what an array parameter is
to a checker (checker_types.pyi); the frontend checks the real annotation when it compiles.
Python never imports this module except through mypy, which must then be installed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from mypy.plugin import AnalyzeTypeContext, Plugin
from mypy.types import Type

CHECKER_TYPES = "pykern.lang.checker_types"
DTYPE_CLASSES = frozenset(f"{CHECKER_TYPES}.{name}" for name in (
    "bool_", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64",
    "bf16"))


class PykernPlugin(Plugin):
    """Analyses annotations that name a pykern dtype."""

    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        if fullname in DTYPE_CLASSES:
            return functools.partial(_dtype_annotation, fullname)
        return None


def _dtype_annotation(fullname: str, ctx: AnalyzeTypeContext) -> Type:
    """`pk.f32` is the scalar class itself; `pk.f32[...]` an array parameter. The subscript is
    not analysed: it holds slices, which are no types."""
    if ctx.type.args:
        return ctx.api.named_type(f"{CHECKER_TYPES}.KernelArray", [])
    return ctx.api.named_type(fullname, [])


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point."""
    return PykernPlugin
