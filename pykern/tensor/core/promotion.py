"""Type promotion for tensor operations: which dtype `a + b` has, how Python scalars join in.

The rules (docs/tensor.md, "Type promotion", says the same for users):

- Within one kind, the Python array API standard (2023.12): bool with bool; signed with signed
  and unsigned with unsigned give the wider; floats give the wider float.
- Signed with unsigned: the smallest signed type that holds both (u8 + i8 -> i16,
  u32 + i64 -> i64); u64 with any signed type has none and raises TypeError (numpy would give
  f64; the standard leaves it undefined).
- Integer (or bool) with float: the float type (f16 + i32 -> f16, i64 + f32 -> f32). numpy 2
  widens the float instead (i32 + f32 -> f64); pykern follows the kernel language, PyTorch and
  JAX here, so f32 work stays in f32 on devices where f64 is slow or missing.
- bf16 with f16: f32 (neither holds the other's values; as PyTorch and ml_dtypes); bf16 with
  f32 or f64: the wider.
- bool with an integer: the integer; bool with a float: the float (as numpy).
- Complex (c64, c128) with complex: the wider; with a float: the complex type of at least the
  float's precision (c64 + f64 -> c128, c64 + f16 -> c64, as numpy and the standard); with an
  integer or bool: the complex type.
- Python scalars are "weak" (array API 2023.12, NEP 50): `f16_tensor * 2.0` stays f16,
  `i8_tensor + 1` stays i8 and `f64_tensor * 1j` is c128 (`f32_tensor * 1j` c64). An int
  scalar that does not fit the integer dtype raises OverflowError (as numpy 2). A float
  scalar with an integer or bool tensor gives the default float dtype f32 (numpy: f64); an int
  scalar with a bool tensor the default integer dtype i32; a complex scalar with an integer
  or bool tensor the default complex dtype c64.
- numpy scalars and 0-d tensors are "strong": they promote like any tensor.
"""

from __future__ import annotations

import numbers

import numpy as np

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType

DEFAULT_FLOAT = dt.f32
DEFAULT_COMPLEX = dt.c64
DEFAULT_INT = dt.i32
INDEX_DTYPE = dt.i64  # argmax/argmin results, as numpy's intp
SIGNED = (dt.i8, dt.i16, dt.i32, dt.i64)
UNSIGNED = (dt.u8, dt.u16, dt.u32, dt.u64)
FLOATS = (dt.f16, dt.bf16, dt.f32, dt.f64)
INTS = SIGNED + UNSIGNED
NUMERIC = INTS + FLOATS
COMPLEX = (dt.c64, dt.c128)


def complex_of(dtype: DType) -> DType:
    """The complex type whose parts hold `dtype`'s values: c128 for f64 (and c128), c64 for
    every other type."""
    return dt.c128 if dtype in (dt.f64, dt.c128) else dt.c64


def promote_types(a: DType, b: DType) -> DType:
    """The dtype of an operation between tensors of dtypes `a` and `b` (see the module doc)."""
    if a == b:
        return a
    if a == dt.bool_:
        return b
    if b == dt.bool_:
        return a
    if a.is_complex or b.is_complex:
        return dt.c128 if dt.c128 in (complex_of(a), complex_of(b)) else dt.c64
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            if a.bits == b.bits == 16:  # f16 with bf16
                return dt.f32
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    unsigned, signed = (a, b) if a.kind == dt.UINT else (b, a)
    if signed.bits > unsigned.bits:
        return signed
    if unsigned.bits == 64:
        raise TypeError(f"no integer dtype holds both {a.name} and {b.name} values; convert one "
                        "with .astype() first")
    return dt.BY_NAME[f"i{unsigned.bits * 2}"]


def promote(*dtypes: DType) -> DType:
    """`promote_types` over any number of dtypes (at least one)."""
    result = dtypes[0]
    for d in dtypes[1:]:
        result = promote_types(result, d)
    return result


def compute_dtype(dtype: DType) -> DType:
    """The type arithmetic on `dtype` runs in: f16 and bf16 widen to f32 (rounding once at the
    store gives numpy's f16 and ml_dtypes' bf16 results)."""
    return dt.f32 if dtype in (dt.f16, dt.bf16) else dtype


def accumulator(dtype: DType) -> DType:
    """The type sums and products of `dtype` values are kept in: f32 for f16 and bf16, 32 bits
    for narrow integers and bool (integer arithmetic wraps, so narrowing at the end gives
    numpy's wrapped result)."""
    if dtype in (dt.f16, dt.bf16):
        return dt.f32
    if dtype in (dt.bool_, dt.i8, dt.i16):
        return dt.i32
    if dtype in (dt.u8, dt.u16):
        return dt.u32
    return dtype


def compute_float(dtype: DType) -> DType:
    """The float type that transcendental math on `dtype` runs in: f64 for f64, else f32
    (Vulkan's f16 math is too coarse for softmax sums, and integers give floats)."""
    return dt.f64 if dtype == dt.f64 else dt.f32


def is_python_scalar(value: object) -> bool:
    """A Python bool, int or float (weakly typed); numpy scalars are not."""
    return isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)


