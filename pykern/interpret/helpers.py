"""The functions generated code calls for the operations that are not one Python operator.

Generated source names them with a leading underscore (`_floordiv(a, b)`); `NAMESPACE` is the
globals dict it runs in. Integer values are Python ints already wrapped to their type; float
values are numpy scalars of their type (`np.float32` for f32), so numpy rounds every operation.

Where the GPU result is undefined, these define one (the SPIR-V lowering in
`pykern.spirv.pysemantics` defines the same where it defines anything):

- integer `//` and `%` by zero give 0;
- shift counts outside `0 <= count < bits` shift everything out: `<<` gives 0, unsigned `>>`
  gives 0, signed `>>` gives 0 or -1 (the sign), exactly what Python's own shift of the
  unbounded int, wrapped to the width, gives for a count >= bits;
- float to int conversion truncates toward zero, saturates at the type's limits, and NaN
  gives 0 (what NVIDIA's conversion instructions do);
- a `range` with step 0 runs no iterations.
"""

from __future__ import annotations

import math

import numpy as np

# ---------------------------------------------------------------- integers


def floordiv(a: int, b: int) -> int:
    """Python's `a // b`, 0 when `b` is 0 (the caller wraps: INT_MIN // -1 overflows)."""
    return a // b if b else 0


def mod(a: int, b: int) -> int:
    """Python's `a % b` (sign of `b`), 0 when `b` is 0. Always fits the operands' type."""
    return a % b if b else 0


def int_pow(a: int, e: int, bits: int) -> int:
    """`a ** e` modulo 2**bits (the caller wraps to the signed range). A negative exponent gives
    0, except for a base of 1 or -1: the integer part of Python's float result."""
    if e < 0:
        if a == 1:
            return 1
        if a == -1:
            return -1 if e & 1 else 1
        return 0
    return pow(a, e, 1 << bits)


def shl(a: int, count: int, bits: int) -> int:
    """`a << count` before wrapping; 0 when the count is negative or >= bits."""
    return a << count if 0 <= count < bits else 0


def sar(a: int, count: int, bits: int) -> int:
    """Arithmetic `a >> count` of a signed value; a count outside [0, bits) acts as bits - 1."""
    return a >> (count if 0 <= count < bits else bits - 1)


def shr(a: int, count: int, bits: int) -> int:
    """Logical `a >> count` of an unsigned value; 0 once count >= bits."""
    return a >> count if count < bits else 0


# ---------------------------------------------------------------- floats


def float_floordiv(a: np.floating, b: np.floating) -> np.floating:
    """`floor(a / b)`, in the operands' type (what the SPIR-V lowering computes)."""
    return np.floor(a / b)


def float_mod(a: np.floating, b: np.floating) -> np.floating:
    """`a - b * floor(a / b)`, each step rounded to the operands' type (unfused)."""
    return a - b * np.floor(a / b)


def float_pow(a: np.floating, b: np.floating) -> np.floating:
    """Python's `a ** b` as C's pow: a negative base with a non-integral exponent gives NaN, a
    zero base with a negative exponent gives inf (never an exception)."""
    return a ** b


def fmin(a: np.floating, b: np.floating) -> np.floating:
    """GLSL NMin: when one operand is NaN, the other."""
    if b != b:
        return a
    return b if (a != a or b < a) else a


def fmax(a: np.floating, b: np.floating) -> np.floating:
    """GLSL NMax: when one operand is NaN, the other."""
    if b != b:
        return a
    return b if (a != a or b > a) else a


# ---------------------------------------------------------------- conversions


def float_to_int(x: np.floating, lo: int, hi: int) -> int:
    """Truncation toward zero, saturated to [lo, hi]; NaN gives 0."""
    f = float(x)
    if f != f:
        return 0
    if f >= hi:
        return hi
    if f <= lo:
        return lo
    return math.trunc(f)


def int64_to_float(x: int, signed: bool, to: type) -> np.floating:
    """A 64-bit integer to a float type with one rounding (through a double would round twice:
    2**60 + 2**36 + 1 must become 2**60 + 2**37 in f32, not 2**60)."""
    return to(np.int64(x) if signed else np.uint64(x))


def range_or_empty(start: int, stop: int, step: int) -> range:
    """`range(start, stop, step)`; a zero step (undefined on the GPU) runs no iterations."""
    return range(start, stop, step) if step else range(0)


NAMESPACE: dict[str, object] = {
    "np": np,
    "_floordiv": floordiv,
    "_mod": mod,
    "_int_pow": int_pow,
    "_shl": shl,
    "_sar": sar,
    "_shr": shr,
    "_float_floordiv": float_floordiv,
    "_float_mod": float_mod,
    "_float_pow": float_pow,
    "_fmin": fmin,
    "_fmax": fmax,
    "_float_to_int": float_to_int,
    "_int64_to_float": int64_to_float,
    "_range": range_or_empty,
}
