"""The op library in strict floating point: inside `pk.strict_float()` every tensor op runs its
kernels strict, so + - * / sqrt and astype give numpy's bits (NaN against NaN) for every float
dtype; outside it they are back to the default variants."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pykern as pk
from pykern.ops import elementwise as ew

FEATURES = pk.get_device().info.features
FLOATS = [pk.f32] + ([pk.f16] if FEATURES.fp16 else []) + \
    ([pk.f64] if FEATURES.fp64 and FEATURES.int64 else [])
UINTS = {2: np.uint16, 4: np.uint32, 8: np.uint64}
rng = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def quiet_shortfall():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.StrictFloatWarning)
        yield


def values(dtype: pk.DType, n: int = 3000) -> np.ndarray:
    """Random bit patterns (every exponent, subnormals, inf, NaN) and the special values."""
    np_type = dtype.numpy
    ut = UINTS[np.dtype(np_type).itemsize]
    bits = rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True).view(np_type)
    fi = np.finfo(np_type)
    special = np.array([0.0, 1.0, 3.0, fi.max, fi.tiny, fi.smallest_subnormal, np.inf, np.nan],
                       np_type)
    return np.concatenate([bits, special, -special])


def assert_same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype
    ut = UINTS[got.dtype.itemsize]
    same = (got.view(ut) == expected.view(ut)) | (np.isnan(got) & np.isnan(expected))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{bad.size} differ, e.g. {got[bad[:4]]} for {expected[bad[:4]]}"


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_tensor_ops_in_strict_float_give_numpys_bits(dtype):
    x, y = values(dtype), values(dtype)
    a, b = pk.asarray(x), pk.asarray(y)
    with pk.strict_float():
        got = {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b, "sqrt": pk.sqrt(a)}
        got = {op: t.numpy() for op, t in got.items()}
        converted = {other: a.astype(other).numpy() for other in FLOATS if other != dtype}
    with np.errstate(all="ignore"):
        expected = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "sqrt": np.sqrt(x)}
        for op, e in expected.items():
            assert_same_bits(got[op], e)
        for other, c in converted.items():
            assert_same_bits(c, x.astype(other.numpy))


def test_strict_float_switches_the_op_kernels_for_the_block_only():
    kernel = ew.binary_kernel(pk.f32)
    a = pk.asarray(np.arange(1, 9, dtype=np.float32))
    (a / 3.0).numpy()
    with pk.strict_float():
        strict = (a / 3.0).numpy()
    after = (a / 3.0).numpy()
    modes = {key[-1] for _, key in kernel._variants}
    assert modes == {False, True}
    np.testing.assert_array_equal(strict, np.arange(1, 9, dtype=np.float32) / np.float32(3))
    np.testing.assert_array_equal(after, strict)  # lavapipe's default is exact too
