"""`decompose`: math the target cannot lower becomes calls of prelude functions.

The target states what it lowers (`lowers_math(fn, dtype)`); every `ir.MathCall` it does not
(and every float `**`, which is `MathFn.POW`) is replaced by an `ir.Call` of the prelude
`@pk.func` for it (`pykern.mathlib.prelude_f64`, or `prelude_f32` for f32 arguments),
translated by the frontend for the argument types and added to the kernel's functions ahead of
their callers. Today that is f64 exp, log, sin, ..., pow and erf on Vulkan, whose GLSL.std.450
has them in 16 and 32 bits only, and f32 tanh on the host, whose C library function LLVM
cannot vectorise.

    kernel = decompose(kernel, target)   # then required_features, then the backend
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Protocol

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.mathlib.prelude import translate_prelude
from pykern.passes.rewrite import rename_calls, rewrite


class MathFacts(Protocol):
    """What a target states about math (`pykern.spirv.Target` is one)."""

    def lowers_math(self, fn: ir.MathFn, dtype: DType) -> bool: ...


PRELUDE_PREFIX = "pk_prelude_"  # no name the frontend gives a user's function starts so


def decompose(kernel: ir.Kernel, target: MathFacts) -> ir.Kernel:
    """`kernel` with every math call `target` cannot lower replaced by a prelude call (the
    kernel itself where there is none)."""
    state = _Decomposition(target)
    body = state.block(kernel.body)
    functions = tuple(replace(f, body=state.block(f.body)) for f in kernel.functions)
    if not state.prelude:
        return kernel
    # prelude functions call only each other: they go first, ahead of every caller
    return replace(kernel, body=body, functions=tuple(state.prelude) + functions)


class _Decomposition:
    """The rewriting of one kernel: the prelude functions it has added, by implementation and
    argument types, each to the name its calls use."""

    def __init__(self, target: MathFacts) -> None:
        self.target = target
        self.prelude: list[ir.Function] = []
        self.entries: dict[tuple[ir.MathFn, tuple[DType, ...]], str] = {}
        # each prelude function once, though several groups call it (exp is in pow's too):
        # by its body with the callees already renamed, to its name
        self.added: dict[ir.Function, str] = {}

    def block(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        return tuple(rewrite(s, self.node) for s in stmts)

    def node(self, node: ir.Node) -> ir.Node:
        fn = _lacking_math(node)
        if fn is None:
            return node
        assert isinstance(node, (ir.MathCall, ir.BinOp))
        args = node.args if isinstance(node, ir.MathCall) else (node.lhs, node.rhs)
        types = tuple(a.type for a in args)
        if self.target.lowers_math(fn, types[0]):
            return node
        return ir.Call(function=self.entry(fn, types), args=args, type=node.type, loc=node.loc)

    def entry(self, fn: ir.MathFn, types: tuple[DType, ...]) -> str:
        """The name of the prelude function for `fn` on `types`, added on first use."""
        key = (fn, types)
        if key not in self.entries:
            names: dict[str, str] = {}
            for function in _prelude_group(fn, types):  # callees first
                renamed = rename_calls(function, names)
                anonymous = replace(renamed, name="")
                if anonymous not in self.added:
                    self.added[anonymous] = f"{PRELUDE_PREFIX}{len(self.prelude)}_{function.name}"
                    self.prelude.append(replace(renamed, name=self.added[anonymous]))
                names[function.name] = self.added[anonymous]
            self.entries[key] = names[function.name]
        return self.entries[key]


def _lacking_math(node: ir.Node) -> ir.MathFn | None:
    """The math function `node` computes, for the nodes a target may lack: math calls and
    float `**` (same semantics as MathFn.POW)."""
    if isinstance(node, ir.MathCall):
        return node.fn
    if isinstance(node, ir.BinOp) and node.op is ir.BinOpKind.POW and node.type.is_float:
        return ir.MathFn.POW
    return None


@functools.lru_cache(maxsize=None)
def _prelude_group(fn: ir.MathFn, types: tuple[DType, ...]) -> tuple[ir.Function, ...]:
    """The prelude function for `fn` on `types` and the functions it calls, callees first
    (translated once per process)."""
    # their @pk.funcs need pykern loaded
    from pykern.mathlib import prelude_f32, prelude_f64

    table = prelude_f32 if types[0] == dt.f32 else prelude_f64
    implementation = table.IMPLEMENTATIONS.get(fn)
    assert implementation is not None, f"no prelude function for {fn.py_name} on {types}"
    return translate_prelude(implementation, types)
