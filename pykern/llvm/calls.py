"""Device functions (`@pk.func`), inlined at each call site as they are emitted.

The IR forbids recursion, so inlining terminates; a function refers to its caller's arrays
by name, which inlining gives it for free (the emitter's arrays stay in scope), and every
local of an inlined call gets a stack slot of its own in the entry block."""

from __future__ import annotations

from llvmlite import ir as ll

from pykern import ir
from pykern.llvm import stmts
from pykern.llvm.emitter import Emitter, ReturnTarget
from pykern.llvm.types import value_type


def function_named(kernel: ir.Kernel, name: str) -> ir.Function:
    for f in kernel.functions:
        if f.name == name:
            return f
    raise AssertionError(f"call of unknown function {name}")


def inline_call(em: Emitter, e: ir.Call, args: list[ll.Value]) -> ll.Value:
    """The body of the called function run here; its result (a dummy for void ones)."""
    fn = function_named(em.kernel, e.function)
    saved = em.locals, em.loops
    em.locals = {}
    for local in (*fn.params, *fn.locals):
        if local.name not in em.locals:
            em.locals[local.name] = em.local_slot(local.type, f"{fn.name}.{local.name}")
    for param, value in zip(fn.params, args, strict=True):
        em.builder.store(value, em.locals[param.name])
    slot = em.local_slot(fn.return_type, f"{fn.name}.result") \
        if fn.return_type is not None else None
    exit_block = em.block(f"{fn.name}.exit")
    em.returns.append(ReturnTarget(exit_block, slot))
    em.loops = []
    saved_path, em.call_path = em.call_path, em.call_path + (id(e),)  # names its accesses
    try:
        stmts.block(em, fn.body)
        em.branch_if_open(exit_block)
    finally:
        em.returns.pop()
        em.locals, em.loops = saved
        em.call_path = saved_path
    em.builder.position_at_end(exit_block)
    if slot is None:
        return ll.Constant(ll.IntType(1), 0)  # only ever discarded (ir.Eval)
    return em.builder.load(slot, typ=value_type(fn.return_type))  # type: ignore[arg-type]
