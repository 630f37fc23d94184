"""Float semantics (every operation rounded to the type, floor //, %, pow, NaN-ignoring min/max,
ordered comparisons) and conversions."""

from __future__ import annotations

import math

import numpy as np
from interp_support import interpret

import pykern as pk

rng = np.random.default_rng(11)
NAN, INF = float("nan"), float("inf")


def floats(n: int = 200, lo: float = -100.0, hi: float = 100.0) -> np.ndarray:
    return rng.uniform(lo, hi, n).astype(np.float32)


def arith(a: pk.f32[:], b: pk.f32[:], fma: pk.f32[:], q: pk.f32[:], fd: pk.f32[:],
          md: pk.f32[:]):
    i = pk.global_id(0)
    fma[i] = a[i] * b[i] + a[i]
    q[i] = a[i] / b[i]
    fd[i] = a[i] // b[i]
    md[i] = a[i] % b[i]


def test_float_arithmetic_rounds_to_f32_and_floors():
    a = np.concatenate([floats(), np.array([7.5, -7.5, 1e30, 5, -5], np.float32),
                        np.array([7, -7, 7, -7, 1, -1, 0, 5.5], np.float32)])
    b = np.concatenate([floats(), np.array([0.1, 0.1, 3e-30, np.inf, np.inf], np.float32),
                        np.array([2, 2, -2, -2, 0, 0, 0, -0.5], np.float32)])
    outs = [np.zeros_like(a) for _ in range(4)]
    interpret(arith, a.size, a, b, *outs)
    with np.errstate(all="ignore"):
        expected = [a * b + a, a / b, a // b, a % b]  # Python's // and %, as numpy's
    for got, want in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(got, want)  # nan == nan for assert_array_equal
    fd, md = outs[2][-8:], outs[3][-8:]
    assert list(fd[:4]) == [3, -4, -4, 3] and list(md[:4]) == [1, 1, -1, -1]
    assert fd[-1] == -11 and md[-1] == 0 and np.signbit(md[-1])  # 5.5 % -0.5 is -0.0
    q_tail = outs[1][-4:]  # 1/0, -1/0, 0/0, 5.5/-0.5: no exception
    assert q_tail[0] == INF and q_tail[1] == -INF and math.isnan(q_tail[2]) and q_tail[3] == -11


def pow_kernel(a: pk.f32[:], b: pk.f32[:], out: pk.f32[:], out2: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a[i] ** b[i]
    out2[i] = pk.pow(a[i], b[i])


def test_float_pow_python_semantics():
    a = np.array([2, -2, -2, -8, 0, -0.0, 0, 1, -1, 4, NAN, 1.5], np.float32)
    b = np.array([10, 3, 2, 1 / 3, -1, -1, 0, NAN, INF, 0.5, 0, -2], np.float32)
    out, out2 = np.zeros_like(a), np.zeros_like(a)
    interpret(pow_kernel, a.size, a, b, out, out2)
    want = np.array([1024, -8, 4, NAN, INF, -INF, 1, 1, 1, 2, 1, 1 / 2.25], np.float32)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(out2, want)


def nan_min_max(a: pk.f32[:], b: pk.f32[:], lo: pk.f32[:], hi: pk.f32[:]):
    i = pk.global_id(0)
    lo[i] = min(a[i], b[i])
    hi[i] = max(a[i], b[i])


def test_min_max_propagate_nan_as_numpy():
    a = np.array([NAN, 1, NAN, 3, -INF, 2, -0.0, 0.0], np.float32)
    b = np.array([1, NAN, NAN, -3, 5, 2, 0.0, -0.0], np.float32)
    lo, hi = np.zeros_like(a), np.zeros_like(a)
    interpret(nan_min_max, a.size, a, b, lo, hi)
    np.testing.assert_array_equal(lo, np.minimum(a, b))
    np.testing.assert_array_equal(hi, np.maximum(a, b))
    # of two zeros, the second, as numpy
    np.testing.assert_array_equal(np.signbit(lo[6:]), np.signbit(np.minimum(a, b)[6:]))
    np.testing.assert_array_equal(np.signbit(hi[6:]), np.signbit(np.maximum(a, b)[6:]))


def compare(a: pk.f32[:], b: pk.f32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    out[i] = (int(a[i] == b[i]) + 2 * int(a[i] != b[i]) + 4 * int(a[i] < b[i])
              + 8 * int(a[i] <= b[i]) + 16 * int(a[i] > b[i]) + 32 * int(a[i] >= b[i]))


def test_comparisons_are_ordered_except_not_equal():
    a = np.array([NAN, 1, NAN, 1, 2, 1], np.float32)
    b = np.array([1, NAN, NAN, 1, 1, 2], np.float32)
    out = np.zeros(a.size, np.int32)
    interpret(compare, a.size, a, b, out)
    want = [(int(x == y) + 2 * int(x != y) + 4 * int(x < y) + 8 * int(x <= y) + 16 * int(x > y)
             + 32 * int(x >= y)) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    np.testing.assert_array_equal(out, want)
    assert list(out[:3]) == [2, 2, 2]


def to_ints(x: pk.f32[:], i: pk.i32[:], u: pk.u32[:], b: pk.bool_[:], s: pk.i8[:]):
    k = pk.global_id(0)
    i[k] = int(x[k])
    u[k] = pk.u32(x[k])
    b[k] = pk.bool_(x[k])
    s[k] = pk.i8(x[k])


def test_float_to_int_truncates_saturates_and_nan_is_zero():
    x = np.array([2.7, -2.7, 0.5, -0.5, 3e9, -3e9, INF, -INF, NAN, 0.0, 200.0, -200.0],
                 np.float32)
    i, u = np.zeros(x.size, np.int32), np.zeros(x.size, np.uint32)
    b, s = np.zeros(x.size, bool), np.zeros(x.size, np.int8)
    interpret(to_ints, x.size, x, i, u, b, s)
    assert list(i) == [2, -2, 0, 0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 0, 0, 200, -200]
    assert list(u) == [2, 0, 0, 0, 3000000000, 0, 2**32 - 1, 0, 0, 0, 200, 0]
    assert list(b) == [True] * 9 + [False, True, True]  # NaN is truthy, as in Python
    assert list(s) == [2, -2, 0, 0, 127, -128, 127, -128, 0, 0, 127, -128]


def from_ints(a: pk.i32[:], big: pk.i64[:], f: pk.f32[:], g: pk.f32[:], h: pk.f16[:],
              w: pk.u8[:], t: pk.f32[:]):
    k = pk.global_id(0)
    f[k] = pk.f32(a[k])
    g[k] = pk.f32(big[k])
    h[k] = pk.f16(a[k])
    w[k] = pk.u8(a[k])
    t[k] = pk.f32(a[k] > 0) + pk.f32(a[k] != 0)


def test_int_to_float_rounds_once_and_int_to_int_wraps():
    a = np.array([16777217, -16777217, 2**31 - 1, 300, -1, 0, 70000], np.int32)
    big = np.array([2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**63 - 1, 1, 0, 3, -3], np.int64)
    f, g, t = (np.zeros(a.size, np.float32) for _ in range(3))
    h, w = np.zeros(a.size, np.float16), np.zeros(a.size, np.uint8)
    interpret(from_ints, a.size, a, big, f, g, h, w, t)
    np.testing.assert_array_equal(f, a.astype(np.float32))
    np.testing.assert_array_equal(g, big.astype(np.float32))  # one rounding, as the GPU
    assert g[0] == np.float32(2**60 + 2**37)
    with np.errstate(over="ignore"):  # 2**31 - 1 and 70000 are inf in f16
        np.testing.assert_array_equal(h, a.astype(np.float16))
    np.testing.assert_array_equal(w, a.astype(np.uint8))
    np.testing.assert_array_equal(t, (a > 0).astype(np.float32) + (a != 0))


def other_widths(a: pk.f16[:], b: pk.f16[:], c: pk.f16[:], x: pk.f64[:], y: pk.f64[:],
                 z: pk.f64[:], n: pk.f32[:]):
    k = pk.global_id(0)
    c[k] = a[k] * b[k] + a[k] / b[k]
    z[k] = x[k] * y[k] - x[k] / y[k] + pk.f64(a[k])
    n[k] = pk.f32(x[k]) + pk.f32(a[k])


def test_f16_and_f64_round_to_their_type():
    a = (floats(50) / 7).astype(np.float16)
    b = (floats(50) / 3).astype(np.float16)
    x, y = rng.uniform(-1e3, 1e3, 50), rng.uniform(-1e3, 1e3, 50)
    c, z, n = np.zeros_like(a), np.zeros_like(x), np.zeros(50, np.float32)
    interpret(other_widths, 50, a, b, c, x, y, z, n)
    np.testing.assert_array_equal(c, a * b + a / b)
    np.testing.assert_array_equal(z, x * y - x / y + a.astype(np.float64))
    np.testing.assert_array_equal(n, x.astype(np.float32) + a.astype(np.float32))


def math_calls(x: pk.f32[:], out: pk.f32[:], fl: pk.f32[:]):
    k = pk.global_id(0)
    out[k] = pk.sqrt(abs(x[k])) + pk.exp(x[k] / 100) * pk.sin(x[k]) - pk.tanh(x[k])
    fl[k] = pk.floor(x[k]) + pk.ceil(x[k])


def test_math_functions_stay_in_the_type():
    x = floats()
    out, fl = np.zeros_like(x), np.zeros_like(x)
    interpret(math_calls, x.size, x, out, fl)
    with np.errstate(all="ignore"):
        want = np.sqrt(np.abs(x)) + np.exp(x / np.float32(100)) * np.sin(x) - np.tanh(x)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(fl, np.floor(x) + np.ceil(x))
