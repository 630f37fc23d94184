"""Device functions, pk.local arrays, select/clamp, the math library, and debug mode (asserts,
per-dimension bounds checks)."""

from __future__ import annotations

import re

import math

import numpy as np
import pytest
from interp_support import interpret

import pykern as pk

rng = np.random.default_rng(9)


@pk.func
def square(x):
    return x * x


@pk.func
def hypot(a, b):
    return pk.sqrt(square(a) + square(b))


@pk.func
def first_above(x, n, limit):
    for j in range(n):
        if x[j] > limit:
            return j
    return -1


@pk.func
def count(counter, k):
    pk.atomic_add(counter, 0, k)


@pk.func
def block_total(v):
    return pk.subgroup_add(v)


def uses_functions(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:], where: pk.i32[:],
                   counter: pk.i32[:], totals: pk.i32[:]):
    i = pk.global_id(0)
    out[i] = hypot(x[i], y[i])
    where[i] = first_above(x, len(x), y[i])
    count(counter, i)
    totals[i] = block_total(i)


def test_device_functions_nested_void_and_synchronising():
    x = rng.uniform(0, 10, 16).astype(np.float32)
    y = rng.uniform(0, 12, 16).astype(np.float32)
    out, where = np.zeros(16, np.float32), np.zeros(16, np.int32)
    counter, totals = np.zeros(1, np.int32), np.zeros(16, np.int32)
    compiled = interpret(uses_functions, 16, x, y, out, where, counter, totals,
                         workgroup=(16, 1, 1), subgroup_size=8)
    np.testing.assert_array_equal(out, np.sqrt(x * x + y * y))
    want = [next((j for j in range(16) if x[j] > limit), -1) for limit in y]
    assert list(where) == want
    assert counter[0] == sum(range(16))
    assert list(totals) == [sum(range(8))] * 8 + [sum(range(8, 16))] * 8
    # a function that synchronises: a generator, called with its place in the progress path
    assert re.search(r"yield from _call_at\(_path, \d+, f_block_total\w*\(", compiled.source)


def scratch(x: pk.i32[:], out: pk.i32[:], fresh: pk.i32[:]):
    i = pk.global_id(0)
    acc = pk.local(pk.i32, (2, 3))
    for r in range(2):
        for c in range(3):
            acc[r, c] = x[i] * (r + 1) + c
    s = 0
    for r in range(2):
        for c in range(3):
            s += acc[1 - r, 2 - c] * (3 * r + c + 1)
    out[i] = s
    fresh[i] = acc[0, 0] - x[i]  # each invocation has its own array


def test_local_arrays_are_per_invocation_and_row_major():
    x = rng.integers(-50, 50, 10).astype(np.int32)
    out, fresh = np.zeros(10, np.int32), np.ones(10, np.int32)
    interpret(scratch, 10, x, out, fresh)
    acc = x[:, None, None] * np.array([1, 2])[None, :, None] + np.arange(3)[None, None, :]
    weights = np.arange(1, 7).reshape(2, 3)
    np.testing.assert_array_equal(out, (acc[:, ::-1, ::-1] * weights).sum(axis=(1, 2)))
    assert not fresh.any()


def selects(x: pk.f32[:], out: pk.f32[:], cl: pk.f32[:], icl: pk.i32[:]):
    i = pk.global_id(0)
    out[i] = pk.select(x[i] > 0.0, x[i], -2.0 * x[i])
    cl[i] = pk.clamp(x[i], -1.0, 1.0)
    icl[i] = pk.clamp(pk.i32(x[i] * 10.0), -5, 5)


def test_select_and_clamp():
    x = np.array([-3, -0.5, 0, 0.25, 2, np.nan], np.float32)
    out, cl, icl = np.zeros_like(x), np.zeros_like(x), np.zeros(6, np.int32)
    interpret(selects, 6, x, out, cl, icl)
    np.testing.assert_array_equal(out, np.where(x > 0, x, np.float32(-2) * x))
    np.testing.assert_array_equal(cl, np.clip(x, -1, 1))  # NaN stays NaN, as numpy
    assert list(icl) == [-5, -5, 0, 2, 5, 0]


