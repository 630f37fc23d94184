"""The scalar and array types of pykern, shared by every layer above the runtime.

`pk.f32` is a `DType`. Inside a kernel it is a type (`x: pk.f32`, `pk.f32[:]`) and a cast
(`pk.f32(i)`); outside, calling it makes the matching numpy scalar.

`pk.bf16` (bfloat16: f32's sign, exponent and top 7 mantissa bits) has no numpy type of its
own: its numpy dtype is `ml_dtypes.bfloat16`, imported only when a bf16 numpy array or scalar
is asked for, so that `import pykern` stays fast and works where ml_dtypes is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

# kind letters follow numpy's `dtype.kind`
BOOL, INT, UINT, FLOAT, COMPLEX = "b", "i", "u", "f", "c"


@dataclass(frozen=True, eq=False)
class DType:
    """A scalar type: `kind` is one of 'b', 'i', 'u', 'f', 'c'; `bits` its width (a complex
    type's width is both parts': c64 is a pair of f32)."""

    name: str
    kind: str
    bits: int

    # Every op keys its caches on dtypes: equality and hash by name (which decides the rest),
    # with identity first, cost less than the dataclass's field tuples.
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is DType:
            return self.name == other.name and self.kind == other.kind and \
                self.bits == other.bits
        return _equals_foreign(self, other)

    # Equal DTypes hash equal, and so does the pykern name (`pk.f32 == "f32"`). numpy's dtypes,
    # scalar types and their names compare equal without sharing the hash, as they do among
    # themselves in numpy (`np.dtype("float32") == "float32"`).
    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def __numpy_dtype__(self) -> np.dtype:
        """numpy's protocol (numpy 2.4+) that makes `np.dtype(pk.f32)` and
        `np.zeros(3, dtype=pk.f32)` work."""
        return self.dtype

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype, `numpy`, under the attribute name through which numpy before 2.4
        takes `pk.f32` as a `dtype=`. For bf16 an AttributeError where ml_dtypes is missing."""
        try:
            return self.numpy
        except ImportError as e:
            raise AttributeError(f"{e} (needed for numpy's dtype of pk.{self.name})") from e

    @property
    def itemsize(self) -> int:
        """Bytes one element takes in a buffer (bool is stored as one byte, as numpy does)."""
        return max(self.bits // 8, 1)

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype of this type's values (`ml_dtypes.bfloat16` for bf16)."""
        if self.name == "bf16":
            return bfloat16_numpy()
        return np.dtype(NUMPY_NAMES[self.name])

    @property
    def storage(self) -> np.dtype:
        """The numpy dtype of this type's elements in a buffer, as host code handles them
        without ml_dtypes: uint16 bit patterns for bf16, `numpy` for every other type."""
        return np.dtype(np.uint16) if self.name == "bf16" else self.numpy

    @property
    def is_float(self) -> bool:
        return self.kind == FLOAT

    @property
    def is_complex(self) -> bool:
        return self.kind == COMPLEX

    @property
    def real_dtype(self) -> DType:
        """The type of one part of a complex type (f32 for c64, f64 for c128); the type
        itself for every other type."""
        if self.kind != COMPLEX:
            return self
        return BY_NAME[f"f{self.bits // 2}"]

    @property
    def is_int(self) -> bool:
        """Signed or unsigned integer (not bool)."""
        return self.kind in (INT, UINT)

    @property
    def is_signed(self) -> bool:
        return self.kind in (INT, FLOAT, COMPLEX)

    def __getitem__(self, dims: object) -> ArrayType:
        """`pk.f32[:]` is a 1-D array of f32, `pk.f32[:, :]` a 2-D one."""
        dims = dims if isinstance(dims, tuple) else (dims,)
        if not 1 <= len(dims) <= 4 or any(d != slice(None) for d in dims):
            raise TypeError(f"array annotations are written {self.name}[:] to "
                            f"{self.name}[:, :, :, :]")
        return ArrayType(self, len(dims))

    def __call__(self, value: object) -> np.generic:
        """Outside a kernel, `pk.f32(1.5)` is `np.float32(1.5)` (and `pk.bf16(1.5)` an
        `ml_dtypes.bfloat16` scalar)."""
        return self.numpy.type(value)

    def __repr__(self) -> str:
        return f"pk.{self.name}"


@dataclass(frozen=True)
class ArrayType:
    """An array parameter's type: element dtype and number of dimensions (1 to 4)."""

    dtype: DType
    ndim: int

    def __repr__(self) -> str:
        return f"pk.{self.dtype.name}[{', '.join(':' * self.ndim)}]"


if TYPE_CHECKING:
    # To type checkers each dtype is a class (`x: pk.f32` is an annotation), as are pk.Array
    # and pk.constexpr: see checker_types.pyi. At run time they are the objects below.
    from pykern.lang.checker_types import (Array, bf16, bool_, c64, c128, constexpr, f16, f32, f64,
                                           i8, i16,
                                           i32, i64, u8, u16, u32, u64)
else:
    bool_ = DType("bool_", BOOL, 8)
    i8 = DType("i8", INT, 8)
    i16 = DType("i16", INT, 16)
    i32 = DType("i32", INT, 32)
    i64 = DType("i64", INT, 64)
    u8 = DType("u8", UINT, 8)
    u16 = DType("u16", UINT, 16)
    u32 = DType("u32", UINT, 32)
    u64 = DType("u64", UINT, 64)
    f16 = DType("f16", FLOAT, 16)
    f32 = DType("f32", FLOAT, 32)
    f64 = DType("f64", FLOAT, 64)
    # bfloat16: kept in buffers as 16-bit words, computed in f32 and rounded to bf16 after
    # every operation (pykern.passes.bf16), on every device
    bf16 = DType("bf16", FLOAT, 16)
    # complex64 and complex128: a pair of f32 (f64), real part first, as numpy stores them
    c64 = DType("c64", COMPLEX, 64)
    c128 = DType("c128", COMPLEX, 128)

# the "type" of a call to a device function that returns nothing; never a value's type
void = DType("void", "v", 0)

ALL_DTYPES = (bool_, i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, bf16)
COMPLEX_DTYPES = (c64, c128)
BY_NAME = {d.name: d for d in ALL_DTYPES + COMPLEX_DTYPES}
NUMPY_NAMES = {
    "bool_": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128",
}
_FROM_NUMPY = {np.dtype(v): BY_NAME[k] for k, v in NUMPY_NAMES.items()}

# bf16's largest finite value, (2 - 2**-7) * 2**127
BF16_MAX = float.fromhex("0x1.fep127")

# Python's own names inside annotations and casts
PYTHON_ALIASES = {int: i32, float: f32, bool: bool_}


def _equals_foreign(d: DType, other: object) -> bool:
    """`d == other` for a numpy dtype, a numpy scalar type (`np.float32`) or a name: pykern's
    (`"f32"`) or one numpy understands (`"float32"`, `"f4"`), as numpy compares its dtypes.
    Python's own types (`float`) are not compared: their pykern and numpy meanings differ."""
    if isinstance(other, str):
        if other == d.name:
            return True
    elif not isinstance(other, np.dtype) and not (isinstance(other, type)
                                                 and issubclass(other, np.generic)):
        return NotImplemented  # type: ignore[return-value]
    try:
        theirs = np.dtype(other)  # type: ignore[call-overload]
    except (TypeError, ValueError):  # not a dtype numpy knows (a ValueError for some names)
        return False
    if d.name == "bf16":  # ml_dtypes' type, known by name (no import needed)
        return theirs.name == "bfloat16" and theirs.type.__module__.startswith("ml_dtypes")
    return theirs.name == NUMPY_NAMES.get(d.name)


def numpy_is_bf16(dtype: np.dtype) -> bool:
    """Whether a numpy dtype is `ml_dtypes.bfloat16` (told by name: no import of ml_dtypes)."""
    return dtype.name == "bfloat16" and dtype.type.__module__.startswith("ml_dtypes")


def from_numpy(dtype: object) -> DType:
    """The pykern dtype for a numpy dtype (or anything `np.dtype` accepts); KeyError if none.
    `ml_dtypes.bfloat16` is bf16 (recognised by name: that needs no import of ml_dtypes)."""
    d = np.dtype(dtype)  # type: ignore[call-overload]
    found = _FROM_NUMPY.get(d)  # first: a numpy dtype's name is slow to make
    if found is not None:
        return found
    if numpy_is_bf16(d):
        return bf16
    return _FROM_NUMPY[d]


def bfloat16_numpy() -> np.dtype:
    """`np.dtype(ml_dtypes.bfloat16)`, importing ml_dtypes on first use; an ImportError that
    names the package where it is not installed."""
    try:
        import ml_dtypes
    except ImportError as e:
        raise ImportError("bf16 numpy arrays and scalars need the ml_dtypes package "
                          "(pip install ml_dtypes)") from e
    return np.dtype(ml_dtypes.bfloat16)


def round_to_bf16(value: float) -> float:
    """`value` rounded to the nearest bf16, ties to even, as ml_dtypes converts a double: NaN
    stays NaN, overflow gives inf. A Python float; needs no ml_dtypes (the host rounds bf16
    scalar arguments and constants with it)."""
    with np.errstate(over="ignore"):
        near = np.array(value, np.float32)
    bits = int(near.view(np.uint32))
    if float(near) != value and not bits & 1 and value == value:
        # inexact in f32: round to odd there (a step towards `value`), so that rounding to bf16
        # below rounds once, not twice
        bits += -1 if abs(float(near)) > abs(value) else 1
    if (bits & 0x7FFFFFFF) > 0x7F800000:  # NaN: keep it NaN, quiet, with its sign
        rounded = (bits | 0x00400000) & 0xFFFF0000
    else:
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.array(rounded, np.uint32).view(np.float32))


