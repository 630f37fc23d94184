"""`pk.global_id(d)` and friends (ir.Builtin), all of type i32.

The logical launch is `grid` invocations; the runtime may split it into several dispatches, each
starting at invocation `base` (a multiple of the workgroup size), so ids add `base`.
"""

from __future__ import annotations

from collections.abc import Callable

from pykern.ir import BuiltinKind

from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.grammar import BuiltIn
from pykern.spirv.binding_plan import BASE_FIELDS, GRID_FIELDS
from pykern.spirv.encoding.types import BOOL, I32, U32

BuiltinLowering = Callable[[LoweringContext, int], int]


def builtin(ctx: LoweringContext, kind: BuiltinKind, dim: int) -> int:
    """The i32 value of builtin `kind` along dimension `dim`."""
    return BUILTINS[kind](ctx, dim)


def _field(ctx: LoweringContext, name: str) -> int:
    return ctx.resources.load_field(ctx.fn, name)


def _input(ctx: LoweringContext, builtin: BuiltIn, dim: int) -> int:
    return ctx.resources.load_builtin(ctx.fn, builtin, dim)


def _global_id(ctx: LoweringContext, dim: int) -> int:
    fn = ctx.fn
    local = _input(ctx, BuiltIn.GlobalInvocationId, dim)
    return fn.bitcast(I32, fn.i_add(U32, local, _field(ctx, BASE_FIELDS[dim])))


def _local_id(ctx: LoweringContext, dim: int) -> int:
    return ctx.fn.bitcast(I32, _input(ctx, BuiltIn.LocalInvocationId, dim))


def _group_id(ctx: LoweringContext, dim: int) -> int:
    fn = ctx.fn
    size = ctx.const(U32, ctx.kernel.workgroup[dim])
    first_group = fn.u_div(U32, _field(ctx, BASE_FIELDS[dim]), size)
    return fn.bitcast(I32, fn.i_add(U32, _input(ctx, BuiltIn.WorkgroupId, dim), first_group))


def _group_size(ctx: LoweringContext, dim: int) -> int:
    return ctx.const(I32, ctx.kernel.workgroup[dim])


def _num_groups(ctx: LoweringContext, dim: int) -> int:
    # ceil(grid / size) without overflowing near 2**32: grid / size + (grid % size != 0)
    fn = ctx.fn
    size = ctx.const(U32, ctx.kernel.workgroup[dim])
    grid = _field(ctx, GRID_FIELDS[dim])
    whole = fn.u_div(U32, grid, size)
    rest = fn.u_mod(U32, grid, size)
    extra = fn.select(U32, fn.i_not_equal(BOOL, rest, ctx.const(U32, 0)), ctx.const(U32, 1),
                      ctx.const(U32, 0))
    return fn.bitcast(I32, fn.i_add(U32, whole, extra))


def _spread_base(ctx: LoweringContext, dim: int) -> int:
    # the invocation's id in its dispatch, plus the dispatch's base, which the runtime counts in
    # logical invocations (each workgroup covers its `span`, `ir.Kernel.items` per invocation)
    fn = ctx.fn
    local = _input(ctx, BuiltIn.GlobalInvocationId, dim)
    return fn.bitcast(I32, fn.i_add(U32, local, _field(ctx, BASE_FIELDS[dim])))


def _spread_stride(ctx: LoweringContext, dim: int) -> int:
    # the invocations of the dispatch: its logical invocations are `items` times as many, the
    # copies of one invocation that far apart
    fn = ctx.fn
    groups = _input(ctx, BuiltIn.NumWorkgroups, dim)
    return fn.bitcast(I32, fn.i_mul(U32, groups, ctx.const(U32, ctx.kernel.workgroup[dim])))


def _grid(ctx: LoweringContext, dim: int) -> int:
    return ctx.fn.bitcast(I32, _field(ctx, GRID_FIELDS[dim]))


BUILTINS: dict[BuiltinKind, BuiltinLowering] = {
    BuiltinKind.GLOBAL_ID: _global_id,
    BuiltinKind.LOCAL_ID: _local_id,
    BuiltinKind.GROUP_ID: _group_id,
    BuiltinKind.GROUP_SIZE: _group_size,
    BuiltinKind.NUM_GROUPS: _num_groups,
    BuiltinKind.GRID: _grid,
    BuiltinKind.SPREAD_BASE: _spread_base,
    BuiltinKind.SPREAD_STRIDE: _spread_stride,
}
