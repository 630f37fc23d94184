"""PyTorch's dtypes and pykern's, both ways."""

from __future__ import annotations

import torch

import pykern as pk

_TO_PK: dict[torch.dtype, pk.DType] = {
    torch.bool: pk.bool_,
    torch.int8: pk.i8, torch.int16: pk.i16, torch.int32: pk.i32, torch.int64: pk.i64,
    torch.uint8: pk.u8, torch.uint16: pk.u16, torch.uint32: pk.u32, torch.uint64: pk.u64,
    torch.float16: pk.f16, torch.bfloat16: pk.bf16, torch.float32: pk.f32,
    torch.float64: pk.f64, torch.complex64: pk.c64, torch.complex128: pk.c128,
}
_TO_TORCH: dict[pk.DType, torch.dtype] = {v: k for k, v in _TO_PK.items()}


def to_pk(dtype: torch.dtype) -> pk.DType:
    """pykern's dtype for a PyTorch dtype; NotImplementedError for one pykern lacks (float8
    types, complex32, quantized types)."""
    try:
        return _TO_PK[dtype]
    except KeyError:
        raise NotImplementedError(f"the pykern device has no dtype {dtype}") from None


def to_torch(dtype: pk.DType) -> torch.dtype:
    """PyTorch's dtype for a pykern dtype."""
    return _TO_TORCH[dtype]


def supported(dtype: torch.dtype) -> bool:
    """Whether pykern has this dtype."""
    return dtype in _TO_PK
