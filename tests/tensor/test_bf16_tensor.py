"""bf16 tensors: creation, conversion and the numpy round trip (ml_dtypes.bfloat16 arrays),
promotion as torch's, and the ops: elementwise results are the f32 operation rounded once;
sums, matmul and softmax accumulate in f32 and are compared with float64 references at the
bound that implies.
Conversions to bf16 are checked against the rule (`bf16_rule`: the exact source value rounded
to nearest, ties to even), not against a library's conversion.

The bound, for a result r of n accumulated terms t_k (a sum: the values; a matmul: the products
a_ik * b_kj, exact in f32): the f32 accumulation errs by at most about n * 2**-24 * sum|t_k|,
and the one rounding to bf16 at the end by half a bf16 unit, 2**-8 * |r| (bf16 has 8
significant bits). So |r - reference| <= 2**-8 * |reference| + n * 2**-24 * sum|t_k|.
"""

from __future__ import annotations

import numpy as np
import pytest
from bf16_rule import BF16, rounded_bf16, to_f32

import pykern as pk


def bf16_array(shape, seed=0, scale=1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(np.float32).astype(BF16)


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == BF16
    expected = np.asarray(expected, BF16)
    np.testing.assert_array_equal(actual.view(np.uint16), expected.view(np.uint16))


def accumulation_bound(reference: np.ndarray, n: int, magnitude: np.ndarray) -> np.ndarray:
    """The bound of the module docstring."""
    return 2.0**-8 * np.abs(reference) + n * 2.0**-24 * magnitude


def test_creation_and_numpy_round_trip():
    x = bf16_array((3, 5))
    t = pk.asarray(x)
    assert t.dtype == pk.bf16 and t.shape == (3, 5)
    back = t.numpy()
    assert back.dtype == BF16
    assert_bits_equal(back, x)
    assert_bits_equal(np.asarray(t), x)
    assert_bits_equal(t.T.numpy(), x.T)  # a strided view
    assert_bits_equal(t[1:, ::2].numpy(), x[1:, ::2])
    assert_bits_equal(pk.zeros((2, 2), dtype=pk.bf16).numpy(), np.zeros((2, 2), BF16))
    assert_bits_equal(pk.ones(3, pk.bf16).numpy(), np.ones(3, BF16))
    assert_bits_equal(pk.full(4, 1.1, dtype=pk.bf16).numpy(), rounded_bf16([1.1] * 4))
    assert_bits_equal(pk.arange(0, 300, dtype=pk.bf16).numpy(), rounded_bf16(range(300)))


def test_asarray_and_astype_round_to_nearest_even():
    # ties both ways, just above a tie (below f32's precision), past the largest finite bf16,
    # a subnormal of bf16 (f32's normal range), an inexact decimal, inf and nan
    values = np.array([1.00390625, 1.01171875, 1 + 2**-8 + 2**-30, 3.0e38, -1e-40, 0.1,
                       np.inf, np.nan], np.float64)
    expected = rounded_bf16(values)
    t = pk.asarray(values, dtype=pk.bf16)
    assert_bits_equal(t.numpy(), expected)
    f32 = values.astype(np.float32)
    assert_bits_equal(pk.asarray(f32).astype(pk.bf16).numpy(), rounded_bf16(f32))
    np.testing.assert_array_equal(t.astype(pk.f32).numpy(), to_f32(expected))
    ints = np.array([7, -300, 16842753, -16842753, 2**31 - 1], np.int32)
    assert_bits_equal(pk.asarray(ints).astype(pk.bf16).numpy(), rounded_bf16(ints))
    assert pk.asarray([1.5, 2.5], dtype=pk.bf16).astype(pk.i32).numpy().tolist() == [1, 2]


def near_ties(rng: np.random.Generator, n: int) -> np.ndarray:
    """f64 values on, just above and just below halfway between two bf16 values (of random
    signs and magnitudes, subnormal ones too): where rounding twice, through f32, goes wrong."""
    words = rng.integers(0, 0x7F7F, n).astype(np.uint32) << 16 | 0x8000
    mid = words.view(np.float32).astype(np.float64) * rng.choice([-1.0, 1.0], n)
    nudge = np.abs(mid) * np.exp2(-rng.integers(26, 50, n).astype(np.float64))
    return np.concatenate([mid, mid + nudge, mid - nudge])


@pytest.mark.parametrize("source", ["f64", "f16", "i64", "u64", "i32", "list"])
def test_host_data_round_once_to_bf16(source):
    """pk.asarray(x, dtype=pk.bf16) rounds on the host by the rule, as kernels do, whatever
    ml_dtypes does: ties, values just off a tie below f32's precision, wide integers."""
    rng = np.random.default_rng(7)
    data = {
        "f64": np.concatenate([near_ties(rng, 300), [1 + 2**-8 + 2**-30, 2.0**-134,
                                                     -1.5 * 2**-134, 3.3961e38, 1e39, -0.0,
                                                     np.inf, -np.inf, np.nan, 5e-324, -1e-310,
                                                     2.0**-149, 3 * 2.0**-150, 3.4028235e38,
                                                     -2.0**128]]),
        "f16": rng.standard_normal(300).astype(np.float16),
        "i64": np.concatenate([rng.integers(-2**63, 2**63, 300, dtype=np.int64),
                               [-2**63, 2**63 - 1, 16842753, -16973823, 2**40 + 2**32 + 1]]),
        "u64": np.concatenate([rng.integers(0, 2**64, 300, dtype=np.uint64),
                               np.array([2**64 - 1, 2**56 + 2**48 + 1], np.uint64)]),
        "i32": rng.integers(-2**31, 2**31, 300).astype(np.int32),
        "list": [1 + 2**-8 + 2**-40, 16842753, -3, 0.1],
    }[source]
    got = pk.asarray(data, dtype=pk.bf16).numpy()
    assert_bits_equal(got, rounded_bf16(np.asarray(data)))
    if source != "list":  # the device's conversion of the same values (f64, or the ints)
        assert_bits_equal(pk.asarray(data).astype(pk.bf16).numpy(), got)


@pytest.mark.parametrize("other, expected", [
    (pk.f16, pk.f32), (pk.f32, pk.f32), (pk.f64, pk.f64), (pk.i32, pk.bf16), (pk.bool_, pk.bf16),
    (pk.bf16, pk.bf16),
], ids=lambda d: getattr(d, "name", d))
def test_promotion_follows_torch(other, expected):
    a = pk.ones(2, pk.bf16)
    b = pk.ones(2, other)
    assert (a + b).dtype == expected and (b * a).dtype == expected
    assert pk.result_type(pk.bf16, other) == expected


def test_python_scalars_keep_bf16():
    a = pk.asarray(bf16_array(8))
    assert (a * 2.5).dtype == pk.bf16 and (1 + a).dtype == pk.bf16
    # the scalar rounded to bf16 by the rule, then the f32 product rounded once
    scalar = to_f32(rounded_bf16([1.1]))
    assert_bits_equal((a * 1.1).numpy(), rounded_bf16(to_f32(a.numpy()) * scalar))


@pytest.mark.parametrize("scalar", [1 + 2**-8 + 2**-30, 16842753, 2**60 + 2**52 + 1])
def test_python_scalars_round_once_to_bf16(scalar):
    # each lies just above a bf16 tie, below f32's precision: rounded twice, through f32,
    # it would land on the tie and go to even, below
    zero = pk.zeros(3, pk.bf16)
    want = rounded_bf16([scalar] * 3)

    @pk.fuse
    def plus(t):
        return t + scalar

    for got in (zero + scalar, plus(zero), pk.full(3, scalar, dtype=pk.bf16)):
        assert_bits_equal(got.numpy(), want)


def test_elementwise_arithmetic_is_f32_arithmetic_rounded_once():
    x, y = bf16_array(1000, 1), bf16_array(1000, 2, scale=3.0)
    a, b = pk.asarray(x), pk.asarray(y)
    xf, yf = to_f32(x), to_f32(y)  # numpy's IEEE f32 operations, then the rule's rounding
    assert_bits_equal((a + b).numpy(), rounded_bf16(xf + yf))
    assert_bits_equal((a - b).numpy(), rounded_bf16(xf - yf))
    assert_bits_equal((a * b).numpy(), rounded_bf16(xf * yf))
    assert_bits_equal((a / b).numpy(), rounded_bf16(xf / yf))
    assert_bits_equal(pk.maximum(a, b).numpy(), rounded_bf16(np.maximum(xf, yf)))
    assert_bits_equal((-a).numpy(), rounded_bf16(-xf))


def test_elementwise_math_within_one_bf16_rounding():
    x = bf16_array(500, 3)
    a = pk.asarray(x)
    xf = x.astype(np.float64)
    for op, ref in ((pk.exp, np.exp), (pk.tanh, np.tanh), (pk.sin, np.sin),
                    (pk.sigmoid, lambda v: 1 / (1 + np.exp(-v)))):
        out = op(a)
        assert out.dtype == pk.bf16
        np.testing.assert_allclose(out.numpy().astype(np.float64), ref(xf), rtol=2**-8,
                                   atol=1e-6, err_msg=op.__name__)


@pytest.mark.parametrize("shape, axis", [((10_000,), None), ((37, 300), 1), ((300, 37), 0)])
def test_sum_and_mean_accumulate_in_f32(shape, axis):
    x = bf16_array(shape, 4, scale=10.0)
    xf = x.astype(np.float64)
    t = pk.asarray(x)
    n = xf.size if axis is None else xf.shape[axis]
    total = pk.sum(t, axis=axis)
    assert total.dtype == pk.bf16
    reference = xf.sum(axis=axis)
    bound = accumulation_bound(reference, n, np.abs(xf).sum(axis=axis))
    assert (np.abs(total.numpy().astype(np.float64) - reference) <= bound).all()
    mean = pk.mean(t, axis=axis).numpy().astype(np.float64)
    assert (np.abs(mean - reference / n) <= bound / n).all()
    assert_bits_equal(pk.max(t, axis=axis).numpy(), x.max(axis=axis))


@pytest.mark.parametrize("m, k, n", [(33, 47, 29), (64, 256, 64), (5, 1000, 3)])
def test_matmul_accumulates_in_f32(m, k, n):
    a, b = bf16_array((m, k), 5), bf16_array((k, n), 6)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    c = pk.asarray(a) @ pk.asarray(b)
    assert c.dtype == pk.bf16
    reference = af @ bf
    bound = accumulation_bound(reference, k, np.abs(af) @ np.abs(bf))
    assert (np.abs(c.numpy().astype(np.float64) - reference) <= bound).all()


def test_batched_matmul_with_a_transposed_operand():
    a, b = bf16_array((3, 16, 24), 7), bf16_array((3, 20, 24), 8)
    c = pk.matmul(pk.asarray(a), pk.asarray(b).transpose(0, 2, 1)).numpy().astype(np.float64)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    reference = af @ bf.transpose(0, 2, 1)
    bound = accumulation_bound(reference, 24, np.abs(af) @ np.abs(bf).transpose(0, 2, 1))
    assert (np.abs(c - reference) <= bound).all()


def test_softmax_and_layer_norm_compute_in_f32():
    x = bf16_array((8, 100), 9, scale=4.0)
    xf = x.astype(np.float64)
    s = pk.softmax(pk.asarray(x), axis=-1)
    assert s.dtype == pk.bf16
    e = np.exp(xf - xf.max(axis=-1, keepdims=True))
    reference = e / e.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(s.numpy().astype(np.float64), reference, rtol=2**-8, atol=1e-6)
    ln = pk.layer_norm(pk.asarray(x), (100,)).numpy().astype(np.float64)
    normed = (xf - xf.mean(-1, keepdims=True)) / np.sqrt(xf.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln, normed, rtol=2**-8, atol=2**-8)


def test_sort_cumsum_and_random():
    x = bf16_array(500, 10)
    assert_bits_equal(pk.sort(pk.asarray(x)).numpy(), np.sort(x.astype(np.float32)).astype(BF16))
    running = pk.cumsum(pk.asarray(x)).numpy().astype(np.float64)
    xf = x.astype(np.float64)
    reference = np.cumsum(xf)
    bound = accumulation_bound(reference, x.size, np.cumsum(np.abs(xf)))
    assert (np.abs(running - reference) <= bound).all()
    pk.random.seed(3)
    u = pk.random.rand(20_000, dtype=pk.bf16).numpy().astype(np.float64)
    assert 0.0 <= u.min() and u.max() < 1.0 and len(np.unique(u)) == 256


def test_attention_and_conv2d_take_bf16():
    q, k, v = (bf16_array((2, 12, 16), s) for s in (11, 12, 13))
    out = pk.attention(pk.asarray(q), pk.asarray(k), pk.asarray(v))
    assert out.dtype == pk.bf16
    qf, kf, vf = (t.astype(np.float64) for t in (q, k, v))
    scores = qf @ kf.transpose(0, 2, 1) / 4.0
    p = np.exp(scores - scores.max(-1, keepdims=True))
    reference = (p / p.sum(-1, keepdims=True)) @ vf
    # probabilities in f32, one bf16 rounding of the output, plus that of the bound above
    bound = accumulation_bound(reference, 12, np.abs(vf).max() * np.ones_like(reference))
    assert (np.abs(out.numpy().astype(np.float64) - reference) <= bound + 1e-5).all()
    x, w = bf16_array((1, 3, 9, 9), 14), bf16_array((4, 3, 3, 3), 15)
    y = pk.conv2d(pk.asarray(x), pk.asarray(w))
    assert y.dtype == pk.bf16 and y.shape == (1, 4, 7, 7)
    xf, wf = x.astype(np.float64), w.astype(np.float64)
    windows = np.lib.stride_tricks.sliding_window_view(xf[0], (3, 3), axis=(1, 2))
    reference = np.einsum("chwij,ocij->ohw", windows, wf)[None]
    magnitude = np.einsum("chwij,ocij->ohw", np.abs(windows), np.abs(wf))[None]
    assert (np.abs(y.numpy().astype(np.float64) - reference)
            <= accumulation_bound(reference, 27, magnitude)).all()