def is_python_complex(value: object) -> bool:
    """A Python complex number (weakly typed, as the real scalars); numpy's are not."""
    return isinstance(value, complex) and not isinstance(value, np.generic)


def is_complex_operand(value: object) -> bool:
    """Whether `value` (a tensor, numpy array or scalar, Python number) has a complex type."""
    if isinstance(value, complex):
        return True
    d = getattr(value, "dtype", None)
    return d is not None and (getattr(d, "kind", None) == "c")


def scalar_kind_dtype(value: object) -> DType:
    """The dtype a Python scalar has alone (the defaults): bool_, i32 or f32."""
    if isinstance(value, bool):
        return dt.bool_
    if isinstance(value, int):
        return DEFAULT_INT
    if isinstance(value, float):
        return DEFAULT_FLOAT
    if isinstance(value, complex):
        return DEFAULT_COMPLEX
    raise TypeError(f"{type(value).__name__} is not supported as a tensor operand")


def dtype_with_scalar(tensor_dtype: DType, value: object) -> DType:
    """The dtype of an operation between a tensor of `tensor_dtype` and a Python scalar."""
    if isinstance(value, complex):
        return complex_of(tensor_dtype) if tensor_dtype.is_float or tensor_dtype.is_complex \
            else DEFAULT_COMPLEX
    if isinstance(value, bool):
        return tensor_dtype
    if isinstance(value, int):
        if tensor_dtype == dt.bool_:
            return DEFAULT_INT
        return tensor_dtype
    if isinstance(value, float):
        return tensor_dtype if tensor_dtype.is_float or tensor_dtype.is_complex \
            else DEFAULT_FLOAT
    raise TypeError(f"{type(value).__name__} is not supported as a tensor operand")


def check_scalar_fits(value: object, dtype: DType) -> None:
    """OverflowError when a Python int does not fit an integer `dtype` (numpy 2 does the same)."""
    if isinstance(value, int) and not isinstance(value, bool) and dtype.is_int:
        info = np.iinfo(dtype.numpy)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {dtype.name} "
                                f"({info.min}..{info.max})")


def operand_dtype(value: object) -> DType | None:
    """The strong dtype of an operand (a tensor, numpy array or numpy scalar); None for a Python
    scalar."""
    d = getattr(value, "dtype", None)
    if d is None:
        return None
    if isinstance(d, DType):
        return d
    try:
        return dt.from_numpy(d)
    except KeyError:
        raise TypeError(f"numpy dtype {d} has no pykern equivalent") from None


def result_type(*operands: object) -> DType:
    """The dtype of an operation over `operands`: tensors, numpy arrays/scalars, dtypes (pk,
    numpy or Python types) and Python scalars (weak: they take part only through their kind)."""
    strong: DType | None = None
    scalars: list[object] = []
    for x in operands:
        if is_python_scalar(x) or is_python_complex(x):
            scalars.append(x)
            continue
        d = operand_dtype(x)
        if d is None:
            try:
                d = dt.as_dtype(x)
            except TypeError:
                raise TypeError(f"result_type() takes arrays, dtypes and Python scalars, not "
                                f"{type(x).__name__}") from None
        strong = d if strong is None else promote_types(strong, d)
    if strong is None:
        if not scalars:
            raise ValueError("result_type() needs at least one array or dtype")
        # only scalars: the widest kind among them, at its default dtype
        kinds = [scalar_kind_dtype(s) for s in scalars]
        strong = kinds[0]
        for k in kinds[1:]:
            strong = promote_types(strong, k)
        return strong
    for s in scalars:
        strong = dtype_with_scalar(strong, s)
    return strong


def can_cast(from_: DType, to: DType) -> bool:
    """The array API's `can_cast`: True when promotion from `from_` to `to` gives `to` (a safe,
    value-preserving cast within the promotion lattice; int -> float counts as allowed, as
    promotion does)."""
    try:
        return promote_types(from_, to) == to
    except TypeError:
        return False


def same_kind(from_: DType, to: DType) -> bool:
    """numpy's 'same_kind' casting (what in-place operators allow): safe casts, or casts within
    one kind (f64 -> f32, i64 -> i8)."""
    if from_.is_float and to.is_float:  # (numpy knows bf16 only through ml_dtypes)
        return True
    if to.is_complex and (from_.is_float or from_.is_complex):
        return True
    return bool(np.can_cast(from_.numpy, to.numpy, "same_kind"))


def check_number(value: object, dtype: DType | None = None) -> None:
    """TypeError for a complex number where `dtype` (the value's destination, if known) is
    not complex: the imaginary part would be lost."""
    if dtype is not None and dtype.is_complex:
        return
    if isinstance(value, complex) or (isinstance(value, numbers.Number)
                                      and not isinstance(value, numbers.Real)):
        where = f"a {dtype.name} tensor" if dtype is not None else "this operation"
        raise TypeError(f"a complex number cannot be used in {where} (its imaginary part would "
                        "be lost); use a complex dtype (pk.c64, pk.c128) or take .real")
