"""Scalar arithmetic on the host backend against the interpreter: every dtype, Python's `//`
and `%`, wrapping, shifts out of range, integer powers, conversions (saturating, NaN), f16
computed in f32, comparisons and min/max with NaN. All exact."""

from __future__ import annotations

import numpy as np
import pytest
from differential import check
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk

rng = np.random.default_rng(7)
INTS = [pk.i8, pk.i16, pk.i32, pk.i64, pk.u8, pk.u16, pk.u32, pk.u64]
FLOATS = [pk.f16, pk.f32, pk.f64]


def int_values(t: pk.DType, n: int) -> np.ndarray:
    info = np.iinfo(t.numpy)
    edges = np.array([info.min, info.max, 0, 1, info.max // 2], dtype=t.numpy)
    body = rng.integers(info.min, info.max, n - edges.size, dtype=t.numpy, endpoint=True)
    return np.concatenate([edges, body])


def float_values(t: pk.DType, n: int) -> np.ndarray:
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 3.0], t.numpy)
    body = (rng.standard_normal(n - special.size) * 100).astype(t.numpy)
    return np.concatenate([special, body])


@pytest.mark.parametrize("t", INTS, ids=lambda t: t.name)
def test_integer_operators_of_every_width(t):
    @pk.kernel
    def ops(a: pk.Array, b: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        x = a[i]
        y = b[i]
        out[i, 0] = x + y
        out[i, 1] = x - y
        out[i, 2] = x * y
        out[i, 3] = x // y
        out[i, 4] = x % y
        out[i, 5] = x & y
        out[i, 6] = x | y
        out[i, 7] = x ^ y
        out[i, 8] = min(x, y)
        out[i, 9] = max(x, y)
        out[i, 10] = -x
        out[i, 11] = ~x
        out[i, 12] = abs(x)
        out[i, 13] = x << (y & 7)
        out[i, 14] = x >> (y & 7)

    n = 300
    a, b = int_values(t, n), int_values(t, n)
    b[:20] = 0  # division by zero gives 0
    if t.is_signed:
        b[20:40] = -1  # INT_MIN // -1 wraps
    check(ops, n, a, b, np.zeros((n, 15), t.numpy))


@pytest.mark.parametrize("t", [pk.i8, pk.i32, pk.u16, pk.i64, pk.u64], ids=lambda t: t.name)
def test_shifts_out_of_range_and_integer_powers(t):
    @pk.kernel
    def ops(a: pk.Array, c: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[i, 0] = a[i] << c[i]
        out[i, 1] = a[i] >> c[i]
        out[i, 2] = a[i] ** (c[i] % 9)

    n = 200
    a = int_values(t, n)
    lo = -3 if t.is_signed else 0
    c = rng.integers(lo, 2 * t.bits, n).astype(t.numpy)
    check(ops, n, a, c, np.zeros((n, 3), t.numpy))


def test_negative_integer_exponents():
    @pk.kernel
    def p(a: pk.i32[:], e: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = a[i] ** e[i]

    a = np.array([1, -1, -1, 2, 0, 3, -2, 5], np.int32)
    e = np.array([-3, -3, -2, -1, 0, 20, 31, 13], np.int32)
    out = check(p, a.size, a, e, np.zeros_like(a))[2]
    assert out[:4].tolist() == [1, -1, 1, 0]


@pytest.mark.parametrize("t", FLOATS, ids=lambda t: t.name)
def test_float_operators(t):
    @pk.kernel
    def ops(a: pk.Array, b: pk.Array, out: pk.Array, flags: pk.bool_[:, :]):
        i = pk.global_id(0)
        x = a[i]
        y = b[i]
        out[i, 0] = x + y
        out[i, 1] = x - y
        out[i, 2] = x * y
        out[i, 3] = x / y
        out[i, 4] = x // y
        out[i, 5] = x % y
        out[i, 6] = min(x, y)
        out[i, 7] = max(x, y)
        out[i, 8] = -x
        out[i, 9] = abs(x)
        flags[i, 0] = x < y
        flags[i, 1] = x <= y
        flags[i, 2] = x == y
        flags[i, 3] = x != y
        flags[i, 4] = x > y
        flags[i, 5] = bool(x)

    n = 256
    a, b = float_values(t, n), float_values(t, n)[::-1].copy()
    check(ops, n, a, b, np.zeros((n, 10), t.numpy), np.zeros((n, 6), bool))


@pytest.mark.parametrize("src", FLOATS, ids=lambda t: t.name)
def test_float_to_int_conversions_saturate_and_nan_gives_zero(src):
    @pk.kernel
    def conv(a: pk.Array, o8: pk.i8[:], o32: pk.i32[:], u16: pk.u16[:], o64: pk.i64[:],
             u64: pk.u64[:]):
        i = pk.global_id(0)
        o8[i] = pk.i8(a[i])
        o32[i] = pk.i32(a[i])
        u16[i] = pk.u16(a[i])
        o64[i] = pk.i64(a[i])
        u64[i] = pk.u64(a[i])

    with np.errstate(over="ignore"):  # 1e30 is an f16 inf
        extremes = np.array([1e30, -1e30, 65504, -1.9, 2.9]).astype(src.numpy)
    a = np.concatenate([float_values(src, 64), extremes])
    check(conv, a.size, a, np.zeros(a.size, np.int8), np.zeros(a.size, np.int32),
          np.zeros(a.size, np.uint16), np.zeros(a.size, np.int64), np.zeros(a.size, np.uint64))


def _limit_values(src: pk.DType, dst: pk.DType) -> np.ndarray:
    """Floats of `src` at and around `dst`'s limits (each limit, the float next to it on either
    side, half a unit off), the specials, and random values, 1,024 in all: enough that the
    host runs them through its vectorised loop and its scalar remainder."""
    info, f = np.iinfo(dst.numpy), src.numpy.type
    values = [0.0, -0.0, 0.5, -0.5, 0.99, -0.99, np.inf, -np.inf, np.nan]
    with np.errstate(over="ignore"):
        for limit in (info.min, info.max, info.max + 1, info.min - 1):
            v = f(limit)
            values += [v, np.nextafter(v, f(0)), np.nextafter(v, f(np.inf)),
                       np.nextafter(v, f(-np.inf)), f(limit + 0.5), f(limit - 0.5)]
    values = np.array(values, f)
    with np.errstate(over="ignore"):  # f16 beyond 65504: inf
        body = (rng.standard_normal(1024 - values.size) * float(min(info.max, 60000))).astype(f)
    return np.concatenate([values, body])


def _saturated(x: float, dst: pk.DType) -> int:
    info = np.iinfo(dst.numpy)
    if x != x:
        return 0
    if x in (np.inf, -np.inf):
        return info.max if x > 0 else info.min
    return min(max(int(x), info.min), info.max)  # int() truncates toward zero, exactly


@pytest.mark.parametrize("src", FLOATS, ids=lambda t: t.name)
@pytest.mark.parametrize("dst", INTS, ids=lambda t: t.name)
def test_float_to_int_at_every_limit_saturates_in_vector_loops(src, dst):
    @pk.kernel
    def conv(a: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[i] = dst(a[i])

    a = _limit_values(src, dst)
    host = check(conv, a.size, a, np.zeros(a.size, dst.numpy))[1]
    expected = np.array([_saturated(float(v), dst) for v in a], dtype=dst.numpy)
    np.testing.assert_array_equal(host, expected)


def test_integer_conversions_wrap_and_extend_and_go_to_floats():
    @pk.kernel
    def conv(a: pk.i64[:], b: pk.u64[:], out8: pk.u8[:], outs: pk.i16[:], f: pk.f32[:],
             g: pk.f64[:], h: pk.f16[:], bits: pk.bool_[:]):
        i = pk.global_id(0)
        out8[i] = pk.u8(a[i])
        outs[i] = pk.i16(b[i])
        f[i] = pk.f32(a[i]) + pk.f32(b[i])
        g[i] = pk.f64(b[i])
        h[i] = pk.f16(pk.i32(a[i] % 100000))
        bits[i] = bool(a[i])

    n = 200
    a, b = int_values(pk.i64, n), int_values(pk.u64, n)
    a[5] = 2**60 + 2**36 + 1  # one rounding to f32, not two
    check(conv, n, a, b, np.zeros(n, np.uint8), np.zeros(n, np.int16), np.zeros(n, np.float32),
          np.zeros(n, np.float64), np.zeros(n, np.float16), np.zeros(n, bool))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(t=st.sampled_from(INTS + FLOATS), n=st.integers(1, 700),
       workgroup=st.sampled_from([(1,), (7,), (64,), (256,)]))
def test_elementwise_over_dtypes_sizes_and_workgroups(t, n, workgroup):
    """The grid mask as loop bounds: any size against any workgroup."""
    @pk.kernel(workgroup=workgroup)
    def axpy(a: pk.Array, b: pk.Array, out: pk.Array):
        i = pk.global_id(0)
        out[i] = a[i] * b[i] + a[i]

    a = float_values(t, max(n, 8))[:n] if t.is_float else int_values(t, max(n, 8))[:n]
    b = a[::-1].copy()
    out = np.zeros(n + 5, t.numpy)  # past the grid stays untouched
    host = check(axpy, n, a, b, out)[2]
    assert not host[n:].any()


def test_f64_to_f16_rounds_once():
    """x86 has no f64 -> f16 conversion: it goes through f32 rounded to odd, so that a value
    just above an f16 halfway point does not round to the halfway point first."""
    @pk.kernel
    def narrow(x: pk.f64[:], out: pk.f16[:]):
        i = pk.global_id(0)
        out[i] = pk.f16(x[i])

    tricky = [1 + 2**-11 + 2**-40, 1 + 2**-11 - 2**-40, -(1 + 2**-11 + 2**-40), 65519.99,
              65520.0, 1e300, -1e-300, 2**-25, 2**-25 + 2**-60, np.nan, -0.0, np.inf]
    x = np.concatenate([tricky, rng.standard_normal(300) * 1000]).astype(np.float64)
    out = check(narrow, x.size, x, np.zeros(x.size, np.float16))[1]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, x.astype(np.float16))
