"""`ir.Atomic`: read-modify-write of one array element, returning the old value.

Integers use the atomic instructions directly. Float add is native where the target has the
feature (OpAtomicFAddEXT); every other float atomic works on the element's bits (the array is
then stored as unsigned ints, see `arrays.FloatAsBits`): exchange and compare-and-swap directly,
add/sub/min/max through a compare-and-swap loop. All are relaxed: pykern promises atomicity,
not ordering (a barrier orders).
"""

from __future__ import annotations

from collections.abc import Callable

from pykern import ir
from pykern.ir import AtomicOp as A

from pykern.spirv import loopcap
from pykern.spirv.arrays import ArrayAccess, FloatAsBits
from pykern.spirv.context import LoweringContext
from pykern.spirv.control import Loop, selection, while_loop
from pykern.spirv.function import FunctionBuilder as FB
from pykern.spirv.encoding.grammar import GLSL, Capability, MemorySemantics
from pykern.spirv.encoding.types import BOOL, U32, FloatType, IntType, ScalarType

AtomicRMW = Callable[[FB, ScalarType, int, int, int, int], int]

_INT_OPS: dict[tuple[A, bool], AtomicRMW] = {
    **{(A.ADD, s): FB.atomic_i_add for s in (True, False)},
    **{(A.SUB, s): FB.atomic_i_sub for s in (True, False)},
    (A.MIN, True): FB.atomic_s_min, (A.MIN, False): FB.atomic_u_min,
    (A.MAX, True): FB.atomic_s_max, (A.MAX, False): FB.atomic_u_max,
    **{(A.AND, s): FB.atomic_and for s in (True, False)},
    **{(A.OR, s): FB.atomic_or for s in (True, False)},
    **{(A.XOR, s): FB.atomic_xor for s in (True, False)},
    **{(A.EXCHANGE, s): FB.atomic_exchange for s in (True, False)},
}

# how a compare-and-swap loop combines the old value with the operand
_FLOAT_COMBINE: dict[A, Callable[[LoweringContext, FloatType, int, int], int]] = {
    A.ADD: lambda ctx, ty, old, v: ctx.fn.f_add(ty, old, v),
    A.SUB: lambda ctx, ty, old, v: ctx.fn.f_sub(ty, old, v),
    A.MIN: lambda ctx, ty, old, v: ctx.fn.glsl(ty, GLSL.NMin, old, v),
    A.MAX: lambda ctx, ty, old, v: ctx.fn.glsl(ty, GLSL.NMax, old, v),
}

_NATIVE_FLOAT_ADD = {32: Capability.AtomicFloat32AddEXT, 64: Capability.AtomicFloat64AddEXT}
FLOAT_ADD_EXTENSION = "SPV_EXT_shader_atomic_float_add"


def atomic(ctx: LoweringContext, e: ir.Atomic, indices: tuple[int, ...], value: int,
           comparator: int | None) -> int:
    """Emits atomic `e` on `array[indices]` with operand ids already evaluated."""
    array = ctx.arrays[e.array]
    ty = ctx.type_of(e.type)
    pointer = array.pointer(ctx.fn, indices)
    scope = ctx.const(U32, array.scope)
    if isinstance(ty, IntType):
        return _int_atomic(ctx, e.op, ty, pointer, scope, value, comparator)
    if isinstance(ty, FloatType) and isinstance(array.encoding, FloatAsBits):
        return _float_on_bits(ctx, e.op, array, ty, pointer, scope, value, comparator)
    if isinstance(ty, FloatType) and e.op == A.ADD:
        ctx.module.require(_NATIVE_FLOAT_ADD[ty.bits])
        ctx.module.extension(FLOAT_ADD_EXTENSION)
        return ctx.fn.atomic_f_add(ty, pointer, scope, _relaxed(ctx), value)
    raise NotImplementedError(f"atomic {e.op.value} on {e.type.name}")


def _relaxed(ctx: LoweringContext) -> int:
    return ctx.const(U32, MemorySemantics.None_)


def _int_atomic(ctx: LoweringContext, op: A, ty: IntType, pointer: int, scope: int, value: int,
                comparator: int | None) -> int:
    if ty.bits not in (32, 64):
        raise NotImplementedError(f"atomics on {ty.bits}-bit integers (Vulkan has none)")
    if ty.bits == 64:
        ctx.module.require(Capability.Int64Atomics)
    relaxed = _relaxed(ctx)
    if op == A.CAS:
        assert comparator is not None
        return ctx.fn.atomic_compare_exchange(ty, pointer, scope, relaxed, relaxed, value,
                                              comparator)
    return _INT_OPS[op, ty.signed](ctx.fn, ty, pointer, scope, relaxed, value)


def _float_on_bits(ctx: LoweringContext, op: A, array: ArrayAccess, ty: FloatType, pointer: int,
                   scope: int, value: int, comparator: int | None) -> int:
    fn, module = ctx.fn, ctx.module
    encoding = array.encoding
    bits = encoding.stored
    assert isinstance(bits, IntType)
    relaxed = _relaxed(ctx)
    if op == A.EXCHANGE:
        old = fn.atomic_exchange(bits, pointer, scope, relaxed, encoding.encode(fn, module, value))
        return encoding.decode(fn, module, old)
    if op == A.CAS:
        # compares bit patterns: -0.0 does not match 0.0, a NaN matches the same NaN
        assert comparator is not None
        old = fn.atomic_compare_exchange(bits, pointer, scope, relaxed, relaxed,
                                         encoding.encode(fn, module, value),
                                         encoding.encode(fn, module, comparator))
        return encoding.decode(fn, module, old)
    combine = _FLOAT_COMBINE.get(op)
    if combine is None:
        raise NotImplementedError(f"atomic {op.value} on floats")
    return _cas_loop(ctx, ty, bits, pointer, scope, value, combine)


def _cas_loop(ctx: LoweringContext, ty: FloatType, bits: IntType, pointer: int, scope: int,
              value: int, combine: Callable[[LoweringContext, FloatType, int, int], int]) -> int:
    """old = *p; until compare_exchange(p, old, combine(old, value)) saw old: old = what it saw."""
    fn = ctx.fn
    relaxed = _relaxed(ctx)
    expected = fn.variable(bits, "cas.expected")
    fn.store(expected, fn.atomic_load(bits, pointer, scope, relaxed))

    def attempt(loop: Loop) -> None:
        old = fn.load(bits, expected)
        new = fn.bitcast(bits, combine(ctx, ty, fn.bitcast(ty, old), value))
        seen = fn.atomic_compare_exchange(bits, pointer, scope, relaxed, relaxed, new, old)
        fn.store(expected, seen)
        selection(fn, fn.i_equal(BOOL, seen, old), loop.break_, None)

    while_loop(ctx, lambda: ctx.const(BOOL, True), attempt, loopcap.CAS)
    return fn.bitcast(ty, fn.load(bits, expected))
