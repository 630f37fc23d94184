"""Math functions: LLVM intrinsics where LLVM has one, the C library's function otherwise
(tanf, atan2, erff, ...: resolved in the process by the JIT). f16 is computed in f32 and
rounded back, as numpy computes float16 math."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from pykern.ir import MathFn as M
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.llvm.arith import cast
from pykern.llvm.emitter import Emitter
from pykern.llvm.types import F32, F64, float_suffix, value_type

MathEmit = Callable[[Emitter, DType, list[ll.Value]], ll.Value]


def _intrinsic(name: str) -> MathEmit:
    return lambda em, t, args: em.call(f"llvm.{name}.{float_suffix(t)}", value_type(t), *args)


def _libm(name: str) -> MathEmit:
    """The C function `name` (double) or `name` + "f" (float)."""
    def emit(em: Emitter, t: DType, args: list[ll.Value]) -> ll.Value:
        return em.call(name if t.bits == 64 else name + "f", value_type(t), *args)
    return emit


def _rsqrt(em: Emitter, t: DType, args: list[ll.Value]) -> ll.Value:
    root = em.call(f"llvm.sqrt.{float_suffix(t)}", value_type(t), args[0])
    return em.builder.fdiv(ll.Constant(value_type(t), 1.0), root)


def _isnan(em: Emitter, t: DType, args: list[ll.Value]) -> ll.Value:
    return em.builder.fcmp_unordered("uno", args[0], args[0])


def _isinf(em: Emitter, t: DType, args: list[ll.Value]) -> ll.Value:
    magnitude = em.call(f"llvm.fabs.{float_suffix(t)}", value_type(t), args[0])
    return em.builder.fcmp_ordered("==", magnitude, ll.Constant(value_type(t), float("inf")))


MATH: dict[M, MathEmit] = {
    M.SQRT: _intrinsic("sqrt"), M.EXP: _intrinsic("exp"), M.LOG: _intrinsic("log"),
    M.SIN: _intrinsic("sin"), M.COS: _intrinsic("cos"), M.EXP2: _intrinsic("exp2"),
    M.LOG2: _intrinsic("log2"), M.FLOOR: _intrinsic("floor"), M.CEIL: _intrinsic("ceil"),
    M.TRUNC: _intrinsic("trunc"), M.POW: _intrinsic("pow"), M.FMA: _intrinsic("fma"),
    M.ROUND: _intrinsic("roundeven"),  # halves to even, as Python's round()
    M.COPYSIGN: _intrinsic("copysign"),
    M.TAN: _libm("tan"), M.ASIN: _libm("asin"), M.ACOS: _libm("acos"), M.ATAN: _libm("atan"),
    M.ATAN2: _libm("atan2"), M.SINH: _libm("sinh"), M.COSH: _libm("cosh"),
    M.TANH: _libm("tanh"), M.ERF: _libm("erf"),
    M.RSQRT: _rsqrt, M.ISNAN: _isnan, M.ISINF: _isinf,
}

# exact in any width: no need to widen f16 (and floor & co. of an f16 is an f16)
_EXACT_IN_F16 = {M.FLOOR, M.CEIL, M.TRUNC, M.ROUND, M.COPYSIGN, M.ISNAN, M.ISINF}


def math_call(em: Emitter, fn: M, t: DType, args: list[ll.Value]) -> ll.Value:
    """`fn` of `args` (all of float type `t`)."""
    emit = MATH[fn]
    if t.bits != 16 or fn in _EXACT_IN_F16:
        return emit(em, t, args)
    if fn is M.FMA:
        # in f64, where the product of two f16 is exact and the sum rounds so that the one
        # correctly rounded conversion to f16 that follows gives the fused result (f32 would
        # round twice: -976 * 9.25 - 2e-7 must not tie to even at -9028)
        wide = emit(em, dt.f64, [em.builder.fpext(a, F64) for a in args])
        return cast(em, dt.f64, t, wide)
    wide = emit(em, dt.f32, [em.builder.fpext(a, F32) for a in args])
    return wide if fn.is_predicate else em.builder.fptrunc(wide, value_type(t))


# f64 sin, cos and tan come from the decomposition pass's prelude, as on Vulkan: its argument
# reduction keeps every bit at the hardest arguments, where the C library's is 8 ULP off on
# glibc (and the host then gives the Vulkan devices' bits)
_F64_FROM_PRELUDE = {M.SIN, M.COS, M.TAN}


# f32 tanh comes from the f32 prelude: straight-line code that LLVM vectorises, where the C
# library's is a slow call per element (a loop of tanhf ran 26x slower than numpy's)
_F32_FROM_PRELUDE = {M.TANH}


def lowers_math(fn: M, dtype: DType) -> bool:
    """Every math function lowers natively on the host but f64 trigonometry and f32 tanh (the
    decomposition pass adds the preludes')."""
    if dtype.bits == 64 and fn in _F64_FROM_PRELUDE:
        return False
    if dtype == dt.f32 and fn in _F32_FROM_PRELUDE:
        return False
    return fn in MATH