def math_lib(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:, :], pred: pk.bool_[:, :]):
    i = pk.global_id(0)
    out[i, 0] = pk.rsqrt(x[i])
    out[i, 1] = pk.exp2(y[i]) + pk.log2(x[i])
    out[i, 2] = pk.tan(y[i]) + pk.atan(y[i])
    out[i, 3] = pk.asin(pk.clamp(y[i], -1.0, 1.0)) + pk.acos(pk.clamp(y[i], -1.0, 1.0))
    out[i, 4] = pk.atan2(y[i], x[i])
    out[i, 5] = pk.sinh(y[i]) + pk.cosh(y[i])
    out[i, 6] = pk.erf(y[i])
    out[i, 7] = pk.trunc(y[i] * 3.0)
    out[i, 8] = pk.round(y[i] * 4.0)
    out[i, 9] = pk.fma(x[i], y[i], 1.0)
    out[i, 10] = pk.copysign(x[i], y[i])
    out[i, 11] = pk.f32(round(y[i] * 4.0))  # Python's round() gives an int
    pred[i, 0] = pk.isnan(x[i] - y[i])
    pred[i, 1] = pk.isinf(x[i] / y[i])


def test_math_library_matches_numpy_in_f32():
    x = np.concatenate([rng.uniform(0.1, 4, 30), [np.inf, 1.0]]).astype(np.float32)
    y = np.concatenate([rng.uniform(-2, 2, 28), [0.5, -0.5, 1.5, 0.0]]).astype(np.float32)
    y[27], x[27] = np.inf, np.inf
    out, pred = np.zeros((32, 12), np.float32), np.zeros((32, 2), bool)
    interpret(math_lib, 32, x, y, out, pred)
    with np.errstate(all="ignore"):
        c = np.clip(y, -1, 1)
        want = [np.float32(1) / np.sqrt(x), np.exp2(y) + np.log2(x), np.tan(y) + np.arctan(y),
                np.arcsin(c) + np.arccos(c), np.arctan2(y, x), np.sinh(y) + np.cosh(y),
                np.array([math.erf(v) for v in y], np.float32), np.trunc(y * np.float32(3)),
                np.rint(y * np.float32(4)),
                (x.astype(np.float64) * y + 1).astype(np.float32), np.copysign(x, y),
                np.clip(np.rint(y * np.float32(4)), -2**31, 2**31 - 1).astype(np.float32)]
        for k, w in enumerate(want):
            np.testing.assert_array_equal(out[:, k], w, err_msg=f"column {k}")
        np.testing.assert_array_equal(pred[:, 0], np.isnan(x - y))
        np.testing.assert_array_equal(pred[:, 1], np.isinf(x / y))
    assert out[28, 8] == 2.0 and out[29, 8] == -2.0  # halves to even


def checked(x: pk.f32[:, :], k: pk.i32, out: pk.f32[:]):
    i = pk.global_id(0)
    assert x[i, 0] >= 0.0, "inputs must not be negative"
    out[i] = x[i, k]


def test_debug_mode_checks_asserts_and_every_index():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros(3, np.float32)
    interpret(checked, 2, x, 4, out)  # k = 4 is inside the buffer for rows 0 and 1 ...
    assert list(out[:2]) == [4, 8]  # ... so without debug mode the GPU reads the next row
    with pytest.raises(pk.KernelIndexError, match=r"index \(0, 4\) is out of bounds for 'x' "
                                                  r"with shape \(3, 4\)"):
        interpret(checked, 3, x, 4, out, debug=True)
    x[1, 0] = -1
    with pytest.raises(pk.KernelAssertionError) as info:
        interpret(checked, 3, x, 0, out, debug=True)
    message = str(info.value)
    assert "inputs must not be negative" in message and "invocation (1, 0, 0)" in message
    assert 'assert x[i, 0] >= 0.0, "inputs must not be negative"' in message
    interpret(checked, 3, x, 0, out)  # asserts only run in debug mode
