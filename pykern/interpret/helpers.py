"""The functions generated code calls for the operations that are not one Python operator.

Generated source names them with a leading underscore (`_floordiv(a, b)`); `NAMESPACE` is the
globals dict it runs in. Integer values are Python ints already wrapped to their type; float
values are numpy scalars of their type (`np.float32` for f32), so numpy rounds every operation.

Where the GPU result is undefined, these define one (the SPIR-V lowering in
`pykern.spirv.numerics.pysemantics` defines the same where it defines anything):

- integer `//` and `%` by zero give 0;
- shift counts outside `0 <= count < bits` shift everything out: `<<` gives 0, unsigned `>>`
  gives 0, signed `>>` gives 0 or -1 (the sign), exactly what Python's own shift of the
  unbounded int, wrapped to the width, gives for a count >= bits;
- float to int conversion truncates toward zero, saturates at the type's limits, and NaN
  gives 0 (what NVIDIA's conversion instructions do);
- a `range` with step 0 runs no iterations;
- `fma` rounds once (the GPU may or may not fuse, except in strict floating point).

Float `//` and `%` need no helper: numpy's operators on numpy scalars are Python's (the floor
of the exact quotient, through fmod), and give inf/NaN when dividing by zero.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from pykern.frontend.typerules import maximum, minimum  # kernel min/max of floats, numpy's

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


def float_pow(a: np.floating, b: np.floating) -> np.floating:
    """Python's `a ** b` as C's pow: a negative base with a non-integral exponent gives NaN, a
    zero base with a negative exponent gives inf (never an exception)."""
    return a ** b


def fmin(a: np.floating, b: np.floating) -> np.floating:
    """GLSL NMin, as float atomics and subgroup minima compute: when one operand is NaN, the
    other."""
    if b != b:
        return a
    return b if (a != a or b < a) else a


def fmax(a: np.floating, b: np.floating) -> np.floating:
    """GLSL NMax: when one operand is NaN, the other."""
    if b != b:
        return a
    return b if (a != a or b > a) else a


def erf(x: np.floating) -> np.floating:
    """The error function in `x`'s type (numpy has none)."""
    return type(x)(math.erf(float(x)))


def fma(a: np.floating, b: np.floating, c: np.floating) -> np.floating:
    """`a * b + c` rounded once (for f16/f32, via an exact product in f64)."""
    t = type(a)
    if t is not np.float64:
        product = np.float64(a) * np.float64(b)  # exact: 2 * 24 bits fit in 53
        return t(_sum_rounded_to_odd(product, np.float64(c)))
    if math.isfinite(a) and math.isfinite(b) and math.isfinite(c):
        exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
        if exact:  # an exact zero takes its sign from a * b + c below
            try:
                return t(float(exact))  # Fraction -> float rounds correctly
            except OverflowError:
                pass
    return a * b + c


def _sum_rounded_to_odd(x: np.float64, y: np.float64) -> np.float64:
    """x + y rounded to odd (toward zero, the last bit set where inexact): rounding that to a
    format of at most 51 bits rounds the exact sum, where rounding RN(x + y) again could not."""
    s = x + y
    if not np.isfinite(s):
        return s
    virtual = s - x
    err = (x - (s - virtual)) + (y - virtual)  # s + err = x + y exactly (two-sum)
    if err != 0 and not int(s.view(np.uint64)) & 1:
        s = np.nextafter(s, np.inf if err > 0 else -np.inf)
    return s


def select(cond: bool, a: object, b: object) -> object:
    """`pk.select`: both values already evaluated, as the arguments of a call are."""
    return a if cond else b


# ---------------------------------------------------------------- atomics


def atomic(buffer: object, address: int, update: object, value: object) -> object:
    """Read-modify-write of one element; returns the old value. Invocations run one at a time
    between synchronisation points, so nothing interleaves with it."""
    old = buffer[address]  # type: ignore[index]
    buffer[address] = update(old, value)  # type: ignore[index, operator]
    return old


def atomic_cas(buffer: object, address: int, comparator: object, value: object) -> object:
    """Compare-and-swap of an integer element; returns the old value."""
    old = buffer[address]  # type: ignore[index]
    if old == comparator:
        buffer[address] = value  # type: ignore[index]
    return old


def atomic_cas_bits(buffer: object, address: int, comparator: np.floating,
                    value: np.floating) -> object:
    """Compare-and-swap of a float element, comparing bit patterns as the GPU's integer CAS
    does (-0.0 is not 0.0, a NaN can equal itself)."""
    old = buffer[address]  # type: ignore[index]
    if old.tobytes() == comparator.tobytes():
        buffer[address] = value  # type: ignore[index]
    return old


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


def bitcast(value: object, source: type, target: type) -> object:
    """The bits of `value` (of numpy scalar type `source`) read as `target`: a numpy float
    scalar, or a Python int for an integer type (as the interpreter keeps them)."""
    raw = np.array(value, source).view(target)[()]
    return raw if np.issubdtype(target, np.floating) else int(raw)


def range_or_empty(start: int, stop: int, step: int) -> range:
    """`range(start, stop, step)`; a zero step (undefined on the GPU) runs no iterations."""
    return range(start, stop, step) if step else range(0)


def call_at(path: list, position: int, generator: object) -> object:
    """Runs a synchronising device function's `generator` with `position` (its call site)
    added to the invocation's progress `path` (see `pykern.interpret.runner`), which is as it
    was before the call when the call ends, whatever loops the function left by `return`."""
    depth = len(path)
    path.append(position)
    try:
        return (yield from generator)  # type: ignore[misc]
    finally:
        del path[depth:]


NAMESPACE: dict[str, object] = {
    "np": np,
    "_floordiv": floordiv,
    "_mod": mod,
    "_int_pow": int_pow,
    "_shl": shl,
    "_sar": sar,
    "_shr": shr,
    "_float_pow": float_pow,
    "_minimum": minimum,
    "_maximum": maximum,
    "_fmin": fmin,
    "_fmax": fmax,
    "_float_to_int": float_to_int,
    "_int64_to_float": int64_to_float,
    "_range": range_or_empty,
    "_call_at": call_at,
    "_bitcast": bitcast,
    "_erf": erf,
    "_fma": fma,
    "_select": select,
    "_atomic": atomic,
    "_atomic_cas": atomic_cas,
    "_atomic_cas_bits": atomic_cas_bits,
}
