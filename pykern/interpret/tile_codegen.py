"""Cooperative-matrix tiles to Python text: the tile nodes, the tile forms of `BinOp`,
`UnaryOp` and `Cast`, and the `CoopStore` statement. The values they compute and the checks
they make are the functions of `tiles` (`_tile_*` in the generated source).

A subgroup loads and stores a tile together, so its invocations meet before each tile load
and store, as at an exchanging subgroup operation that exchanges nothing (`yield (site,)`, see
`runner`): none of them stores a tile before all have loaded what they load before it, and
none loads before all have stored what they store before it. Without that, `c = coop_load(C);
coop_store(C, coop_mma(a, b, c))` run invocation after invocation would add `a @ b` once per
invocation.

Every text returned is an atom, as in `exprs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pykern import ir
from pykern.interpret import names
from pykern.interpret.names import CodegenState, SubgroupSite
from pykern.lang.coop import CoopType
from pykern.lang.dtypes import DType

if TYPE_CHECKING:  # exprs dispatches here; this module needs only its type
    from pykern.interpret.exprs import ExprCodegen

# elementwise operators of two tiles of one type, as numpy computes them on arrays
_BINARY_TEXT = {ir.BinOpKind.ADD: "+", ir.BinOpKind.SUB: "-", ir.BinOpKind.MUL: "*"}


def dtype_constant(state: CodegenState, dtype: DType) -> str:
    """The name of a module-level constant holding `dtype`'s numpy dtype."""
    name = f"_dt_{dtype.name}"
    return state.define(("tile dtype", dtype.name), name,
                        f"{name} = _tile_dtype({dtype.name!r})")


def zero(state: CodegenState, t: CoopType) -> str:
    """A tile local's value before its first assignment: zeros."""
    return f"_tile_zeros({int(t.rows)}, {int(t.cols)}, {dtype_constant(state, t.dtype)})"


def fill(gen: ExprCodegen, e: ir.CoopFill) -> str:
    t: CoopType = e.type  # type: ignore[assignment]
    return (f"_tile_fill({int(t.rows)}, {int(t.cols)}, {gen.expr(e.value)}, "
            f"{dtype_constant(gen.state, t.dtype)})")


def load(gen: ExprCodegen, e: ir.CoopLoad) -> str:
    """The subgroup meets (the yield's value is None), then each invocation loads."""
    t: CoopType = e.type  # type: ignore[assignment]
    meet = meeting(gen.state, t, e.loc)
    wide = array_dtype(gen.kernel, e.array)
    pack = wide.itemsize // t.dtype.itemsize  # tile elements per array element (1 but with dtype=)
    words = CoopType(t.dtype, t.rows // pack, t.cols, t.use) if e.transpose else \
        CoopType(t.dtype, t.rows, t.cols // pack, t.use)  # the array elements the tile spans
    addresses = tile_addresses(gen, e.array, e.indices, words, e.transpose, e.loc)
    return (f"({meet} or _tile_load({gen.geometry[e.array].buffer}, {addresses}, "
            f"{dtype_constant(gen.state, wide)}, {dtype_constant(gen.state, t.dtype)}, "
            f"{pack}, {bool(e.transpose)}))")


def store(gen: ExprCodegen, s: ir.CoopStore) -> list[str]:
    """The statement lines of a `CoopStore`: the subgroup meets, then each invocation stores.
    The addresses are computed and checked before the tile is evaluated, as a `Store`
    evaluates its indices before its value."""
    t: CoopType = s.value.type  # type: ignore[assignment]
    meet = meeting(gen.state, t, s.loc)
    addresses = tile_addresses(gen, s.array, s.indices, t, s.transpose, s.loc)
    dtype = dtype_constant(gen.state, array_dtype(gen.kernel, s.array))
    return [meet + "  # the subgroup stores together",
            f"_tile_store({gen.geometry[s.array].buffer}, {addresses}, {gen.expr(s.value)}, "
            f"{dtype})"]


def meeting(state: CodegenState, t: CoopType, loc: ir.Loc) -> str:
    """Where the invocations of a subgroup wait for each other before a tile access."""
    state.subgroups.append(SubgroupSite(None, t, loc))
    return f"(yield ({len(state.subgroups) - 1}, {state.progress()}))"


def tile_addresses(gen: ExprCodegen, array: str, indices: tuple[ir.Expr, ...], t: CoopType,
                   transpose: bool, loc: ir.Loc) -> str:
    """The call that computes (and checks) the address of every element of the tile."""
    g = gen.geometry[array]
    site = gen.state.site(array, loc)
    index = ", ".join(gen.expr(i) for i in indices)
    item = array_dtype(gen.kernel, array).itemsize
    return (f"_tile_addresses({g.offset or '0'}, {g.length}, ({', '.join(g.strides)},), "
            f"({', '.join(g.shape)},), ({index},), ({int(t.rows)}, {int(t.cols)}), "
            f"{bool(transpose)}, {item}, {bool(gen.kernel.debug)}, {names.OUT_OF_BOUNDS}, "
            f"{site}, {names.INVOCATION})")


def array_dtype(kernel: ir.Kernel, array: str) -> DType:
    """The element dtype of a parameter or declared array."""
    for d in kernel.arrays:
        if d.name == array:
            return d.dtype
    return kernel.param(array).type.dtype  # type: ignore[union-attr]


def mma(gen: ExprCodegen, e: ir.CoopMma) -> str:
    return f"_tile_mma({gen.expr(e.a)}, {gen.expr(e.b)}, {gen.expr(e.c)})"


def scale(gen: ExprCodegen, e: ir.CoopScale) -> str:
    return f"_tile_scale({gen.expr(e.matrix)}, {gen.expr(e.scalar)})"


def binop(gen: ExprCodegen, e: ir.BinOp) -> str:
    t: CoopType = e.type  # type: ignore[assignment]
    text = _BINARY_TEXT.get(e.op)
    if e.op is ir.BinOpKind.DIV and t.dtype.is_float:
        text = "/"
    if text is None:
        raise AssertionError(f"no interpretation of {e.op.name} on {t.name} at {e.loc}")
    return f"({gen.expr(e.lhs)} {text} {gen.expr(e.rhs)})"


def unaryop(gen: ExprCodegen, e: ir.UnaryOp) -> str:
    if e.op is not ir.UnaryOpKind.NEG:
        raise AssertionError(f"no interpretation of {e.op.name} on {e.type.name} at {e.loc}")
    return f"(-{gen.expr(e.operand)})"  # integers wrap, as numpy's arrays do


def cast(gen: ExprCodegen, e: ir.Cast) -> str:
    src: CoopType = e.value.type  # type: ignore[assignment]
    dst: CoopType = e.type  # type: ignore[assignment]
    value = gen.expr(e.value)
    if src == dst:
        return value
    return f"_tile_convert({value}, {dtype_constant(gen.state, dst.dtype)})"
