"""pykern dtypes as LLVM types: the type a value has in a register and the one its elements
have in memory (a bool is an i1 value and a byte in a buffer, as numpy stores it)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir as ll

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType

I1, I8, I32, I64 = ll.IntType(1), ll.IntType(8), ll.IntType(32), ll.IntType(64)
F32 = ll.FloatType()
F64 = ll.DoubleType()
PTR = ll.PointerType()
_FLOATS = {16: ll.HalfType(), 32: ll.FloatType(), 64: ll.DoubleType()}


def value_type(t: DType) -> ll.Type:
    """The register type of values of `t`."""
    if t.kind == dt.BOOL:
        return I1
    if t.is_float:
        return _FLOATS[t.bits]
    return ll.IntType(t.bits)


def memory_type(t: DType) -> ll.Type:
    """The type of one element of `t` in a buffer."""
    return I8 if t.kind == dt.BOOL else value_type(t)


def float_suffix(t: DType) -> str:
    """The type suffix of an LLVM intrinsic's name for float type `t` (f16, f32, f64)."""
    return f"f{t.bits}"


def int_suffix(t: DType) -> str:
    return f"i{t.bits}"


def const(t: DType, value: bool | int | float) -> ll.Constant:
    """A constant of `t` (ints in two's complement at the type's width)."""
    if t.kind == dt.BOOL:
        return ll.Constant(I1, int(bool(value)))
    if t.is_float:  # rounded to the type as numpy rounds (65536.0 is an f16 inf)
        with np.errstate(over="ignore"):
            rounded = float(t.numpy.type(value))
        return ll.Constant(value_type(t), rounded)
    return ll.Constant(value_type(t), int(value) & ((1 << t.bits) - 1))
