"""Reductions against numpy: every op over hypothesis shapes (0- and 1-size dimensions), axes
(None, int, tuple, negative), keepdims and views; accumulator dtypes; long reductions split
into partial passes; empty reductions; nan; errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_support import sample, shapes, views

import pykern as pk
from pykern.ops.choice import config, device_info

rng = np.random.default_rng(17)


@st.composite
def axes_for(draw, ndim):
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or ndim == 0:
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in picked)


def _reduced_size(shape, axis):
    if axis is None:
        return int(np.prod(shape))
    axes = (axis,) if isinstance(axis, int) else axis
    return int(np.prod([shape[a] for a in axes]))


OPS = {
    "sum": (np.sum, 1e-5),
    "prod": (np.prod, 1e-5),
    "mean": (np.mean, 1e-5),
    "var": (np.var, 1e-4),
    "std": (np.std, 1e-4),
    "max": (np.max, 0),
    "min": (np.min, 0),
    "any": (np.any, 0),
    "all": (np.all, 0),
}


@pytest.mark.parametrize("name", list(OPS))
@settings(max_examples=20, deadline=None)
@given(data=st.data(), shape=shapes, keepdims=st.booleans())
def test_reductions_f32(name, data, shape, keepdims):
    ref, rtol = OPS[name]
    low, high = (0.5, 1.5) if name == "prod" else (-10, 10)
    a, t = data.draw(views(shape, pk.f32, low, high))
    if name in ("any", "all"):  # some zeros
        a = np.where(np.abs(a) < 3, 0, a).astype(np.float32)
        t = pk.asarray(a)
    axis = data.draw(axes_for(len(shape)))
    empty = _reduced_size(shape, axis) == 0
    if empty and name in ("max", "min"):
        with pytest.raises(ValueError, match="no identity"):
            getattr(pk, name)(t, axis=axis, keepdims=keepdims)
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # numpy warns about empty means
        expected = ref(a.astype(np.float64), axis=axis, keepdims=keepdims)
    out = getattr(pk, name)(t, axis=axis, keepdims=keepdims)
    assert out.shape == expected.shape
    assert out.dtype == (pk.bool_ if name in ("any", "all") else pk.f32)
    scale = np.sum(np.abs(a.astype(np.float64)), axis=axis, keepdims=keepdims) + 1
    if name in ("sum", "mean"):  # tree reduction: error ~ log2(n) eps sum|x|
        atol = 1e-6 * scale / max(_reduced_size(shape, axis), 1) ** (name == "mean")
        np.testing.assert_allclose(out.numpy(), expected, rtol=rtol,
                                   atol=np.max(atol, initial=0))
    else:
        np.testing.assert_allclose(out.numpy(), expected, rtol=rtol, atol=1e-5 if rtol else 0,
                                   equal_nan=True)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@settings(max_examples=25, deadline=None)
@given(data=st.data(), shape=shapes, keepdims=st.booleans())
def test_argmax_argmin(name, data, shape, keepdims):
    a, t = data.draw(views(shape, pk.f32))
    a = np.round(a / 4).astype(np.float32)  # ties
    t = pk.asarray(a)
    axis = None if not shape or data.draw(st.booleans()) else \
        data.draw(st.integers(-len(shape), len(shape) - 1))
    if _reduced_size(shape, axis) == 0:
        with pytest.raises(ValueError, match="empty"):
            getattr(pk, name)(t, axis=axis)
        return
    out = getattr(pk, name)(t, axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    assert out.dtype == pk.i64 and out.shape == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


# the array API's result dtypes with pykern's default integer dtype i32: signed ints (and bool)
# give i32, unsigned ones u32, unless 64 bits already; floats keep their dtype
SUM_DTYPES = [(pk.bool_, pk.i32), (pk.i8, pk.i32), (pk.i16, pk.i32), (pk.i32, pk.i32),
              (pk.i64, pk.i64), (pk.u8, pk.u32), (pk.u16, pk.u32), (pk.u32, pk.u32),
              (pk.u64, pk.u64), (pk.f16, pk.f16), (pk.f32, pk.f32), (pk.f64, pk.f64)]


def _sum_inputs(dtype, shape):
    """Large values: sums overflow the input type, and for 32-bit results wrap at 32 bits."""
    if dtype == pk.bool_ or dtype.is_float:
        return sample(rng, dtype, shape, 0, 120)
    info = np.iinfo(dtype.numpy)
    lo = max(int(info.min), -(2**31)) if dtype.kind == "i" else 0
    hi = min(int(info.max), 2**31 - 1)
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype.numpy)


@pytest.mark.parametrize("dtype,expected", SUM_DTYPES, ids=lambda d: d.name)
def test_sum_prod_cumsum_result_dtypes_are_the_standards(dtype, expected):
    a = _sum_inputs(dtype, (6, 50))
    t = pk.asarray(a)
    s, p, c = t.sum(axis=1), pk.asarray(a[:, :3]).prod(axis=1), pk.cumsum(t, axis=1)
    assert s.dtype == p.dtype == c.dtype == expected
    assert pk.array_api.cumulative_sum(t, axis=1).dtype == expected
    with np.errstate(over="ignore"):
        if dtype == pk.f16:  # pykern accumulates f16 in f32, so it is at least as close
            np.testing.assert_allclose(s.numpy(), a.astype(np.float64).sum(axis=1), rtol=1e-3)
            return
        if dtype.is_float:
            np.testing.assert_allclose(s.numpy(), a.sum(axis=1), rtol=1e-5)
            return
        # integers wrap in the result dtype, as numpy's with that dtype
        np.testing.assert_array_equal(s.numpy(), a.sum(axis=1, dtype=expected.numpy))
        np.testing.assert_array_equal(p.numpy(), a[:, :3].prod(axis=1, dtype=expected.numpy))
        np.testing.assert_array_equal(c.numpy(), a.cumsum(axis=1, dtype=expected.numpy))
    assert t.sum(dtype=pk.i16).dtype == pk.i16
    assert t.sum(dtype=pk.i64).dtype == pk.i64


@pytest.mark.parametrize("dtype", [pk.i8, pk.u8, pk.i16, pk.i32, pk.u32, pk.i64, pk.f32])
def test_vecdot_keeps_the_input_dtype(dtype):
    a, b = _sum_inputs(dtype, (4, 30)), _sum_inputs(dtype, (30,))
    got = pk.array_api.vecdot(pk.asarray(a), pk.asarray(b))
    assert got.dtype == dtype
    with np.errstate(over="ignore"):
        if dtype.is_float:
            np.testing.assert_allclose(got.numpy(), a.astype(np.float64) @ b, rtol=1e-5)
        else:  # wrapping in the input dtype, as numpy's matmul of that dtype
            np.testing.assert_array_equal(got.numpy(), a @ b)
    m = pk.asarray(rng.integers(0, 2, (3, 5)).astype(bool))
    v = pk.array_api.vecdot(m, m)
    assert v.dtype == pk.bool_
    np.testing.assert_array_equal(v.numpy(), m.numpy().any(axis=1))


def test_integer_means_and_counts_stay_exact_in_64_bits():
    a = np.full((2, 40), 2**31 - 1, np.int32)  # the i32 sum wraps, the mean must not
    np.testing.assert_allclose(pk.mean(pk.asarray(a), axis=1).numpy(), a.mean(axis=1))
    # 64-bit values whose 64-bit sum wraps: the mean is still exact up to its f32 rounding
    big = np.array([[2**62, 2**62, 2**62], [-2**63, -2**63, -2**63], [-2**63, 2**63 - 1, -1]])
    expected = [2.0**62, -2.0**63, -2.0 / 3]
    for t in (pk.asarray(big), pk.asarray(np.ascontiguousarray(big.T)).T):
        np.testing.assert_allclose(pk.mean(t, axis=1).numpy(), expected, rtol=3e-7)
    u = pk.asarray(np.array([2**64 - 1, 2**63 + 5, 2**63], np.uint64))
    np.testing.assert_allclose(pk.mean(u, keepdims=True).numpy(), [(2**64 + 2**64 + 4) / 3],
                               rtol=3e-7)
    m = pk.asarray(a > 0)
    assert pk.count_nonzero(m).dtype == pk.i64  # the standard's default index dtype
    assert int(pk.count_nonzero(m)) == 80


@pytest.mark.parametrize("dtype", [pk.i32, pk.u8, pk.f16, pk.f64, pk.i64, pk.bool_])
def test_other_reductions_by_dtype(dtype):
    a = sample(rng, dtype, (5, 40), -50, 50)
    t = pk.asarray(a).T
    at = a.T
    if dtype != pk.bool_:
        np.testing.assert_array_equal(t.max(axis=0).numpy(), at.max(axis=0))
        np.testing.assert_array_equal(t.min(axis=(0,)).numpy(), at.min(axis=0))
    np.testing.assert_array_equal(t.argmax(axis=0).numpy(), at.argmax(axis=0))
    np.testing.assert_array_equal(t.argmin(axis=1).numpy(), at.argmin(axis=1))
    np.testing.assert_array_equal(t.any(axis=1).numpy(), at.any(axis=1))
    np.testing.assert_array_equal(t.all(axis=0).numpy(), at.all(axis=0))
    m = t.mean(axis=0)
    assert m.dtype == (dtype if dtype.is_float else pk.f32)
    np.testing.assert_allclose(m.numpy(), at.astype(np.float64).mean(axis=0),
                               rtol=2e-3 if dtype == pk.f16 else 1e-6)
    v = t.var(axis=0, correction=1)
    np.testing.assert_allclose(v.numpy(), at.astype(np.float64).var(axis=0, ddof=1),
                               rtol=2e-3 if dtype == pk.f16 else 1e-5)


def test_bool_max_min_are_any_all():
    a = np.array([[True, False], [False, False]])
    t = pk.asarray(a)
    assert t.max(axis=1).tolist() == [True, False] and t.min().item() is False


def test_long_reductions_use_partial_passes():
    cfg = config("reduce", device_info("reduce"))
    n = cfg.wg * cfg.group_share * 5 + 123  # five chunks of the portable kernel and a bit
    a = rng.standard_normal(n).astype(np.float32)
    a[n - 7] = 50.0
    a[12345] = -50.0
    t = pk.asarray(a)
    np.testing.assert_allclose(t.sum().item(), a.astype(np.float64).sum(),
                               atol=1e-6 * np.abs(a).sum())
    assert t.argmax().item() == n - 7 and t.argmin().item() == 12345
    assert t.max().item() == 50.0 and t.min().item() == -50.0
    np.testing.assert_allclose(t.var().item(), a.astype(np.float64).var(), rtol=1e-4)
    two = pk.asarray(np.stack([a, -a]))[:, ::-1]
    np.testing.assert_array_equal(two.argmax(axis=1).numpy(), [6, n - 12346])
    big = pk.asarray((a > 0).astype(np.int32))
    assert big.sum().item() == int((a > 0).sum()) and big.any().item() and not big.all().item()


def test_column_reductions_run_one_invocation_per_output_and_chunk():
    cfg = config("reduce", device_info("reduce"))
    a = rng.standard_normal((2 * cfg.thread_chunk + 5, 300)).astype(np.float32)
    a[4100, 7] = 40.0
    t = pk.asarray(a)
    np.testing.assert_allclose(t.sum(axis=0).numpy(), a.astype(np.float64).sum(axis=0),
                               atol=1e-6 * np.abs(a).sum(axis=0).max())
    np.testing.assert_array_equal(t.argmax(axis=0).numpy(), a.argmax(axis=0))
    np.testing.assert_array_equal(t.max(axis=0).numpy(), a.max(axis=0))
    np.testing.assert_allclose(t.var(axis=0).numpy(), a.astype(np.float64).var(axis=0),
                               rtol=1e-4)
    np.testing.assert_allclose(t[::-2].mean(axis=0, keepdims=True).numpy(),
                               a[::-2].astype(np.float64).mean(axis=0, keepdims=True), atol=1e-5)


def test_var_is_stable_far_from_zero():
    a = (1e4 + rng.standard_normal(1000)).astype(np.float32)
    np.testing.assert_allclose(pk.asarray(a).var().item(), a.astype(np.float64).var(), rtol=1e-3)
    np.testing.assert_allclose(pk.asarray(a).std(ddof=1).item(),
                               a.astype(np.float64).std(ddof=1), rtol=1e-3)


def test_nan_propagates_and_argmax_finds_the_first_nan():
    a = np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 2.0, 9.0, 0.0]], np.float32)
    t = pk.asarray(a)
    np.testing.assert_array_equal(t.max(axis=1).numpy(), np.max(a, axis=1))
    np.testing.assert_array_equal(t.min(axis=1).numpy(), np.min(a, axis=1))
    np.testing.assert_array_equal(t.argmax(axis=1).numpy(), np.argmax(a, axis=1))
    np.testing.assert_array_equal(t.argmin(axis=1).numpy(), np.argmin(a, axis=1))
    assert np.isnan(t.sum().item())


def test_empty_reductions_follow_numpy():
    e = pk.zeros((0, 3))
    assert e.sum().item() == 0 and e.prod().item() == 1
    np.testing.assert_array_equal(e.sum(axis=0).numpy(), [0, 0, 0])
    assert e.sum(axis=1).shape == (0,)
    assert e.max(axis=1).shape == (0,)  # nothing to reduce over, nothing to output
    assert e.any().item() is False and e.all().item() is True
    with warnings.catch_warnings():
        assert np.isnan(e.mean().item()) and np.isnan(e.var(axis=0).numpy()).all()
    with pytest.raises(ValueError, match="no identity"):
        e.max()
    with pytest.raises(ValueError, match="no identity"):
        e.min(axis=0)
    with pytest.raises(ValueError, match="empty"):
        e.argmax()
    b = pk.zeros((0, 3), dtype=pk.bool_)  # bool max/min are any/all, but still need an element
    assert b.max(axis=1).shape == (0,)
    for reduce in (lambda: b.max(), lambda: b.min(axis=0), lambda: pk.max(b, axis=(0, 1))):
        with pytest.raises(ValueError, match="no identity"):
            reduce()


def test_reduction_errors():
    t = pk.zeros((2, 3))
    with pytest.raises(ValueError, match="axis 2 is out of range for a tensor of 2"):
        t.sum(axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        t.sum(axis=(0, -2))
    with pytest.raises(TypeError, match="axis must be an int or None"):
        t.argmax(axis=(0, 1))
    with pytest.raises(TypeError, match="axis must be an int"):
        t.mean(axis=1.0)
    assert pk.sum(pk.asarray(3.0)).item() == 3.0  # 0-d input
    assert pk.sum([[1, 2], [3, 4]], axis=0).tolist() == [4, 6]
