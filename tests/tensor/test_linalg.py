"""pk.matmul against numpy: every dtype, mixed dtypes, 1-d operands, broadcasting batch
dimensions, 0- and 1-sized dimensions, transposed/strided/broadcast operands, each kernel
(one output per invocation, register-blocked, shared-memory tiled in two tilings), K split
into several launches, and argument errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.tensor.gemm import matmul as linalg

from ops_inputs import ALL, EPS, layouts, make, seeds

KERNELS = {"auto": None, "registers": linalg.CPU_TILE, "tiled64": linalg.GPU_SMALL,
           "tiled64x128": linalg.GPU_TILE, "tiled64k16": linalg.TileConfig(16, 16, 4, 4, 16)}


def reference(a: np.ndarray, b: np.ndarray, out_dtype: pk.DType) -> np.ndarray:
    if out_dtype == pk.bool_:
        return np.matmul(a, b)
    if out_dtype.is_float:
        return np.matmul(a.astype(np.float64), b.astype(np.float64))
    with np.errstate(over="ignore"):
        return np.matmul(a.astype(out_dtype.numpy), b.astype(out_dtype.numpy))


def check(got: np.ndarray, a: np.ndarray, b: np.ndarray, out_dtype: pk.DType) -> None:
    expected = reference(a, b, out_dtype)
    assert got.shape == expected.shape and got.dtype == out_dtype.numpy
    if not out_dtype.is_float:
        np.testing.assert_array_equal(got, expected)
        return
    # each output sums K products in the accumulator's precision (f32 for f16), then rounds
    k = a.shape[-1]
    acc_eps = EPS[pk.f64] if out_dtype == pk.f64 else EPS[pk.f32]
    mag = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    tol = 2 * (k + 1) * acc_eps * mag + EPS[out_dtype] * np.abs(expected) + 1e-30
    err = np.abs(got.astype(np.float64) - expected)
    assert (err <= tol).all(), f"max error {err.max()} (tolerance {tol.max()})"


@pytest.fixture
def kernel(request, monkeypatch):
    monkeypatch.setattr(linalg, "FORCE_CONFIG", KERNELS[request.param])
    return request.param


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
def test_every_dtype(dtype):
    rng = np.random.default_rng(1)
    for m, k, n in ((3, 5, 4), (37, 19, 21)):  # one output per invocation; blocked kernel
        a = rng.integers(-3, 4, (m, k)) if dtype.kind == "i" else rng.integers(0, 4, (m, k))
        b = rng.integers(-3, 4, (k, n)) if dtype.kind == "i" else rng.integers(0, 4, (k, n))
        a, b = a.astype(dtype.numpy), b.astype(dtype.numpy)
        check(pk.matmul(pk.asarray(a), pk.asarray(b)).numpy(), a, b, dtype)


def test_integer_products_wrap_as_numpy():
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (20, 30)).astype(np.int8)
    b = rng.integers(-128, 128, (30, 17)).astype(np.int8)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(pk.matmul(a, b).numpy(), np.matmul(a, b))
    u = rng.integers(0, 2**32, (20, 30), dtype=np.uint64).astype(np.uint32)
    v = rng.integers(0, 2**32, (30, 17), dtype=np.uint64).astype(np.uint32)
    np.testing.assert_array_equal(pk.matmul(u, v).numpy(), np.matmul(u, v))


@pytest.mark.parametrize("da,db", [(pk.f16, pk.f32), (pk.i32, pk.f32), (pk.i8, pk.u8),
                                   (pk.bool_, pk.i16), (pk.f32, pk.f64)],
                         ids=lambda d: d.name)
def test_mixed_dtypes_promote(da, db):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, (9, 40)).astype(da.numpy)
    b = rng.integers(0, 4, (40, 33)).astype(db.numpy)
    out = pk.matmul(pk.asarray(a), pk.asarray(b))
    assert out.dtype == pk.result_type(da, db)
    check(out.numpy(), a, b, out.dtype)


@pytest.mark.parametrize("kernel", list(KERNELS), indirect=True)
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.integers(0, 70), k=st.integers(0, 40), n=st.integers(0, 70),
       batch_a=st.lists(st.integers(1, 3), max_size=2), batch_b=st.lists(st.integers(1, 3),
                                                                          max_size=2),
       la=layouts, lb=layouts, seed=seeds)
def test_shapes_batches_and_layouts(kernel, m, k, n, batch_a, batch_b, la, lb, seed):
    rng = np.random.default_rng(seed)
    # batch dims that broadcast: where both have a dim, make them equal or one of them 1
    nb = min(len(batch_a), len(batch_b))
    for i in range(1, nb + 1):
        if batch_a[-i] != batch_b[-i] and batch_b[-i] != 1:
            batch_a[-i] = 1
    a, ta = make(rng, pk.f32, tuple(batch_a) + (m, k), la)
    b, tb = make(rng, pk.f32, tuple(batch_b) + (k, n), lb)
    check(pk.matmul(ta, tb).numpy(), a, b, pk.f32)


@pytest.mark.parametrize("kernel", ["auto", "tiled64"], indirect=True)
@pytest.mark.parametrize("sa,sb", [((7,), (7,)), ((7,), (7, 5)), ((4, 7), (7,)),
                                   ((2, 3, 7), (7,)), ((7,), (3, 7, 300)), ((1,), (1, 1)),
                                   ((0,), (0,)), ((3, 0), (0,))])
def test_one_dimensional_operands(kernel, sa, sb):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    got = pk.matmul(pk.asarray(a), pk.asarray(b))
    assert got.shape == np.matmul(a, b).shape
    check(got.numpy(), a, b, pk.f32)


@pytest.mark.parametrize("dtype", [pk.f16, pk.f64, pk.i32, pk.u8], ids=lambda d: d.name)
def test_tiled_kernel_other_dtypes_and_transposed_operands(dtype, monkeypatch):
    monkeypatch.setattr(linalg, "FORCE_CONFIG", linalg.GPU_SMALL)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 5, (70, 45)).astype(dtype.numpy)
    b = rng.integers(0, 5, (45, 66)).astype(dtype.numpy)
    ta = pk.asarray(np.ascontiguousarray(a.T))
    ta = pk.Tensor(ta.buffer, a.shape, ta.dtype, ta.element_strides[::-1], 0)
    tb = pk.asarray(np.ascontiguousarray(b.T))
    tb = pk.Tensor(tb.buffer, b.shape, tb.dtype, tb.element_strides[::-1], 0)
    check(pk.matmul(ta, tb).numpy(), a, b, dtype)


def test_k_split_into_several_launches(monkeypatch):
    # a tiny loop budget forces the K loop to be cut into chunks that accumulate
    monkeypatch.setattr(linalg, "loop_budget", lambda: 3)
    rng = np.random.default_rng(6)
    for cfg in (None, linalg.GPU_SMALL):
        monkeypatch.setattr(linalg, "FORCE_CONFIG", cfg)
        a = rng.standard_normal((2, 20, 100)).astype(np.float32)
        b = rng.standard_normal((100, 24)).astype(np.float32)
        check(pk.matmul(a, b).numpy(), a, b, pk.f32)
        ai = rng.integers(-9, 9, (5, 77)).astype(np.int32)
        bi = rng.integers(-9, 9, (77, 60)).astype(np.int32)
        check(pk.matmul(ai, bi).numpy(), ai, bi, pk.i32)


def test_many_batch_dimensions_and_operator():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 1, 3, 2, 5, 6)).astype(np.float32)
    b = rng.standard_normal((3, 1, 6, 4)).astype(np.float32)
    ta = pk.asarray(a)
    check(pk.matmul(ta, b).numpy(), a, b, pk.f32)
    check((ta @ pk.asarray(b)).numpy(), a, b, pk.f32)


def test_inputs_are_left_intact():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    ta = pk.asarray(a)
    pk.matmul(ta, ta.numpy().T.copy())
    np.testing.assert_array_equal(ta.numpy(), a)


@pytest.mark.parametrize("sa,sb,error,match", [
    ((3, 4), (5, 6), ValueError, "do not match"),
    ((), (3,), ValueError, "0-d"),
    ((2, 3, 4), (3, 4, 5), ValueError, "cannot be broadcast"),
    ((4,), (5,), ValueError, "do not match"),
])
def test_errors(sa, sb, error, match):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    with pytest.raises(error, match=match):
        pk.matmul(pk.asarray(a), pk.asarray(b))


def test_non_tensor_operand_is_a_type_error():
    with pytest.raises(TypeError, match="matmul"):
        pk.matmul(pk.asarray(np.ones((2, 2), np.float32)), "x")
