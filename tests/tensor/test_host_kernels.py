"""The host device's own kernels for matmul (`gemm_host`), reductions (`reduction_host`) and the
row ops (`nn_host`), on the host device whatever PYKERN_DEVICE says: shapes that end inside a
strip, a panel, a lane block or a chunk, strided and transposed operands, every dtype the ops
take, special values, and the accuracy of the blocked sums. The Vulkan paths are tested by the
op tests on lavapipe."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.tensor.gemm import gemm_host
from pykern.tensor.reduce import reduction_host
from tensor_support import sample

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy on NaN rows


@pytest.fixture(autouse=True)
def on_host():
    previous = pk.get_device()
    host = [d for d in pk.devices() if d.kind == "host"]
    pk.set_device(host[0].index)
    try:
        yield
    finally:
        pk.set_device(previous.info.index)


def _product_bound(a: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    k = a.shape[-1]
    return (k + 2) * eps * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


# ---------------------------------------------------------------- matmul


@pytest.mark.parametrize("m,k,n", [(97, 130, 17), (1, 300, 33), (200, 1, 40), (5, 7, 300),
                                   (96, 128, 16), (193, 257, 31)])
@pytest.mark.parametrize("dtype", [pk.f32, pk.f64], ids=lambda d: d.name)
def test_matmul_strips_and_panels_end_anywhere(m, k, n, dtype):
    rng = np.random.default_rng(m * n + k)
    a, b = sample(rng, dtype, (m, k)), sample(rng, dtype, (k, n))
    got = pk.matmul(a, b).numpy()
    expected = a.astype(np.float64) @ b.astype(np.float64)
    eps = np.finfo(dtype.numpy).eps
    assert np.all(np.abs(got - expected) <= _product_bound(a, b, eps))


@pytest.mark.parametrize("dtype", [pk.i8, pk.i32, pk.u16, pk.i64, pk.bool_, pk.f16],
                         ids=lambda d: d.name)
def test_matmul_of_other_dtypes(dtype):
    rng = np.random.default_rng(3)
    a, b = sample(rng, dtype, (2, 101, 45), -3, 3), sample(rng, dtype, (45, 37), -3, 3)
    got = pk.matmul(a, b).numpy()
    if dtype == pk.f16:
        expected = a.astype(np.float64) @ b.astype(np.float64)
        bound = _product_bound(a, b, 2.0 ** -24) + np.abs(expected) * 2.0 ** -11
        assert np.all(np.abs(got - expected) <= bound)
    else:
        np.testing.assert_array_equal(got, np.matmul(a, b))


def test_matmul_of_transposed_and_strided_operands():
    rng = np.random.default_rng(4)
    a = sample(rng, pk.f32, (150, 120))
    b = sample(rng, pk.f32, (90, 200))
    ta = pk.asarray(a).mT  # (120, 150), k strided
    tb = pk.asarray(b)[::-2, ::3]  # (45, 67), negative row step
    got = pk.matmul(ta[:, :45], tb).numpy()
    expected = a.T[:, :45].astype(np.float64) @ b[::-2, ::3].astype(np.float64)
    assert np.all(np.abs(got - expected) <= _product_bound(a.T[:, :45], b[::-2, ::3],
                                                           2.0 ** -23))


def test_matmul_kernel_adds_to_the_output_when_asked():
    # K split over launches (as on a device with a loop cap) adds to what c holds
    rng = np.random.default_rng(5)
    a, b = sample(rng, pk.f32, (1, 1, 40, 30)), sample(rng, pk.f32, (1, 1, 30, 50))
    c0 = sample(rng, pk.f32, (1, 1, 40, 50))
    c = pk.asarray(c0)
    gemm_host.launch(pk.asarray(a), pk.asarray(b), c, accumulate=1)
    expected = c0 + a.astype(np.float64) @ b
    np.testing.assert_allclose(c.numpy(), expected, rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------------- reductions


@pytest.mark.parametrize("shape", [(3, 17), (5, 1025), (2, 3000), (1, 70_000), (300, 257)])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean", "var", "std"])
def test_row_reductions(shape, op):
    rng = np.random.default_rng(shape[1])
    x = rng.uniform(0.5, 1.5, shape).astype(np.float32) if op == "prod" else \
        sample(rng, pk.f32, shape)
    got = getattr(pk, op)(x, axis=1).numpy()
    expected = getattr(np, op)(x.astype(np.float64), axis=1)
    np.testing.assert_allclose(got, expected, rtol=2e-5 if op != "prod" else 1e-3,
                               atol=1e-5 * np.abs(x).sum(axis=1).max())


@pytest.mark.parametrize("shape", [(130, 7), (64, 1500), (300, 1024), (1000, 3)])
@pytest.mark.parametrize("op", ["sum", "max", "min", "mean", "var", "any", "all"])
def test_column_reductions(shape, op):
    rng = np.random.default_rng(shape[0] + shape[1])
    x = sample(rng, pk.f32, shape)
    if op in ("any", "all"):
        x = (x > 9.0).astype(np.float32) if op == "any" else (x > -9.5).astype(np.float32)
    got = getattr(pk, op)(x, axis=0).numpy()
    expected = getattr(np, op)(x.astype(np.float64), axis=0)
    if op in ("any", "all"):
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=2e-5,
                                   atol=1e-5 * np.abs(x).sum(axis=0).max())
    assert reduction_host.mode_for(op if op not in ("mean", "var") else "sum",
                                   pk.asarray(x).mT, "2d") == "columns"


@pytest.mark.parametrize("axis", [0, 1])
def test_max_and_min_propagate_nan_from_any_lane(axis):
    x = np.arange(3 * 2000, dtype=np.float32).reshape(3, 2000)
    x = x if axis == 1 else np.ascontiguousarray(x.T)
    where = [(0, 0), (1, 1999), (2, 700)]
    for i, j in where:
        x[(i, j) if axis == 1 else (j, i)] = np.nan
    for fn in (pk.max, pk.min):
        assert np.isnan(fn(x, axis=axis).numpy()).all()


def test_long_sums_are_blocked_not_serial():
    # 2^24 + 2^12 ones: a serial f32 sum stops growing at 2^24; lanes and stages are exact
    n = (1 << 24) + (1 << 12)
    assert pk.sum(pk.ones((n,), pk.f32)).numpy() == n
    x = np.ones((2, 1 << 23), np.float32)
    assert (pk.sum(x.T, axis=0).numpy() == 1 << 23).all()


def test_integer_and_f16_sums():
    rng = np.random.default_rng(6)
    x = sample(rng, pk.i16, (40, 3000), -100, 100)
    np.testing.assert_array_equal(pk.sum(x, axis=1).numpy(), x.sum(axis=1, dtype=np.int32))
    np.testing.assert_array_equal(pk.sum(x, axis=0).numpy(), x.sum(axis=0, dtype=np.int32))
    h = sample(rng, pk.f16, (20, 5000), -1, 1)
    np.testing.assert_allclose(pk.sum(h, axis=1).numpy(), h.astype(np.float64).sum(axis=1),
                               rtol=2e-3, atol=2e-2)


# ---------------------------------------------------------------- softmax, layer_norm


@pytest.mark.parametrize("dtype", [pk.f16, pk.f32, pk.f64], ids=lambda d: d.name)
@pytest.mark.parametrize("length", [17, 256, 257, 3000])
def test_softmax_rows_on_the_host(dtype, length):
    rng = np.random.default_rng(length)
    x = sample(rng, dtype, (4, length), -20, 20)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    rtol = {pk.f16: 2e-3, pk.f32: 2e-5, pk.f64: 1e-12}[dtype]
    np.testing.assert_allclose(pk.softmax(x).numpy().astype(np.float64),
                               e / e.sum(axis=1, keepdims=True), rtol=rtol, atol=1e-7)
    log = x64 - x64.max(axis=1, keepdims=True) - np.log(e.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(pk.log_softmax(x).numpy().astype(np.float64), log, rtol=rtol,
                               atol=rtol * 40)
    # along a strided axis: the columns of the transposed copy
    t = pk.asarray(np.ascontiguousarray(x.T))
    np.testing.assert_allclose(pk.softmax(t, axis=0).numpy().T.astype(np.float64),
                               e / e.sum(axis=1, keepdims=True), rtol=rtol, atol=1e-7)


def test_softmax_special_values_in_long_rows():
    x = np.zeros((4, 600), np.float32)
    x[0, 599] = np.nan  # in the last lane block: the row is NaN
    x[1, :] = -np.inf  # 0/0: NaN, as numpy
    x[2, 300:] = -np.inf  # -inf entries give 0
    x[3, 0] = np.inf  # inf - inf: NaN, as numpy
    with np.errstate(invalid="ignore"):
        m = x.max(axis=1, keepdims=True)
        e = np.exp(x.astype(np.float64) - m)
        expected = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(pk.softmax(x).numpy(), expected, rtol=1e-6, atol=1e-7,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", [pk.f16, pk.f32, pk.f64], ids=lambda d: d.name)
@pytest.mark.parametrize("length", [17, 1000, 4099])
def test_layer_norm_rows_on_the_host(dtype, length):
    rng = np.random.default_rng(length)
    x = (sample(rng, dtype, (3, length), -5, 5) + 100).astype(dtype.numpy)  # far from 0
    w = sample(rng, pk.f32, (length,))
    b = sample(rng, pk.f32, (length,))
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    y = (x64 - mean) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    rtol = {pk.f16: 4e-3, pk.f32: 1e-4, pk.f64: 1e-10}[dtype]
    got = pk.layer_norm(x, length, w, b).numpy().astype(np.float64)
    np.testing.assert_allclose(got, y * w + b, rtol=rtol, atol=rtol * 30)
    np.testing.assert_allclose(pk.layer_norm(x, length).numpy().astype(np.float64), y,
                               rtol=rtol, atol=rtol * 10)
