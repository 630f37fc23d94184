"""Host data rounded to bf16 by pykern's rule, without ml_dtypes: the exact value of each
element (any float, or any integer up to 64 bits) rounded once to the nearest bf16, ties to
even; NaN stays NaN (quiet, with its sign), a value that rounds past the largest finite bf16
is infinite. Kernels convert by the same rule (`pykern.passes.bf16`), so `pk.asarray(x,
dtype=pk.bf16)` and a kernel's `pk.bf16(x)` agree bit for bit, whichever ml_dtypes (which has
rounded wide sources twice, through f32, in some versions) is installed.

Floats are rounded to f32 by rounding to odd (exact where the value is, else the f32
neighbour with an odd last bit), which has 16 more bits than bf16, and then to bf16 to
nearest even: one rounding in effect. 64-bit integers, which f64 does not hold exactly, are
rounded with integer arithmetic.
"""

from __future__ import annotations

import numpy as np

_QUIET = np.uint64(0x00400000)
_HALF_MINUS_ONE = np.uint64(0x7FFF)


def bf16_words(values: np.ndarray) -> np.ndarray:
    """The uint16 bf16 bit patterns of a bool, integer or float array, same shape."""
    values = np.asarray(values)
    kind = values.dtype.kind
    if kind in "iu" and values.dtype.itemsize == 8:
        return _words_of_wide_ints(values)
    if kind in "biuf":
        with np.errstate(invalid="ignore"):  # a signalling NaN stays a NaN
            return _words_of_floats(values.astype(np.float64))  # exact for the others
    raise TypeError(f"cannot round {values.dtype} values to bf16")


def bf16_value(x: int | float) -> float:
    """A Python int or float rounded to bf16 by the rule, as a Python float."""
    word = np.asarray(bf16_words(np.asarray(x)), np.uint32) << np.uint32(16)
    return float(word.view(np.float32))


def _words_of_floats(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        near = x.astype(np.float32)
    bits = near.view(np.uint32).astype(np.uint64)
    wide = near.astype(np.float64)
    nan = np.isnan(x)
    # where f32 rounded, take the neighbour with the odd last bit (one step towards x where
    # the nearest was even); the magnitude is in the low 31 bits, so a step is +-1
    step = (wide != x) & ~nan & (bits & np.uint64(1) == 0)
    toward_zero = np.abs(wide) > np.abs(x)
    bits = np.where(step, np.where(toward_zero, bits - np.uint64(1), bits + np.uint64(1)), bits)
    rounded = (bits + _HALF_MINUS_ONE + ((bits >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    quiet_nan = (bits | _QUIET) >> np.uint64(16)
    return np.where(nan, quiet_nan, rounded).astype(np.uint16)


def _words_of_wide_ints(n: np.ndarray) -> np.ndarray:
    negative = n < 0
    magnitude = n.astype(np.uint64)
    with np.errstate(over="ignore"):  # two's complement negation wraps, as meant
        magnitude = np.where(negative, ~magnitude + np.uint64(1), magnitude)  # |n|, -2**63 too
    length = _bit_length(magnitude)
    shift = np.maximum(length - 8, 0).astype(np.uint64)  # bits below bf16's 8 significant
    kept = magnitude >> shift
    dropped = magnitude - (kept << shift)
    half = np.where(shift > 0, np.uint64(1) << np.maximum(shift, 1) - np.uint64(1),
                    np.uint64(0))
    up = (shift > 0) & ((dropped > half) | ((dropped == half) & (kept & np.uint64(1) == 1)))
    kept = kept + up.astype(np.uint64)
    carried = kept == 256  # rounded up to the next power of two
    kept = np.where(carried, np.uint64(128), kept)
    shift = shift + carried.astype(np.uint64)
    # 8, or fewer for a value below 2**7 (at least 1: a zero is set apart below)
    top = np.maximum(_bit_length(kept), 1).astype(np.uint64)
    exponent = shift + top - np.uint64(1)
    fraction = (kept << (np.uint64(8) - top)) & np.uint64(0x7F)
    words = ((exponent + np.uint64(127)) << np.uint64(7)) | fraction
    words = np.where(magnitude == 0, np.uint64(0), words)
    return (words | np.where(negative, np.uint64(0x8000), np.uint64(0))).astype(np.uint16)


def _bit_length(v: np.ndarray) -> np.ndarray:
    """The bit length of each element of a uint64 array (0 for 0), as int64."""
    length = np.zeros(v.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = (v >> np.uint64(s)) != 0
        v = np.where(big, v >> np.uint64(s), v)
        length += np.where(big, s, 0)
    return length + (v != 0)
