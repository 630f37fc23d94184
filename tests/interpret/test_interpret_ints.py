"""Integer semantics: wrapping at the type's width, Python's floor // and %, pow, shifts."""

from __future__ import annotations

import numpy as np
from interp_support import interpret

import pykern as pk

rng = np.random.default_rng(7)
I32_EDGES = np.array([0, 1, -1, 2, -2, 7, -7, 2**31 - 1, -2**31, 2**30, -2**30, 65536, 46341],
                     dtype=np.int32)
U32_EDGES = np.array([0, 1, 2, 7, 2**31, 2**32 - 1, 2**32 - 2, 65536, 2**31 - 1],
                     dtype=np.uint32)


def pairs(edges: np.ndarray, n_random: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values, plus random pairs over the whole range."""
    a, b = np.meshgrid(edges, edges)
    info = np.iinfo(edges.dtype)
    ra = rng.integers(info.min, info.max, n_random, dtype=edges.dtype, endpoint=True)
    rb = rng.integers(info.min, info.max, n_random, dtype=edges.dtype, endpoint=True)
    return np.concatenate([a.ravel(), ra]), np.concatenate([b.ravel(), rb])


def each(fn, xs: list[int], ys: list[int]) -> list[int]:
    return [fn(x, y) for x, y in zip(xs, ys, strict=True)]


def wrap(values: list[int], dtype: type) -> np.ndarray:
    """Python ints reduced to `dtype`'s width in two's complement."""
    bits = np.iinfo(dtype).bits
    return np.array([v & ((1 << bits) - 1) for v in values], dtype=np.uint64).astype(dtype)


def i32_ops(a: pk.i32[:], b: pk.i32[:], add: pk.i32[:], sub: pk.i32[:], mul: pk.i32[:],
            neg: pk.i32[:], inv: pk.i32[:], ab: pk.i32[:]):
    i = pk.global_id(0)
    add[i] = a[i] + b[i]
    sub[i] = a[i] - b[i]
    mul[i] = a[i] * b[i]
    neg[i] = -a[i]
    inv[i] = ~a[i]
    ab[i] = abs(a[i])


def test_i32_wraps_like_numpy():
    a, b = pairs(I32_EDGES)
    outs = [np.zeros_like(a) for _ in range(6)]
    interpret(i32_ops, a.size, a, b, *outs)
    with np.errstate(over="ignore"):
        expected = [a + b, a - b, a * b, -a, ~a, np.abs(a)]
    for got, want in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    assert outs[5][list(a).index(-2**31)] == -2**31  # abs(INT_MIN) wraps to INT_MIN


def u32_ops(a: pk.u32[:], b: pk.u32[:], add: pk.u32[:], sub: pk.u32[:], mul: pk.u32[:],
            neg: pk.u32[:], inv: pk.u32[:], big: pk.u32[:]):
    i = pk.global_id(0)
    add[i] = a[i] + b[i]
    sub[i] = a[i] - b[i]
    mul[i] = a[i] * b[i]
    neg[i] = -a[i]
    inv[i] = ~a[i]
    big[i] = a[i] + 4000000000  # the literal becomes a u32


def test_u32_wraps_like_numpy():
    a, b = pairs(U32_EDGES)
    outs = [np.zeros_like(a) for _ in range(6)]
    interpret(u32_ops, a.size, a, b, *outs)
    with np.errstate(over="ignore"):
        expected = [a + b, a - b, a * b, -a, ~a, a + np.uint32(4000000000)]
    for got, want in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(got, want)


def floor_ops(a: pk.i32[:], b: pk.i32[:], q: pk.i32[:], r: pk.i32[:]):
    i = pk.global_id(0)
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]


def test_floordiv_mod_python_semantics_with_negative_operands():
    a, b = pairs(I32_EDGES)
    a = np.concatenate([a, np.array([-7, 7, -7, 7, -2**31, 5], np.int32)])
    b = np.concatenate([b, np.array([2, -2, -2, 2, -1, 0], np.int32)])
    q, r = np.zeros_like(a), np.zeros_like(a)
    interpret(floor_ops, a.size, a, b, q, r)
    pa, pb = a.tolist(), b.tolist()
    # Python's // and %, wrapped; division by zero defined as 0
    np.testing.assert_array_equal(q, wrap(each(lambda x, y: x // y if y else 0, pa, pb),
                                          np.int32))
    np.testing.assert_array_equal(r, wrap(each(lambda x, y: x % y if y else 0, pa, pb),
                                          np.int32))
    assert (q[-6:] == [-4, -4, 3, 3, -2**31, 0]).all()
    assert (r[-6:] == [1, -1, -1, 1, 0, 0]).all()


def unsigned_floor_ops(a: pk.u32[:], b: pk.u32[:], q: pk.u32[:], r: pk.u32[:]):
    i = pk.global_id(0)
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]


def test_unsigned_floordiv_mod():
    a, b = pairs(U32_EDGES)
    q, r = np.zeros_like(a), np.zeros_like(a)
    interpret(unsigned_floor_ops, a.size, a, b, q, r)
    pa, pb = a.tolist(), b.tolist()
    np.testing.assert_array_equal(q, [x // y if y else 0 for x, y in zip(pa, pb, strict=True)])
    np.testing.assert_array_equal(r, [x % y if y else 0 for x, y in zip(pa, pb, strict=True)])


def int_pow(a: pk.i32[:], e: pk.i32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    out[i] = a[i] ** e[i]


def test_int_pow_wraps_and_negative_exponents():
    a = np.array([2, 2, 3, -3, 7, -1, -1, 1, 2, 0, 0, 5, -2], np.int32)
    e = np.array([10, 31, 40, 3, 0, -3, -2, -5, -1, 0, 3, 13, 31], np.int32)
    out = np.zeros_like(a)
    interpret(int_pow, a.size, a, e, out)
    want = [(x ** y if y >= 0 else (1 if x == 1 else (-1) ** -y if x == -1 else 0))
            for x, y in zip(a.tolist(), e.tolist(), strict=True)]
    np.testing.assert_array_equal(out, wrap(want, np.int32))


def shifts(a: pk.i32[:], c: pk.i32[:], left: pk.i32[:], right: pk.i32[:]):
    i = pk.global_id(0)
    left[i] = a[i] << c[i]
    right[i] = a[i] >> c[i]


def ushifts(a: pk.u32[:], c: pk.u32[:], left: pk.u32[:], right: pk.u32[:]):
    i = pk.global_id(0)
    left[i] = a[i] << c[i]
    right[i] = a[i] >> c[i]


def test_signed_shifts_wrap_and_saturate_the_count():
    values = [1, -1, 5, -5, 2**31 - 1, -2**31, 0x12345678]
    counts = [0, 1, 4, 31, 32, 33, 40, 100, -1, -40]
    a = np.array([v for v in values for _ in counts], np.int32)
    c = np.array(counts * len(values), np.int32)
    left, right = np.zeros_like(a), np.zeros_like(a)
    interpret(shifts, a.size, a, c, left, right)
    pa, pc = a.tolist(), c.tolist()
    # Python's shift of the unbounded int, wrapped; a negative count shifts everything out
    np.testing.assert_array_equal(left, wrap(each(lambda x, n: x << n if n >= 0 else 0, pa, pc),
                                             np.int32))
    np.testing.assert_array_equal(right, each(lambda x, n: x >> (n if n >= 0 else 31), pa, pc))


def test_unsigned_shifts_are_logical():
    values = [1, 2**32 - 1, 2**31, 0x89ABCDEF]
    counts = [0, 1, 4, 31, 32, 33, 2**32 - 1]
    a = np.array([v for v in values for _ in counts], np.uint32)
    c = np.array(counts * len(values), np.uint32)
    left, right = np.zeros_like(a), np.zeros_like(a)
    interpret(ushifts, a.size, a, c, left, right)
    pa, pc = a.tolist(), c.tolist()
    np.testing.assert_array_equal(left, wrap(each(lambda x, n: x << n if n < 32 else 0, pa, pc),
                                             np.uint32))
    np.testing.assert_array_equal(right, each(lambda x, n: x >> n if n < 32 else 0, pa, pc))


def narrow(a: pk.i8[:], b: pk.i8[:], out: pk.i8[:], wide: pk.i64[:], u: pk.u16[:]):
    i = pk.global_id(0)
    out[i] = a[i] * b[i] + a[i]
    wide[i] = pk.i64(a[i]) * 1000000000000
    u[i] = pk.u16(a[i]) * pk.u16(b[i])


def test_narrow_and_wide_integers():
    a = np.array([127, -128, 100, -7, 3], np.int8)
    b = np.array([127, -1, 3, 9, -3], np.int8)
    out, wide, u = np.zeros_like(a), np.zeros(5, np.int64), np.zeros(5, np.uint16)
    interpret(narrow, a.size, a, b, out, wide, u)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, a * b + a)
        np.testing.assert_array_equal(wide, a.astype(np.int64) * 10**12)
        np.testing.assert_array_equal(u, a.astype(np.uint16) * b.astype(np.uint16))


def bits(a: pk.i32[:], b: pk.i32[:], out: pk.i32[:], lo: pk.i32[:], hi: pk.i32[:]):
    i = pk.global_id(0)
    out[i] = (a[i] & b[i]) ^ (a[i] | 0x0F0F0F0F)
    lo[i] = min(a[i], b[i])
    hi[i] = max(a[i], b[i], 0)


def test_bitwise_and_min_max():
    a, b = pairs(I32_EDGES, 50)
    out, lo, hi = (np.zeros_like(a) for _ in range(3))
    interpret(bits, a.size, a, b, out, lo, hi)
    np.testing.assert_array_equal(out, (a & b) ^ (a | np.int32(0x0F0F0F0F)))
    np.testing.assert_array_equal(lo, np.minimum(a, b))
    np.testing.assert_array_equal(hi, np.maximum(np.maximum(a, b), 0))
