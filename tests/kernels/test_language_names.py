"""Every math name of the kernel language exists as `pk.<name>` and works inside kernels, also
those that name tensor functions outside kernels (`pk.abs`, `pk.min`, `pk.max`, `pk.exp`, ...):
one object serves both."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk
from pykern.lang import builtins as bi

MATH_NAMES = ("sqrt rsqrt exp exp2 log log2 sin cos tan asin acos atan atan2 sinh cosh tanh erf "
              "pow floor ceil trunc round fma abs min max clamp isnan isinf copysign "
              "select").split()


@pk.kernel
def every_name(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:, :]):
    i = pk.global_id(0)
    a = x[i]
    b = y[i]
    out[i, 0] = pk.sqrt(a)
    out[i, 1] = pk.rsqrt(a)
    out[i, 2] = pk.exp(a)
    out[i, 3] = pk.exp2(a)
    out[i, 4] = pk.log(a)
    out[i, 5] = pk.log2(a)
    out[i, 6] = pk.sin(a)
    out[i, 7] = pk.cos(a)
    out[i, 8] = pk.tan(a)
    out[i, 9] = pk.asin(a)
    out[i, 10] = pk.acos(a)
    out[i, 11] = pk.atan(a)
    out[i, 12] = pk.atan2(a, b)
    out[i, 13] = pk.sinh(a)
    out[i, 14] = pk.cosh(a)
    out[i, 15] = pk.tanh(a)
    out[i, 16] = pk.erf(a)
    out[i, 17] = pk.pow(a, b)
    out[i, 18] = pk.floor(4.0 * b)
    out[i, 19] = pk.ceil(4.0 * b)
    out[i, 20] = pk.trunc(-4.0 * b)
    out[i, 21] = pk.round(4.0 * b)
    out[i, 22] = pk.fma(a, b, 0.25)
    out[i, 23] = pk.abs(a - b)
    out[i, 24] = pk.min(a, b)
    out[i, 25] = pk.max(a, b, 0.5)
    out[i, 26] = pk.clamp(b, 0.3, 0.6)
    out[i, 27] = pk.f32(pk.isnan(a / (b - b)))
    out[i, 28] = pk.f32(pk.isinf(a / (b - b)))
    out[i, 29] = pk.copysign(a, 0.5 - b)
    out[i, 30] = pk.select(a > b, a, b)


def numpy_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        zero_division = a64 / (b64 - b64)
    erf = np.vectorize(math.erf)
    columns = [
        np.sqrt(a64), 1 / np.sqrt(a64), np.exp(a64), np.exp2(a64), np.log(a64), np.log2(a64),
        np.sin(a64), np.cos(a64), np.tan(a64), np.arcsin(a64), np.arccos(a64), np.arctan(a64),
        np.arctan2(a64, b64), np.sinh(a64), np.cosh(a64), np.tanh(a64), erf(a64),
        np.power(a64, b64), np.floor(4 * b64), np.ceil(4 * b64), np.trunc(-4 * b64),
        np.round(4 * b64), a64 * b64 + 0.25, np.abs(a64 - b64), np.minimum(a64, b64),
        np.maximum(np.maximum(a64, b64), 0.5), np.clip(b64, 0.3, 0.6),
        np.isnan(zero_division), np.isinf(zero_division), np.copysign(a64, 0.5 - b64),
        np.where(a64 > b64, a64, b64),
    ]
    return np.stack(columns, axis=1)


def test_the_kernel_uses_every_name():
    assert len(MATH_NAMES) == 31
    source = every_name.source.text
    for name in MATH_NAMES:
        assert f"pk.{name}(" in source, name


def test_every_math_name_inside_a_kernel_matches_numpy():
    rng = np.random.default_rng(3)
    n = 64
    a = rng.uniform(0.1, 0.9, n).astype(np.float32)
    b = rng.uniform(0.1, 0.9, n).astype(np.float32)
    b[:4] = [0.125, 0.375, 0.625, 0.875]  # 4b at halves: round goes to even
    out = np.zeros((n, len(MATH_NAMES)), np.float32)
    every_name[n](a, b, out)
    ref = numpy_reference(a, b)
    # Vulkan's bounds (docs/testing.md): exact for the exact ops, a few ULP to 4096 ULP elsewhere
    for k, name in enumerate(MATH_NAMES):
        np.testing.assert_allclose(out[:, k], ref[:, k], rtol=4e-4, atol=1e-6, err_msg=name)
    exact = ["floor", "ceil", "trunc", "round", "abs", "min", "max", "clamp", "isnan", "isinf",
             "copysign", "select"]
    for name in exact:
        k = MATH_NAMES.index(name)
        np.testing.assert_array_equal(out[:, k], ref[:, k].astype(np.float32), err_msg=name)


def test_every_name_is_one_kernel_builtin_object():
    for name in MATH_NAMES:
        obj = getattr(pk, name)
        assert obj is getattr(bi, name), name
        assert isinstance(obj, bi.KernelBuiltin), name


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_abs_min_max_inside_kernels_for_every_numeric_type(interpret):
    @pk.kernel(interpret=interpret)
    def k(x: pk.Array, y: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[i, 0] = pk.abs(x[i])
        out[i, 1] = pk.min(x[i], y[i])
        out[i, 2] = pk.max(x[i], y[i], 0)

    for dtype in (np.int32, np.float32):
        x = np.array([-3, 5, 0, -1], dtype)
        y = np.array([2, -7, 0, 4], dtype)
        out = np.zeros((4, 3), dtype)
        k[4](x, y, out)
        np.testing.assert_array_equal(out[:, 0], np.abs(x))
        np.testing.assert_array_equal(out[:, 1], np.minimum(x, y))
        np.testing.assert_array_equal(out[:, 2], np.maximum(np.maximum(x, y), 0))


def test_outside_kernels_the_same_names_are_tensor_functions():
    t = pk.asarray(np.array([[-1.5, 2.0], [3.0, -4.0]], np.float32))
    assert isinstance(pk.abs(t), pk.Tensor)
    np.testing.assert_array_equal(pk.abs(t).numpy(), [[1.5, 2.0], [3.0, 4.0]])
    assert float(pk.max(t)) == 3.0 and float(pk.min(t)) == -4.0  # reductions
    np.testing.assert_array_equal(pk.max(t, axis=0).numpy(), [3.0, 2.0])
    np.testing.assert_array_equal(pk.min(t, axis=1, keepdims=True).numpy(), [[-1.5], [-4.0]])
    out = pk.empty((2, 2))
    pk.sqrt(pk.abs(t), out=out)  # keyword arguments of the tensor function
    np.testing.assert_allclose(out.numpy(), np.sqrt(np.abs(t.numpy())), rtol=1e-6)
    np.testing.assert_array_equal(pk.clamp(t, -1.0, 1.0).numpy(), np.clip(t.numpy(), -1, 1))
    np.testing.assert_array_equal(pk.select(t > 0.0, t, 0.0).numpy(),
                                  np.where(t.numpy() > 0, t.numpy(), 0))


def test_on_numbers_they_compute_on_the_host():
    assert pk.abs(-2) == 2 and pk.min(3, 1, 2) == 1 and pk.max(1.5, -2.0) == 1.5
    assert pk.exp(0.0) == 1.0 and pk.clamp(5, 0, 3) == 3 and pk.select(False, 1, 2) == 2
    assert pk.sqrt(np.float32(4.0)) == 2.0
