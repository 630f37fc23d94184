"""The dtypes under numpy's and PyTorch's names: `pk.float32` is `pk.f32`, `pk.int64` is
`pk.i64`, `pk.bool` is `pk.bool_` (numpy 2's `np.bool`, PyTorch's `torch.bool`), and
PyTorch's own `pk.long` (i64), `pk.short` (i16), `pk.half` (f16) and `pk.double` (f64), so
that `dtype=torch.long` ports as `dtype=pk.long`. The same objects as the short names.

(There is no `pk.float` or `pk.int`: they would hide Python's `float` and `int`, whose
widths in numpy are 64 bits where PyTorch's `torch.float` and `torch.int` have 32.)
"""

from __future__ import annotations

from pykern.lang.dtypes import (bf16, bool_, c64, c128, f16, f32, f64, i8, i16, i32, i64, u8,
                                u16, u32, u64)

bool = bool_  # noqa: A001
int8, int16, int32, int64 = i8, i16, i32, i64
uint8, uint16, uint32, uint64 = u8, u16, u32, u64
float16, float32, float64, bfloat16 = f16, f32, f64, bf16
complex64, complex128 = c64, c128
long, short, half, double = i64, i16, f16, f64

__all__ = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "bfloat16", "complex64", "complex128", "long",
           "short", "half", "double"]
