"""bf16 values by the rule, not by a library's conversion: the source value taken exactly
(a Python int of any size, or the exact binary value of a float), rounded to the nearest bf16,
ties to even. bf16 has 8 significant bits (7 stored) and f32's exponent range: normal numbers
from 2**-126, subnormals multiples of 2**-133, and a value that rounds to 2**128 or more is
infinite. NaN stays NaN (its payload is not promised).

Expected values of the bf16 tests come from here, so that they hold pykern to the rule
whichever ml_dtypes or numpy is installed; ml_dtypes.bfloat16 serves only as the storage dtype
of the arrays.

    >>> hex(bf16_bits(16842753))   # 2**24 + 2**16 + 1: just above a halfway point, rounds up
    '0x4b81'
    >>> hex(bf16_bits(1 + 2**-8))  # a tie: to even, 1.0
    '0x3f80'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16
FRACTION_BITS = 7  # stored significand bits (8 significant with the implicit one)
MIN_NORMAL_EXPONENT = -126
EXPONENT_BIAS = 127
SIGN = 0x8000
INF = 0x7F80
NAN = 0x7FC0


def bf16_bits(value: int | float | np.number) -> int:
    """The 16-bit pattern of `value` rounded to bf16 (nearest, ties to even)."""
    if isinstance(value, (float, np.floating)):
        x = float(value)  # exact: every float16/32/64 value is a Python float
        if math.isnan(x):
            return NAN
        sign = SIGN if math.copysign(1.0, x) < 0 else 0
        if math.isinf(x):
            return sign | INF
        magnitude = Fraction(abs(x))
    else:
        n = int(value)
        sign = SIGN if n < 0 else 0
        magnitude = Fraction(abs(n))
    if magnitude == 0:
        return sign
    return sign | _positive_bits(magnitude)


def _positive_bits(magnitude: Fraction) -> int:
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1  # now 2**exponent <= magnitude < 2**(exponent + 1)
    quantum = max(exponent, MIN_NORMAL_EXPONENT) - FRACTION_BITS  # the bf16 unit there
    units = round(magnitude / Fraction(2) ** quantum)  # Fraction rounds half to even
    if units == 2 ** (FRACTION_BITS + 1):  # rounded up to the next power of two
        units, quantum = units // 2, quantum + 1
    if units * Fraction(2) ** quantum >= 2**128:
        return INF
    if units < 2**FRACTION_BITS:  # subnormal (or zero): exponent field 0
        return units
    biased = quantum + FRACTION_BITS + EXPONENT_BIAS
    return biased << FRACTION_BITS | (units - 2**FRACTION_BITS)


def rounded_bf16(values: Iterable[int | float] | np.ndarray) -> np.ndarray:
    """A bf16 array of `values` (a numpy array of any int or float dtype, or Python numbers)
    each rounded by the rule."""
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    shape = np.shape(values)
    bits = [bf16_bits(v) for v in np.ravel(np.array(items, dtype=object))]
    return np.array(bits, np.uint16).reshape(shape).view(BF16)


def to_f32(x: np.ndarray) -> np.ndarray:
    """bf16 values as f32, exactly: their 16 bits are the high half of the f32's."""
    return (np.asarray(x).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
