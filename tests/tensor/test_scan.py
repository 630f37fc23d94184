"""cumsum against numpy: hypothesis over shapes with 0- and 1-sized dimensions, every axis and
axis=None, every dtype and layout, explicit result dtypes; the sequential per-row kernel (bit
for bit numpy's order for f32/f64) and the blocked scan over long rows (several levels)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.tensor.reduce import scan
from pykern.ops.choice import choose_as

from ops_inputs import ALL, EPS, layouts, make, seeds

shapes = st.lists(st.integers(0, 6), min_size=1, max_size=4).map(tuple)


def expected_dtype(d: pk.DType) -> pk.DType:
    """The array API's: the default integer dtype (i32) for signed ints and bool, the unsigned
    dtype of its width (u32) for unsigned ones, 64-bit ones and floats as they are."""
    if d in (pk.i64, pk.u64) or d.is_float:
        return d
    return pk.u32 if d.kind == "u" else pk.i32


def check(got: pk.Tensor, x: np.ndarray, axis: int | None, out_dtype: pk.DType) -> None:
    assert got.dtype == out_dtype
    xs = x.astype(out_dtype.numpy)
    if out_dtype.is_float:
        ref = np.cumsum(xs.astype(np.float64), axis=axis)
        mag = np.cumsum(np.abs(xs).astype(np.float64), axis=axis)
        n = max(x.size if axis is None else x.shape[axis], 1)
        acc = EPS[pk.f32] if out_dtype == pk.f16 else EPS[out_dtype]
        tol = 2 * n * acc * mag + EPS[out_dtype] * np.abs(ref)
        err = np.abs(got.numpy().astype(np.float64) - ref)
        assert got.shape == ref.shape and (err <= tol).all(), err.max()
    else:
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(got.numpy(), np.cumsum(xs, axis=axis,
                                                                 dtype=out_dtype.numpy))


@settings(max_examples=30, deadline=None)
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(ALL), layout=layouts, seed=seeds)
def test_cumsum(shape, data, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    x, t = make(rng, dtype, shape, layout)
    check(pk.cumsum(t, axis=axis), x, axis, expected_dtype(dtype))


@pytest.mark.parametrize("dtype,out", [(pk.f32, pk.f64), (pk.i32, pk.i32), (pk.bool_, pk.u8),
                                       (pk.f64, pk.f32), (pk.i8, pk.i8)],
                         ids=lambda d: d.name)
def test_explicit_dtype(dtype, out):
    rng = np.random.default_rng(15)
    x = rng.integers(-100, 100, (5, 40)).astype(dtype.numpy)
    check(pk.cumsum(x, axis=1, dtype=out), x, 1, out)


def test_sequential_rows_match_numpy_bit_for_bit():
    rng = np.random.default_rng(16)
    x = rng.standard_normal((7, 60)).astype(np.float32)  # short rows: in order on every device
    np.testing.assert_array_equal(pk.cumsum(x, axis=1).numpy(), np.cumsum(x, axis=1))


@pytest.mark.parametrize("length", [65, 257, 1024, 1025, 5000])
@pytest.mark.parametrize("dtype", [pk.f32, pk.i32, pk.f16], ids=lambda d: d.name)
def test_long_rows_blocked_scan(length, dtype):
    rng = np.random.default_rng(length)
    x = rng.integers(-50, 50, (3, length)).astype(dtype.numpy)
    check(pk.cumsum(x, axis=1), x, 1, expected_dtype(dtype))
    xt = np.ascontiguousarray(x.T)  # the scanned axis strided
    t = pk.Tensor(pk.asarray(xt).buffer, x.shape, pk.asarray(xt).dtype, (1, 3), 0)
    check(pk.cumsum(t, axis=1), x, 1, expected_dtype(dtype))


def test_gpu_rule_blocked_scan_of_medium_rows():
    rng = np.random.default_rng(18)
    x = rng.integers(-9, 9, (3000, 70)).astype(np.float32)
    with choose_as("cumsum", kind="discrete"):  # rows > 64: the blocked scan
        check(pk.cumsum(x, axis=1), x, 1, pk.f32)
        check(pk.cumsum(x, axis=0), x, 0, pk.f32)


def test_many_blocks_recursive_scan(monkeypatch):
    monkeypatch.setattr(scan, "loop_budget", lambda: 100)  # rows > 100: the blocked scan
    rng = np.random.default_rng(17)
    x = rng.integers(-9, 9, 1024 * 300 + 7).astype(np.int64)  # 301 blocks: a second level
    check(pk.cumsum(x), x, None, pk.i64)


def test_errors():
    with pytest.raises(ValueError, match="out of range"):
        pk.cumsum(np.ones((2, 3), np.float32), axis=2)
    with pytest.raises(ValueError, match="0-d"):
        pk.cumsum(pk.asarray(np.float32(1)), axis=0)
    with pytest.raises(TypeError, match="not a pykern dtype"):
        pk.cumsum(np.ones(3, np.float32), dtype="U4")
