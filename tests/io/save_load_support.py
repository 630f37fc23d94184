"""Host data of every pykern dtype for the save/load tests, and a bit-exact comparison."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pykern as pk

DTYPES = [pk.bool_, pk.i8, pk.i16, pk.i32, pk.i64, pk.u8, pk.u16, pk.u32, pk.u64, pk.f16,
          pk.bf16, pk.f32, pk.f64]
SAFETENSORS_NAMES = {"bool_": "BOOL", "i8": "I8", "i16": "I16", "i32": "I32", "i64": "I64",
                     "u8": "U8", "u16": "U16", "u32": "U32", "u64": "U64", "f16": "F16",
                     "bf16": "BF16", "f32": "F32", "f64": "F64"}


def host_data(dtype: pk.DType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Values over the dtype's whole range; floats include -0.0, inf, -inf and NaN."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == pk.bool_:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.is_int:
        info = np.iinfo(dtype.numpy)
        return rng.integers(info.min, info.max, n, dtype=dtype.numpy, endpoint=True
                            ).reshape(shape)
    values = (rng.standard_normal(n) * 100).astype(np.float32)
    specials = np.array([-0.0, np.inf, -np.inf, np.nan], np.float32)
    values[:min(n, 4)] = specials[:min(n, 4)]
    target = ml_dtypes.bfloat16 if dtype == pk.bf16 else dtype.numpy
    return values.astype(target).reshape(shape)


def assert_same_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype, shape and bytes (NaN payloads and -0.0 included)."""
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    assert actual.tobytes() == expected.tobytes()  # C order: the logical contents
