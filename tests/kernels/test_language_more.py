"""The rest of the language through the public API: device functions, shared and local memory,
atomics, subgroups, the full math list. Each kernel runs on the device and is compared with
numpy or Python."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk

rng = np.random.default_rng(99)


@pk.func
def smoothstep(lo, hi, x):
    t = pk.clamp((x - lo) / (hi - lo), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@pk.func
def gcd(a, b):
    while b != 0:
        t = b
        b = a % b
        a = t
    return a


@pk.func
def first_negative(x, n):
    for i in range(n):
        if x[i] < 0.0:
            return i
    return -1


def test_device_functions_typed_per_call_with_early_returns_and_arrays():
    @pk.kernel
    def k(x: pk.f32[:], a: pk.i32[:], b: pk.i32[:], fout: pk.f32[:], iout: pk.i32[:]):
        i = pk.global_id(0)
        fout[i] = smoothstep(-1.0, 1.0, x[i])
        iout[i] = gcd(a[i], b[i]) * 1000 + first_negative(x, 4)

    x = rng.uniform(-2, 2, 300).astype(np.float32)
    a = rng.integers(1, 1000, 300, dtype=np.int32)
    b = rng.integers(1, 1000, 300, dtype=np.int32)
    fout, iout = np.empty_like(x), np.empty_like(a)
    k[300](x, a, b, fout, iout)
    t = np.clip((x.astype(np.float64) + 1) / 2, 0, 1)
    np.testing.assert_allclose(fout, t * t * (3 - 2 * t), atol=1e-6)
    neg = next((i for i in range(4) if x[i] < 0), -1)
    np.testing.assert_array_equal(iout, np.gcd(a, b) * 1000 + neg)
    assert smoothstep(0.0, 1.0, 0.5) == 0.5  # a device function is plain Python on the host


def test_shared_memory_block_sum_with_barriers():
    @pk.kernel(workgroup=(64,))
    def block_sum(x: pk.f32[:], sums: pk.f32[:]):
        buf = pk.shared(pk.f32, 64)
        t = pk.local_id(0)
        i = pk.global_id(0)
        buf[t] = x[i] if i < len(x) else 0.0
        pk.barrier()
        step = 32
        while step > 0:
            if t < step:
                buf[t] += buf[t + step]
            pk.barrier()
            step //= 2
        if t == 0:
            sums[pk.group_id(0)] = buf[0]

    x = rng.integers(-8, 8, 64 * 10).astype(np.float32)  # exact sums in f32
    sums = np.zeros(10, np.float32)
    block_sum[x.size](x, sums)
    np.testing.assert_array_equal(sums, x.reshape(10, 64).sum(axis=1))


def test_local_array_per_invocation():
    @pk.kernel
    def running_max(x: pk.i32[:, :], out: pk.i32[:, :]):
        r = pk.global_id(0)
        window = pk.local(pk.i32, 8)
        for c in range(8):
            window[c] = x[r, c]
        for c in range(1, 8):
            window[c] = max(window[c], window[c - 1])
        for c in range(8):
            out[r, c] = window[c]

    x = rng.integers(-100, 100, (50, 8), dtype=np.int32)
    out = np.empty_like(x)
    running_max[50](x, out)
    np.testing.assert_array_equal(out, np.maximum.accumulate(x, axis=1))


def test_atomic_histogram_and_old_values():
    @pk.kernel
    def histogram(x: pk.i32[:], bins: pk.u32[:], tickets: pk.i32[:], counter: pk.i32[:]):
        i = pk.global_id(0)
        pk.atomic_add(bins, x[i] % len(bins), 1)
        tickets[i] = pk.atomic_add(counter, 0, 1)  # the old value: a unique ticket

    x = rng.integers(0, 1000, 5000, dtype=np.int32)
    bins = np.zeros(16, np.uint32)
    tickets, counter = np.empty(5000, np.int32), np.zeros(1, np.int32)
    histogram[x.size](x, bins, tickets, counter)
    np.testing.assert_array_equal(bins, np.bincount(x % 16, minlength=16))
    assert counter[0] == 5000 and sorted(tickets.tolist()) == list(range(5000))


def test_atomic_min_max_and_or_xor_exchange_cas():
    @pk.kernel
    def k(x: pk.i32[:], r: pk.i32[:], flags: pk.u32[:]):
        i = pk.global_id(0)
        pk.atomic_min(r, 0, x[i])
        pk.atomic_max(r, 1, x[i])
        pk.atomic_or_(flags, 0, pk.u32(1) << pk.u32(i % 32))
        pk.atomic_xor(flags, 1, pk.u32(i))
        pk.atomic_and_(flags, 2, ~(pk.u32(1) << pk.u32(i % 32)))
        if i == 7:
            pk.atomic_exchange(r, 2, 42)
        pk.atomic_cas(r, 3, 0, i + 1)  # only the first invocation to get here wins

    x = rng.integers(-10_000, 10_000, 200, dtype=np.int32)
    r = np.array([2**31 - 1, -2**31, 0, 0], np.int32)
    flags = np.array([0, 0, 0xFFFFFFFF], np.uint32)
    k[200](x, r, flags)
    assert r[0] == x.min() and r[1] == x.max() and r[2] == 42 and 1 <= r[3] <= 200
    xor = 0
    for i in range(200):
        xor ^= i
    assert flags.tolist() == [0xFFFFFFFF, xor, 0]


def test_float_atomic_add_and_cas_loop_max():
    @pk.kernel
    def k(x: pk.f32[:], acc: pk.f32[:]):
        i = pk.global_id(0)
        pk.atomic_add(acc, 0, x[i])
        pk.atomic_max(acc, 1, x[i])

    x = rng.integers(-50, 50, 1000).astype(np.float32)
    acc = np.array([0.0, -np.inf], np.float32)
    k[1000](x, acc)
    assert acc[0] == x.sum() and acc[1] == x.max()


def test_atomics_on_shared_memory():
    @pk.kernel(workgroup=(64,))
    def k(x: pk.i32[:], out: pk.i32[:]):
        count = pk.shared(pk.i32, 1)
        if pk.local_id(0) == 0:
            count[0] = 0
        pk.barrier()
        if x[pk.global_id(0)] > 0:
            pk.atomic_add(count, 0, 1)
        pk.barrier()
        if pk.local_id(0) == 0:
            out[pk.group_id(0)] = count[0]

    x = rng.integers(-5, 5, 64 * 8, dtype=np.int32)
    out = np.zeros(8, np.int32)
    k[x.size](x, out)
    np.testing.assert_array_equal(out, (x.reshape(8, 64) > 0).sum(axis=1))


def test_subgroup_operations():
    size = pk.get_device().info.features.subgroup_size

    @pk.kernel(workgroup=(64,))
    def k(x: pk.i32[:], out: pk.i32[:, :]):
        i = pk.global_id(0)
        v = x[i]
        out[i, 0] = pk.subgroup_add(v)
        out[i, 1] = pk.subgroup_min(v)
        out[i, 2] = pk.subgroup_max(v)
        out[i, 3] = pk.subgroup_prefix_add(v)
        out[i, 4] = pk.subgroup_shuffle_xor(v, 1)
        out[i, 5] = pk.subgroup_broadcast(v, 0)
        out[i, 6] = int(pk.subgroup_any(v > 90)) + 2 * int(pk.subgroup_all(v > -1))
        out[i, 7] = pk.subgroup_lane() + 1000 * pk.subgroup_size()

    x = rng.integers(0, 100, 128, dtype=np.int32)
    out = np.zeros((128, 8), np.int32)
    k[128](x, out)
    groups = x.reshape(-1, size)
    lane = np.arange(128) % size
    g = np.repeat(np.arange(128 // size), size)
    np.testing.assert_array_equal(out[:, 0], groups.sum(1)[g])
    np.testing.assert_array_equal(out[:, 1], groups.min(1)[g])
    np.testing.assert_array_equal(out[:, 2], groups.max(1)[g])
    np.testing.assert_array_equal(out[:, 3], (np.cumsum(groups, 1) - groups).ravel())
    np.testing.assert_array_equal(out[:, 4], x[np.arange(128) ^ 1])
    np.testing.assert_array_equal(out[:, 5], groups[:, 0][g])
    np.testing.assert_array_equal(out[:, 6], (groups > 90).any(1)[g] + 2 * (groups > -1).all(1)[g])
    np.testing.assert_array_equal(out[:, 7], lane + 1000 * size)


MATH = [  # name, reference, domain, rtol, atol (docs/testing.md bounds)
    ("rsqrt", lambda x: 1 / np.sqrt(x), (0.01, 100), 3e-7, 0),
    ("exp2", np.exp2, (-10, 10), 3e-6, 0),
    ("log2", np.log2, (0.01, 100), 4e-7, 5e-7),
    ("tan", np.tan, (-1.2, 1.2), 2e-3, 5e-4),
    ("asin", np.arcsin, (-1, 1), 4e-4, 1e-6),
    ("acos", np.arccos, (-1, 1), 4e-4, 1e-6),
    ("atan", np.arctan, (-10, 10), 4e-4, 1e-6),
    ("sinh", np.sinh, (-5, 5), 4e-4, 1e-6),
    ("cosh", np.cosh, (-5, 5), 4e-4, 1e-6),
    ("erf", np.vectorize(math.erf), (-4, 4), 1e-5, 1e-6),
    ("trunc", np.trunc, (-10, 10), 0, 0),
    ("round", np.round, (-10, 10), 0, 0),  # halves to even, as numpy and Python
]


@pytest.mark.parametrize("name, ref, domain, rtol, atol", MATH, ids=[m[0] for m in MATH])
def test_math_list(name, ref, domain, rtol, atol):
    fn = getattr(pk, name)

    @pk.kernel
    def k(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        out[i] = fn(x[i])

    x = rng.uniform(*domain, 2000).astype(np.float32)
    if name == "round":
        x[:8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, -3.51]
    out = np.empty_like(x)
    k[x.size](x, out)
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=rtol, atol=atol)


def test_two_and_three_argument_math_and_predicates():
    @pk.kernel
    def k(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:, :], flags: pk.i32[:]):
        i = pk.global_id(0)
        out[i, 0] = math.atan2(y[i], x[i])
        out[i, 1] = pk.copysign(x[i], y[i])
        out[i, 2] = pk.fma(x[i], y[i], 1.0)
        out[i, 3] = pk.select(x[i] > y[i], x[i], y[i])
        out[i, 4] = pk.clamp(x[i], -1.0, 1.0)
        flags[i] = int(pk.isnan(x[i] / y[i])) + 2 * int(pk.isinf(x[i] / y[i]))

    x = rng.uniform(-5, 5, 500).astype(np.float32)
    y = rng.uniform(-5, 5, 500).astype(np.float32)
    x[:4], y[:4] = [0, 1, -1, 2], [0, 0, 0, 3]
    out, flags = np.empty((500, 5), np.float32), np.empty(500, np.int32)
    k[500](x, y, out, flags)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(out[:, 0], np.arctan2(y64, x64), rtol=4e-4, atol=1e-6)
    np.testing.assert_array_equal(out[:, 1], np.copysign(x, y))
    np.testing.assert_allclose(out[:, 2], x64 * y64 + 1, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out[:, 3], np.where(x > y, x, y))
    np.testing.assert_array_equal(out[:, 4], np.clip(x, -1, 1))
    with np.errstate(all="ignore"):
        q = x / y
    np.testing.assert_array_equal(flags, np.isnan(q) + 2 * np.isinf(q))


def test_python_math_names_return_ints_as_in_python():
    @pk.kernel
    def k(x: pk.f32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = math.floor(x[i]) * 1000 + round(x[i])

    x = np.array([1.5, 2.5, -1.5, -0.4, 3.7], np.float32)
    out = np.empty(5, np.int32)
    k[5](x, out)
    assert out.tolist() == [math.floor(v) * 1000 + round(v) for v in x.tolist()]


def test_math_constants():
    @pk.kernel
    def k(out: pk.f32[:]):
        out[0] = math.pi
        out[1] = math.e
        out[2] = -math.inf

    out = np.empty(3, np.float32)
    k[1](out)
    np.testing.assert_array_equal(out, np.array([math.pi, math.e, -math.inf], np.float32))
