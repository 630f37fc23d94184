"""`ir.Subgroup`: operations across the invocations of a subgroup (GroupNonUniform*)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pykern import ir
from pykern.ir import SubgroupOp as S

from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.grammar import BuiltIn, Capability, GroupOperation, Op, Scope
from pykern.spirv.encoding.types import BOOL, I32, U32, FloatType, IntType, ScalarType

SubgroupLowering = Callable[[LoweringContext, ScalarType, Sequence[int]], int]

# the arithmetic opcode per operation and kind of operand
_ARITHMETIC = {
    ("add", "i"): Op.GroupNonUniformIAdd, ("add", "u"): Op.GroupNonUniformIAdd,
    ("add", "f"): Op.GroupNonUniformFAdd,
    ("min", "i"): Op.GroupNonUniformSMin, ("min", "u"): Op.GroupNonUniformUMin,
    ("min", "f"): Op.GroupNonUniformFMin,
    ("max", "i"): Op.GroupNonUniformSMax, ("max", "u"): Op.GroupNonUniformUMax,
    ("max", "f"): Op.GroupNonUniformFMax,
}


def subgroup(ctx: LoweringContext, e: ir.Subgroup, args: Sequence[int]) -> int:
    """Emits subgroup operation `e` on argument ids `args`; returns the result id."""
    ctx.module.require(Capability.GroupNonUniform)
    operand = ctx.type_of(e.args[0].type) if e.args else ctx.type_of(e.type)
    return SUBGROUP[e.op](ctx, operand, args)  # type: ignore[arg-type]


def _scope(ctx: LoweringContext) -> int:
    return ctx.const(U32, Scope.Subgroup)


def _kind(ty: ScalarType) -> str:
    if isinstance(ty, FloatType):
        return "f"
    assert isinstance(ty, IntType), f"subgroup arithmetic on {ty}"
    return "i" if ty.signed else "u"


def _builtin(builtin: BuiltIn) -> SubgroupLowering:
    def lower(ctx: LoweringContext, ty: ScalarType, args: Sequence[int]) -> int:
        return ctx.fn.bitcast(I32, ctx.resources.load_builtin(ctx.fn, builtin))
    return lower


def _arithmetic(name: str, operation: GroupOperation) -> SubgroupLowering:
    def lower(ctx: LoweringContext, ty: ScalarType, args: Sequence[int]) -> int:
        ctx.module.require(Capability.GroupNonUniformArithmetic)
        return ctx.fn.group_non_uniform_arithmetic(_ARITHMETIC[name, _kind(ty)], ty,
                                                   _scope(ctx), operation, args[0])
    return lower


def _any(ctx: LoweringContext, ty: ScalarType, args: Sequence[int]) -> int:
    ctx.module.require(Capability.GroupNonUniformVote)
    return ctx.fn.group_non_uniform_any(BOOL, _scope(ctx), args[0])


def _all(ctx: LoweringContext, ty: ScalarType, args: Sequence[int]) -> int:
    ctx.module.require(Capability.GroupNonUniformVote)
    return ctx.fn.group_non_uniform_all(BOOL, _scope(ctx), args[0])


def _lane(ctx: LoweringContext, lane: int) -> int:
    # lanes are u32 in SPIR-V; ours are i32
    return ctx.fn.bitcast(U32, lane)


def _broadcast(ctx: LoweringContext, ty: ScalarType, args: Sequence[int]) -> int:
    ctx.module.require(Capability.GroupNonUniformBallot)
    return ctx.fn.group_non_uniform_broadcast(ty, _scope(ctx), args[0], _lane(ctx, args[1]))


def _shuffle(ctx: LoweringContext, ty: ScalarType, args: Sequence[int]) -> int:
    ctx.module.require(Capability.GroupNonUniformShuffle)
    return ctx.fn.group_non_uniform_shuffle(ty, _scope(ctx), args[0], _lane(ctx, args[1]))


def _shuffle_xor(ctx: LoweringContext, ty: ScalarType, args: Sequence[int]) -> int:
    ctx.module.require(Capability.GroupNonUniformShuffle)
    return ctx.fn.group_non_uniform_shuffle_xor(ty, _scope(ctx), args[0], _lane(ctx, args[1]))


SUBGROUP: dict[S, SubgroupLowering] = {
    S.SIZE: _builtin(BuiltIn.SubgroupSize),
    S.LANE: _builtin(BuiltIn.SubgroupLocalInvocationId),
    S.ADD: _arithmetic("add", GroupOperation.Reduce),
    S.MIN: _arithmetic("min", GroupOperation.Reduce),
    S.MAX: _arithmetic("max", GroupOperation.Reduce),
    S.PREFIX_ADD: _arithmetic("add", GroupOperation.ExclusiveScan),
    S.ANY: _any,
    S.ALL: _all,
    S.BROADCAST: _broadcast,
    S.SHUFFLE: _shuffle,
    S.SHUFFLE_XOR: _shuffle_xor,
}
