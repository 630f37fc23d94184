"""Translating prelude functions: a `@pk.func` of pykern's own, typed for given argument types
outside any user kernel (the decomposition pass adds the result to the kernel it rewrites)."""

from __future__ import annotations

from pykern import ir
from pykern.lang.dtypes import DType
from pykern.frontend.translator import KernelContext, Translator


def translate_prelude(func: object, types: tuple[DType, ...]) -> tuple[ir.Function, ...]:
    """`func` (a `@pk.func` of scalar parameters) specialised for arguments of `types`, after
    the functions it calls: the last function is `func`'s, callees come first."""
    src = func.source  # type: ignore[attr-defined]
    arguments = src.tree.args
    names = [a.arg for a in arguments.posonlyargs + arguments.args]
    assert len(names) == len(types), f"{src.fn.__name__} takes {len(names)} arguments"
    ctx = KernelContext(debug=False)
    translator = Translator(src, ctx, {}, {}, {})
    # only the types of the arguments matter to the translation
    scalars = [(name, ir.Const(value=0.0, type=t, loc=src.loc(src.tree)))
               for name, t in zip(names, types)]
    translator.translate_function(func, src, scalars, {}, {}, src.tree, {})  # type: ignore[arg-type]
    return tuple(ctx.functions)