def as_dtype(obj: object) -> DType:
    """Accepts a DType, a Python type (int/float/bool), a numpy dtype or its name."""
    if isinstance(obj, DType):
        return obj
    if obj in PYTHON_ALIASES:
        return PYTHON_ALIASES[obj]  # type: ignore[index]
    if isinstance(obj, str) and obj in BY_NAME:
        return BY_NAME[obj]
    try:
        return from_numpy(obj)
    except (KeyError, TypeError) as e:
        raise TypeError(f"{obj!r} is not a pykern dtype") from e


class _GenericArray:
    """`pk.Array`: an array parameter of any dtype and ndim; the kernel is compiled once per
    dtype/ndim it is launched with."""

    def __repr__(self) -> str:
        return "pk.Array"


def is_constexpr_value(value: object) -> bool:
    """What a `pk.constexpr` may hold: a number, bool or str, a tuple of numbers and bools (a
    tile shape), a dtype such as `pk.f32` (then the kernel uses it as a type) or a `@pk.func`
    (then the kernel calls it)."""
    if isinstance(value, tuple):
        return all(isinstance(v, (bool, int, float)) for v in value)
    return isinstance(value, (bool, int, float, str, DType)) or \
        getattr(value, "is_pykern_func", False) is True


if not TYPE_CHECKING:  # checker_types.pyi has these for type checkers
    Array = _GenericArray()

    class constexpr:  # noqa: N801  (lower case, as users write it like a type)
        """`n: pk.constexpr` — a parameter whose value is a compile-time constant (one
        compiled variant per distinct value). `BLOCK = pk.constexpr(128)` at module level marks
        a global the same way (plain numbers are captured as constants anyway). A dtype or a
        `@pk.func` is a constexpr too: `def k(x: pk.f32[:], op: pk.constexpr)` launched with
        `op=pk.f32` or a device function compiles one variant per value."""

        def __init__(self, value: object):
            if not is_constexpr_value(value):
                raise TypeError(f"pk.constexpr takes a number, bool, str, tuple of numbers, "
                                f"pykern dtype or @pk.func, not {type(value).__name__}")
            self.value = value

        def __repr__(self) -> str:
            return f"pk.constexpr({self.value!r})"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, constexpr) and other.value == self.value

        def __hash__(self) -> int:
            return hash(("constexpr", self.value))
