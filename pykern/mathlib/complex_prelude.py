"""The prelude functions a complex kernel calls (`pykern.mathlib.complex_functions`): each
translated once per process and part type, and added to a kernel under names of its own.

A function that returns a complex value returns its two parts as a tuple, which the frontend
carries back through one-element `pk.local` arrays (its return slots); the kernel gets those
arrays too, renamed with the functions so that no name of the user's kernel is taken.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.passes.rewrite import rewrite

PREFIX = "pk_prelude_c"  # as decompose's prelude names, which never start so


@dataclass(frozen=True)
class _Group:
    """A prelude function translated for one part type: it and its callees (callees first),
    the return-slot arrays they use, and the slots of the function itself (none for a
    function with a real result)."""

    functions: tuple[ir.Function, ...]
    arrays: tuple[ir.ArrayDecl, ...]
    slots: tuple[str, ...]


class ComplexPrelude:
    """The prelude functions one kernel calls, added on first use."""

    def __init__(self) -> None:
        self.functions: list[ir.Function] = []
        self.arrays: list[ir.ArrayDecl] = []
        self.entries: dict[tuple[str, DType], tuple[str, tuple[str, ...], DType]] = {}

    def added(self) -> tuple[tuple[ir.Function, ...], tuple[ir.ArrayDecl, ...]]:
        return tuple(self.functions), tuple(self.arrays)

    def entry(self, name: str, part: DType) -> tuple[str, tuple[str, ...], DType]:
        """The kernel's name of prelude function `name` for `part`, its slots, its result."""
        key = (name, part)
        if key not in self.entries:
            group = _translated(name, part)
            k = len(self.entries)
            names = {f.name: f"{PREFIX}{k}_{f.name}" for f in group.functions}
            arrays = {a.name: f"_pk_cslot{k}_{a.name}" for a in group.arrays}
            for f in group.functions:
                self.functions.append(_renamed(f, names, arrays))
            self.arrays += [replace(a, name=arrays[a.name]) for a in group.arrays]
            last = group.functions[-1]
            self.entries[key] = (names[last.name], tuple(arrays[s] for s in group.slots),
                                 last.return_type or dt.void)
        return self.entries[key]

    def call_real(self, name: str, args: tuple[ir.Expr, ...], loc: ir.Loc) -> ir.Expr:
        """The call of a prelude function with a real result."""
        function, _, rtype = self.entry(name, args[0].type)
        return ir.Call(function=function, args=args, type=rtype, loc=loc)

    def call_pair(self, name: str, args: tuple[ir.Expr, ...], loc: ir.Loc,
                  fresh: Callable[[DType, ir.Loc], str], pending: list[ir.Stmt]
                  ) -> tuple[ir.Expr, ir.Expr]:
        """The call of a prelude function with a complex result, put in `pending`, and its
        parts read from its slots into fresh locals (before any other call reuses them)."""
        part = args[0].type
        function, slots, _ = self.entry(name, part)
        pending.append(ir.Eval(value=ir.Call(function=function, args=args, type=dt.void,
                                             loc=loc), loc=loc))
        zero = ir.Const(value=0, type=dt.i32, loc=loc)
        parts = []
        for slot in slots:
            local = fresh(part, loc)
            pending.append(ir.Assign(name=local, value=ir.ArrayLoad(
                array=slot, indices=(zero,), type=part, loc=loc), loc=loc))
            parts.append(ir.LocalRef(name=local, type=part, loc=loc))
        return parts[0], parts[1]


@functools.lru_cache(maxsize=None)
def _translated(name: str, part: DType) -> _Group:
    """Prelude function `name` translated for parts of type `part` (once per process)."""
    from pykern.frontend.translator import KernelContext, Translator  # needs pykern loaded
    from pykern.mathlib.complex_functions import IMPLEMENTATIONS  # (as above)

    func, arity = IMPLEMENTATIONS[name]
    src = func.source
    params = [a.arg for a in src.tree.args.args]
    assert len(params) == 2 * arity, f"{name} takes {len(params)} parts"
    ctx = KernelContext(debug=False)
    translator = Translator(src, ctx, {}, {}, {})
    scalars = [(p, ir.Const(value=0.0, type=part, loc=src.loc(src.tree))) for p in params]
    function = translator.translate_function(func, src, scalars, {}, {}, src.tree, {})
    slots = tuple(s for s, _ in ctx.tuple_returns.get(function.name, ()))
    return _Group(tuple(ctx.functions), tuple(ctx.decls.values()), slots)


def _renamed(function: ir.Function, names: dict[str, str], arrays: dict[str, str]
             ) -> ir.Function:
    """`function` named and calling by `names`, using the arrays `arrays` renames."""

    def visit(node: ir.Node) -> ir.Node:
        if isinstance(node, ir.Call) and node.function in names:
            return replace(node, function=names[node.function])
        if isinstance(node, (ir.ArrayLoad, ir.Store)) and node.array in arrays:
            return replace(node, array=arrays[node.array])
        return node

    body = tuple(rewrite(s, visit) for s in function.body)
    return replace(function, name=names[function.name], body=body)
