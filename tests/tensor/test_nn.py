"""softmax, log_softmax, layer_norm, attention and one_hot against numpy
re-implementations in float64: hypothesis over shapes (0- and 1-sized dimensions, every axis,
short rows and long ones), float dtypes and layouts (transposed, strided, broadcast), special
values, and argument errors (the convolutions: test_conv.py)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk

from ops_inputs import FLOATS, INTS, layouts, make, sample, seeds

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy on empty/NaN rows

shapes = st.lists(st.integers(0, 5), min_size=1, max_size=4).map(tuple)


def ref_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True, initial=-np.inf)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def ref_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True, initial=-np.inf)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def close(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> None:
    assert got.shape == expected.shape
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=rtol, atol=atol,
                               equal_nan=True)


# relative error of exp (a few ULP over small |x|) plus the row sums, in the compute precision,
# plus the output rounding
SOFTMAX_RTOL = {pk.f16: 2e-3, pk.f32: 2e-5, pk.f64: 1e-12}


# ---------------------------------------------------------------- softmax family

@settings(max_examples=25, deadline=None)
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(FLOATS), layout=layouts, seed=seeds,
       log=st.booleans())
def test_softmax_and_log_softmax(shape, data, dtype, layout, seed, log):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x, t = make(rng, dtype, shape, layout, -8, 8)
    if log:
        got = pk.log_softmax(t, axis=axis)
        expected = ref_log_softmax(x, axis)
        atol = SOFTMAX_RTOL[dtype] * (1 + np.abs(x.astype(np.float64)).max(initial=0)) * 2
        close(got.numpy(), expected, SOFTMAX_RTOL[dtype], atol)
    else:
        got = pk.softmax(t, axis=axis)
        close(got.numpy(), ref_softmax(x, axis), SOFTMAX_RTOL[dtype], 1e-7)
    assert got.dtype == dtype and got.shape == tuple(shape)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("length", [1, 16, 17, 300, 5000])
def test_softmax_row_lengths(dtype, length):
    rng = np.random.default_rng(length)
    x = sample(rng, dtype, (3, length), -20, 20)
    close(pk.softmax(x, axis=1).numpy(), ref_softmax(x, 1), SOFTMAX_RTOL[dtype], 1e-7)
    atol = SOFTMAX_RTOL[dtype] * 40
    close(pk.log_softmax(x).numpy(), ref_log_softmax(x, -1), SOFTMAX_RTOL[dtype], atol)


@pytest.mark.parametrize("length", [5, 100])
def test_softmax_special_values(length):
    x = np.zeros((5, length), np.float32)
    x[0, 1] = np.nan  # NaN anywhere: the row is NaN, as numpy
    x[1, :] = -np.inf  # all -inf: NaN (0/0), as numpy
    x[2, 1:] = -np.inf  # -inf entries give 0 and the rest still normalises
    x[3, 2] = 1e30  # huge values: 1 there, 0 elsewhere
    x[4, :] = -1e30
    with np.errstate(invalid="ignore"):
        expected = ref_softmax(x, 1)
        expected_log = ref_log_softmax(x, 1)
    close(pk.softmax(x).numpy(), expected, 1e-6, 1e-7)
    close(pk.log_softmax(x).numpy(), expected_log, 1e-6, 1e-7)


def test_log_softmax_stays_finite_far_from_the_max():
    x = np.array([[0.0, -200.0, -1000.0]], np.float32)
    np.testing.assert_allclose(pk.log_softmax(x).numpy(), [[0.0, -200.0, -1000.0]], atol=1e-5)


@pytest.mark.parametrize("fn", [pk.softmax, pk.log_softmax])
def test_softmax_errors(fn):
    with pytest.raises(TypeError, match="dtype i32"):
        fn(np.ones((2, 3), np.int32))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        fn(np.ones((2, 3), np.float32), axis=2)
    with pytest.raises(ValueError, match="0-d"):
        fn(pk.asarray(np.float32(1.0)))
    with pytest.raises(TypeError, match="axis must be an int"):
        fn(np.ones((2, 3), np.float32), axis=1.0)


# ---------------------------------------------------------------- layer_norm

def ref_layer_norm(x, nd, w, b, eps):
    axes = tuple(range(x.ndim - nd, x.ndim))
    xd = x.astype(np.float64)
    mu = xd.mean(axis=axes, keepdims=True)
    var = ((xd - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (xd - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w.astype(np.float64)
    if b is not None:
        y = y + b.astype(np.float64)
    return y


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=4).map(tuple), data=st.data(),
       dtype=st.sampled_from(FLOATS), layout=layouts, seed=seeds, affine=st.booleans(),
       eps=st.sampled_from([1e-5, 0.1]))
def test_layer_norm(shape, data, dtype, layout, seed, affine, eps):
    rng = np.random.default_rng(seed)
    nd = data.draw(st.integers(1, len(shape)))
    norm = shape[len(shape) - nd:]
    x, t = make(rng, dtype, shape, layout)
    w = b = None
    if affine:
        w = sample(rng, dtype, norm)
        b = sample(rng, dtype, norm)
    got = pk.layer_norm(t, norm, w, b, eps=eps)
    assert got.dtype == dtype
    tol = {pk.f16: 4e-3, pk.f32: 2e-5, pk.f64: 1e-12}[dtype]
    close(got.numpy(), ref_layer_norm(x, nd, w, b, eps), tol, tol * 8)


@pytest.mark.parametrize("length", [5, 20, 3000])
def test_layer_norm_rows_and_mixed_parameter_dtypes(length):
    rng = np.random.default_rng(length)
    x = (rng.standard_normal((4, length)) * 3 + 100).astype(np.float32)  # mean far from 0
    w = rng.standard_normal(length).astype(np.float16)
    b = rng.standard_normal(length).astype(np.float64)
    got = pk.layer_norm(x, length, pk.asarray(w), pk.asarray(b))
    close(got.numpy(), ref_layer_norm(x, 1, w, b, 1e-5), 1e-4, 1e-4)
    got = pk.layer_norm(x, (length,), weight=pk.asarray(w))
    close(got.numpy(), ref_layer_norm(x, 1, w, None, 1e-5), 1e-4, 1e-4)


@pytest.mark.parametrize("length", [6, 40, 3000])
def test_layer_norm_of_constant_rows_is_exactly_the_bias(length):
    """A constant row has mean equal to its value and variance 0, so its normalised values
    are exactly 0: a rounded mean would be magnified by 1/sqrt(eps), about 316. Forward and
    backward (whose x̂ is then 0, so dx = rstd·(gw - mean(gw)))."""
    rng = np.random.default_rng(length)
    x = np.repeat(rng.uniform(-4, 4, (3, 1)), length, axis=1).astype(np.float32)
    w = rng.uniform(-2, 2, length).astype(np.float32)
    b = rng.uniform(-2, 2, length).astype(np.float32)
    got = pk.layer_norm(x, length, pk.asarray(w), pk.asarray(b))
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(b, x.shape))
    t = pk.asarray(x).requires_grad_()
    g = rng.standard_normal(x.shape).astype(np.float32)
    (pk.layer_norm(t, length, pk.asarray(w)) * pk.asarray(g)).sum().backward()
    gw = g.astype(np.float64) * w
    expected = (gw - gw.mean(axis=1, keepdims=True)) / np.sqrt(1e-5)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-4, atol=1e-3)


def test_layer_norm_errors():
    x = np.ones((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match="trailing dimensions"):
        pk.layer_norm(x, (3,))
    with pytest.raises(ValueError, match="weight has shape"):
        pk.layer_norm(x, 4, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="dtype i32"):
        pk.layer_norm(np.ones((2, 3), np.int32), 3)
    with pytest.raises(ValueError, match="eps"):
        pk.layer_norm(x, 4, eps=-1.0)
    with pytest.raises(TypeError, match="normalized_shape"):
        pk.layer_norm(x, "4")


# ---------------------------------------------------------------- attention

def ref_attention(q, k, v, causal, scale):
    s = np.matmul(q.astype(np.float64), np.swapaxes(k.astype(np.float64), -1, -2)) * scale
    if causal:
        lq, lk = s.shape[-2:]
        s = np.where(np.tril(np.ones((lq, lk), bool)), s, -np.inf)
    if s.shape[-1] == 0:
        return np.zeros(s.shape[:-1] + v.shape[-1:])
    p = ref_softmax(s, -1)
    return np.matmul(p, v.astype(np.float64))


@settings(max_examples=20, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), lq=st.integers(0, 20),
       lk=st.integers(0, 20), d=st.integers(1, 8), dv=st.integers(1, 8), causal=st.booleans(),
       scale=st.sampled_from([None, 0.5]), bcast=st.integers(0, 2), layout=layouts,
       dtype=st.sampled_from([pk.f16, pk.f32, pk.f32, pk.f64]), seed=seeds)
def test_attention(batch, lq, lk, d, dv, causal, scale, bcast, layout, dtype, seed):
    rng = np.random.default_rng(seed)
    bq = tuple(batch)
    bk = tuple(1 for _ in batch) if bcast == 1 else bq[1:] if bcast == 2 else bq
    q, tq = make(rng, dtype, bq + (lq, d), layout, -2, 2)
    k, tk = make(rng, dtype, bk + (lk, d), "contiguous", -2, 2)
    v, tv = make(rng, dtype, bk + (lk, dv), layout, -2, 2)
    got = pk.attention(tq, tk, tv, causal=causal, scale=scale)
    sc = 1 / math.sqrt(d) if scale is None else scale
    expected = ref_attention(q, k, v, causal, sc)
    assert got.shape == expected.shape and got.dtype == dtype
    tol = {pk.f16: 1e-2, pk.f32: 2e-5, pk.f64: 1e-12}[dtype]
    close(got.numpy(), expected, tol, tol * 4)


def test_attention_longer_sequences_causal():
    rng = np.random.default_rng(9)
    q = rng.standard_normal((2, 70, 16)).astype(np.float32)
    k = rng.standard_normal((2, 90, 16)).astype(np.float32)
    v = rng.standard_normal((2, 90, 24)).astype(np.float32)
    for causal in (False, True):
        got = pk.attention(q, k, v, causal=causal).numpy()
        close(got, ref_attention(q, k, v, causal, 0.25), 2e-5, 2e-5)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("qs,ks,vs,causal,dtype", [
    ((2, 70, 8), (2, 90, 8), (2, 90, 5), True, pk.f32),
    ((3, 1, 20, 4), (2, 33, 4), (1, 33, 4), False, pk.f32),
    ((130, 4), (17, 4), (17, 6), True, pk.f64),
    ((2, 40, 8), (2, 40, 8), (2, 40, 8), True, pk.f16),
])
def test_attention_fused_and_composed_kernels(fused, qs, ks, vs, causal, dtype, monkeypatch):
    from pykern.tensor.nnops import nn_ops as nn
    monkeypatch.setattr(nn, "FUSED_ATTENTION", fused)
    rng = np.random.default_rng(len(qs) + qs[-2])
    q, k, v = (sample(rng, dtype, s, -2, 2) for s in (qs, ks, vs))
    got = pk.attention(q, k, v, causal=causal)
    expected = ref_attention(q, k, v, causal, 1 / math.sqrt(qs[-1]))
    tol = {pk.f16: 1e-2, pk.f32: 2e-5, pk.f64: 1e-12}[dtype]
    close(got.numpy(), expected, tol, tol * 4)


def test_attention_errors():
    q = np.ones((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match="same last dimension"):
        pk.attention(q, np.ones((2, 3, 5), np.float32), q)
    with pytest.raises(ValueError, match="same length"):
        pk.attention(q, q, np.ones((2, 4, 4), np.float32))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        pk.attention(np.ones(4, np.float32), q, q)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        pk.attention(q, np.ones((3, 3, 4), np.float32), np.ones((3, 3, 4), np.float32))
    with pytest.raises(TypeError, match="dtype i32"):
        pk.attention(q.astype(np.int32), q, q)


# ---------------------------------------------------------------- one_hot

@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 5), max_size=3).map(tuple), classes=st.integers(0, 7),
       idt=st.sampled_from(INTS), odt=st.sampled_from([pk.f32, pk.i32, pk.bool_, pk.f16]),
       layout=layouts, seed=seeds)
def test_one_hot(shape, classes, idt, odt, layout, seed):
    rng = np.random.default_rng(seed)
    ind, t = make(rng, idt, shape, layout, -1, 8)  # some out of range: all-zero rows
    got = pk.one_hot(t, classes, odt)
    expected = (ind[..., None].astype(np.int64) == np.arange(classes)).astype(odt.numpy)
    assert got.dtype == odt
    np.testing.assert_array_equal(got.numpy(), expected)


def test_one_hot_errors():
    with pytest.raises(TypeError, match="indices has dtype f32"):
        pk.one_hot(np.ones(3, np.float32), 4)
    with pytest.raises(ValueError, match="num_classes must be >= 0"):
        pk.one_hot(np.ones(3, np.int32), -1)
