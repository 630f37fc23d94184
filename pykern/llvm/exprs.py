"""IR expressions to LLVM values: one function per node class, dispatched by a table;
operators, conversions and math come from the tables of `arith` and `mathfns`; array
accesses go through `element_access`, which keeps them inside the array's buffer (`robust`)
or bounds-checks them in debug mode (`debug`)."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from pykern import ir
from pykern.llvm import arith, arrays, calls, debug, lanes, mathfns, robust
from pykern.llvm.emitter import Emitter
from pykern.llvm.types import I1, const, value_type


def expr(em: Emitter, e: ir.Expr) -> ll.Value:
    method = _DISPATCH.get(type(e))
    if method is None:
        raise AssertionError(f"no LLVM lowering for IR expression {type(e).__name__} at {e.loc}")
    return method(em, e)


def indices_of(em: Emitter, indices: tuple[ir.Expr, ...]) -> list[ll.Value]:
    return [expr(em, i) for i in indices]


def element_access(em: Emitter, node: ir.Node, array: str, indices: list[ll.Value],
                   access: Callable[[ll.Value], ll.Value | None]) -> ll.Value | None:
    """`access(pointer)` on the element `array[indices]` (evaluated already): only where the
    element lies inside the array's buffer (else nothing is touched and the value is 0),
    checked unless the workgroup's proof covers this access (`robust`); in debug mode only
    when every index is inside its dimension, else reported (the value is then 0)."""
    view = em.arrays[array]
    if em.debug is None:
        if em.site_key(node) in em.proven:
            return access(arrays.element_pointer(em, view, indices))
        return robust.guarded_access(em, view, indices, access)

    def run() -> ll.Value | None:
        return access(arrays.element_pointer(em, view, indices))

    return debug.checked_access(em, node, array, view, indices, run)


def _const(em: Emitter, e: ir.Const) -> ll.Value:
    return const(e.type, e.value)


def _local(em: Emitter, e: ir.LocalRef) -> ll.Value:
    return em.builder.load(em.locals[e.name], typ=value_type(e.type))


def _scalar_param(em: Emitter, e: ir.ScalarParam) -> ll.Value:
    return em.scalars[e.name]


def _array_load(em: Emitter, e: ir.ArrayLoad) -> ll.Value:
    view = em.arrays[e.array]
    return element_access(em, e, e.array, indices_of(em, e.indices),
                          lambda pointer: arrays.load(em, view, pointer))


def _array_dim(em: Emitter, e: ir.ArrayDim) -> ll.Value:
    return em.arrays[e.array].shape[e.axis]


def _binop(em: Emitter, e: ir.BinOp) -> ll.Value:
    return arith.binary(em, e.op, e.lhs.type, expr(em, e.lhs), expr(em, e.rhs), e.loc)


def _unaryop(em: Emitter, e: ir.UnaryOp) -> ll.Value:
    return arith.unary(em, e.op, e.operand.type, expr(em, e.operand), e.loc)


def _logical(em: Emitter, e: ir.Logical) -> ll.Value:
    """Short-circuit: `rhs` runs only when `lhs` does not decide."""
    lhs = expr(em, e.lhs)
    decided = ll.Constant(I1, int(e.op is ir.LogicalKind.OR))
    sides = (lambda: expr(em, e.rhs)), (lambda: decided)
    then, orelse = sides if e.op is ir.LogicalKind.AND else sides[::-1]
    return em.either(lhs, then, orelse, "logical")  # type: ignore[return-value]


def _ifexp(em: Emitter, e: ir.IfExp) -> ll.Value:
    """Only the chosen branch is evaluated."""
    return em.either(expr(em, e.cond), lambda: expr(em, e.then),  # type: ignore[return-value]
                     lambda: expr(em, e.orelse), "ifexp_then")


def _select(em: Emitter, e: ir.Select) -> ll.Value:
    cond, then, orelse = expr(em, e.cond), expr(em, e.then), expr(em, e.orelse)
    return em.builder.select(cond, then, orelse)


def _cast(em: Emitter, e: ir.Cast) -> ll.Value:
    return arith.cast(em, e.value.type, e.type, expr(em, e.value))


def _bitcast(em: Emitter, e: ir.Bitcast) -> ll.Value:
    return em.builder.bitcast(expr(em, e.value), value_type(e.type))


def _math(em: Emitter, e: ir.MathCall) -> ll.Value:
    return mathfns.math_call(em, e.fn, e.args[0].type, [expr(em, a) for a in e.args])


_BUILTINS: dict[ir.BuiltinKind, str] = {
    ir.BuiltinKind.GLOBAL_ID: "global_id", ir.BuiltinKind.LOCAL_ID: "local_id",
    ir.BuiltinKind.GROUP_ID: "group_id", ir.BuiltinKind.GRID: "grid",
    ir.BuiltinKind.NUM_GROUPS: "num_groups",
}


def _builtin(em: Emitter, e: ir.Builtin) -> ll.Value:
    if e.kind is ir.BuiltinKind.GROUP_SIZE:
        return em.i32(em.kernel.workgroup[e.dim])
    assert em.ids is not None
    return getattr(em.ids, _BUILTINS[e.kind])[e.dim]


def _atomic(em: Emitter, e: ir.Atomic) -> ll.Value:
    indices = indices_of(em, e.indices)
    comparator = expr(em, e.comparator) if e.comparator is not None else None
    value = expr(em, e.value)
    return element_access(em, e, e.array, indices,
                          lambda pointer: arrays.atomic(em, e, pointer, value, comparator))


def _subgroup(em: Emitter, e: ir.Subgroup) -> ll.Value:
    """The per-invocation values; exchanges are statements of their own by now, run between
    regions (`pykern.llvm.hoist`, `pykern.llvm.regions`)."""
    if e.op is ir.SubgroupOp.LANE:
        return lanes.lane(em)
    if e.op is ir.SubgroupOp.SIZE:
        return lanes.size(em)
    raise AssertionError(f"subgroup exchange {e.op.value} left in an expression at {e.loc}")


def _call(em: Emitter, e: ir.Call) -> ll.Value:
    return calls.inline_call(em, e, [expr(em, a) for a in e.args])


_DISPATCH: dict[type, Callable[[Emitter, ir.Expr], ll.Value]] = {
    ir.Const: _const,
    ir.LocalRef: _local,
    ir.ScalarParam: _scalar_param,
    ir.ArrayLoad: _array_load,
    ir.ArrayDim: _array_dim,
    ir.BinOp: _binop,
    ir.UnaryOp: _unaryop,
    ir.Logical: _logical,
    ir.IfExp: _ifexp,
    ir.Select: _select,
    ir.Cast: _cast,
    ir.Bitcast: _bitcast,
    ir.MathCall: _math,
    ir.Builtin: _builtin,
    ir.Atomic: _atomic,
    ir.Call: _call,
    ir.Subgroup: _subgroup,
}
"""Expressions the host backend lowers; any other (cooperative-matrix tiles) is refused before
lowering (`pykern.llvm.support`)."""
