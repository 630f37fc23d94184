"""The op library in strict floating point: inside `pk.strict_float()` every tensor op runs its
kernels strict, so + - * / sqrt and astype give numpy's bits (NaN against NaN) for every float
dtype; outside it they are back to the default variants."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import pykern as pk
from pykern.tensor.elementwise import functions as ew

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


@functools.lru_cache(maxsize=None)
def subnormals_survive(np_type: type) -> bool:
    """Whether the device keeps a subnormal through a multiplication by one: where it flushes
    them and cannot be asked not to (NVIDIA's f32), strict mode runs without (and warns)."""
    x = pk.asarray(np.array([np.finfo(np_type).smallest_subnormal * 3], np_type))
    return bool((x * pk.asarray(np.ones(1, np_type))).numpy()[0] == x.numpy()[0])


def subnormal(a: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny)


def assert_same_bits(got: np.ndarray, expected: np.ndarray, *inputs: np.ndarray) -> None:
    """Equal bits, or both NaN; on a device that flushes subnormals of a type in use, what has
    a subnormal operand or result is left out."""
    assert got.dtype == expected.dtype
    ut = UINTS[got.dtype.itemsize]
    same = (got.view(ut) == expected.view(ut)) | (np.isnan(got) & np.isnan(expected))
    for a in (expected, *inputs):
        if not subnormals_survive(a.dtype.type):
            same |= subnormal(a) | subnormal(expected)
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
            assert_same_bits(got[op], e, x, y)
        for other, c in converted.items():
            assert_same_bits(c, x.astype(other.numpy), x)


def test_strict_float_switches_the_op_kernels_for_the_block_only():
    kernel = ew.binary_kernel  # the kernel of a / 3.0 (and of every binary op)
    a = pk.asarray(np.arange(1, 9, dtype=np.float32))
    (a / 3.0).numpy()
    before = (a / 3.0).numpy()
    with pk.strict_float():
        strict = (a / 3.0).numpy()
    after = (a / 3.0).numpy()
    modes = {key[-1] for _, key in kernel._variants}
    assert modes == {False, True}
    np.testing.assert_array_equal(strict, np.arange(1, 9, dtype=np.float32) / np.float32(3))
    # the default variant again (Vulkan lets it be 2.5 ULP off: NVIDIA's is, lavapipe's not)
    np.testing.assert_array_equal(after, before)
