"""Type rules of the kernel language: literal typing and binary promotion.

A Python number in a kernel (a literal, or a captured global) stays a `PyConst` — a value with no
type yet — until the context gives it one: `x + 1` with `x: u32` makes `1` a u32, `x * 0.5` with
`x: f16` makes `0.5` an f16. A literal with no typed partner gets the default: int -> i32,
float -> f32, bool -> bool_. Expressions of literals alone are folded with Python's semantics.

Promotion of two typed operands:
- the same type -> that type; bool_ in arithmetic counts as i32;
- two ints of one signedness -> the wider; mixed signedness -> as C: unsigned when it is at least
  as wide as the signed one, else the signed one;
- int with float -> the float type; two floats -> the wider; f16 with bf16 -> f32 (neither holds
  the other's values, as in torch and ml_dtypes);
- complex with anything -> the complex type whose parts hold both: c64 + f64 is c128, c64 with
  an int c64 (as an int with f32 gives f32). A Python complex literal (`1j`) is weak as a float
  literal is: it takes the precision of its partner (c64 unless that is an f64 or a c128).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType


@dataclass(frozen=True)
class PyConst:
    """A Python number not yet committed to a type."""

    value: bool | int | float | complex | str

    @property
    def default_type(self) -> DType:
        if isinstance(self.value, bool):
            return dt.bool_
        if isinstance(self.value, int):
            return dt.i32
        if isinstance(self.value, complex):
            return dt.c64
        return dt.f32


def int_range(t: DType) -> tuple[int, int]:
    if t.kind == dt.UINT:
        return 0, (1 << t.bits) - 1
    return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1


def minimum(a: float, b: float) -> float:
    """Kernel `min`, numpy's `minimum`: a NaN operand wins (the first of two), and of two equal
    values (-0.0 and 0.0) the second. Folds constants here; the interpreter runs it on numpy
    floats (`interpret.helpers`)."""
    return a if (a < b or a != a) else b


def maximum(a: float, b: float) -> float:
    """Kernel `max`, numpy's `maximum` (NaN as `minimum`)."""
    return a if (a > b or a != a) else b


def float_overflow(t: DType) -> float:
    """The smallest magnitude that rounds to infinity in float type `t`: the largest finite
    value plus half a unit in its last place (inf for f64, Python's own floats)."""
    if t.bits >= 64:
        return math.inf
    if t == dt.bf16:  # its largest finite value plus half a unit in its last place, 2**119
        return dt.BF16_MAX + 2.0 ** 119
    info = np.finfo(t.numpy)
    return float(info.max) + 2.0 ** (info.maxexp - info.nmant - 2)


def convert_constant(value: bool | int | float | complex, t: DType
                     ) -> bool | int | float | complex:
    """`value` as a constant of type `t`. Raises ValueError when it does not fit. An int that
    fits the unsigned range of a signed type is taken as its bit pattern (0xFFFFFFFF as i32 is
    -1), as hexadecimal masks are commonly written."""
    if t.is_complex:
        return complex(value)
    if isinstance(value, complex):
        raise ValueError(f"{value!r} is complex, and {t.name} is not: take its .real "
                         "(or abs) for a real value")
    if t == dt.bool_:
        return bool(value)
    if t.is_float:
        return float(value)
    if isinstance(value, float):
        if value != int(value):
            raise ValueError(f"{value!r} is not an integer")
        value = int(value)
    value = int(value)
    lo, hi = int_range(t)
    if lo <= value <= hi:
        return value
    if t.kind == dt.INT and 0 <= value < (1 << t.bits):
        return value - (1 << t.bits)
    raise ValueError(f"{value} does not fit in {t.name} (range {lo}..{hi})")


def arithmetic_type(t: DType) -> DType:
    """bool_ takes part in arithmetic as i32, as Python's bools act as ints."""
    return dt.i32 if t == dt.bool_ else t


def promote(a: DType, b: DType) -> DType:
    """The common type of two typed operands (see the module docstring)."""
    if a == b:
        return a
    a, b = arithmetic_type(a), arithmetic_type(b)
    if a == b:
        return a
    if a.is_complex or b.is_complex:
        return complex_of(widest_float(_part(a), _part(b)))
    if a.is_float and b.is_float:
        return widest_float(a, b)
    if a.is_float or b.is_float:
        return a if a.is_float else b
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    unsigned, signed = (a, b) if a.kind == dt.UINT else (b, a)
    return unsigned if unsigned.bits >= signed.bits else signed


def _part(t: DType) -> DType:
    """The real type whose precision `t` brings to a complex result (an int brings none)."""
    return t.real_dtype if t.is_complex else t if t.is_float else dt.f32


def complex_of(t: DType) -> DType:
    """The complex type whose parts hold `t`'s values: c128 for f64 (and c128), else c64."""
    return dt.c128 if t in (dt.f64, dt.c128) else dt.c64


def widest_float(*types: DType) -> DType:
    """The float type that holds every float type of `types`: the widest, but f32 for f16
    with bf16 (one has the range, the other the precision)."""
    widest = max(types, key=lambda t: t.bits)
    if widest.bits == 16 and {dt.f16, dt.bf16} <= set(types):
        return dt.f32
    return widest


def type_for_constant(c: PyConst, partner: DType) -> DType:
    """The type a Python number takes next to a typed operand of type `partner`."""
    if partner == dt.bool_:
        return dt.bool_ if isinstance(c.value, bool) else promote(c.default_type, dt.i32)
    if isinstance(c.value, complex):
        return partner if partner.is_complex else complex_of(partner)
    if isinstance(c.value, float) and not (partner.is_float or partner.is_complex):
        return dt.f32
    return partner
