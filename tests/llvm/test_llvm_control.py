"""Control flow, locals, device functions, pk.local arrays, strided views and the builtin ids
on the host backend, against the interpreter (all exact)."""

from __future__ import annotations

import numpy as np
from differential import check

import pykern as pk

rng = np.random.default_rng(11)


@pk.func
def clamp_add(a, b, hi):
    s = a + b
    if s > hi:
        return hi
    return s


@pk.func
def divmod_pair(a, b):
    return a // b, a % b


def test_if_for_while_break_continue_and_early_return():
    @pk.kernel
    def flow(a: pk.i32[:], out: pk.i32[:, :]):
        i = pk.global_id(0)
        x = a[i]
        if x < -50:
            out[i, 0] = -1
            return
        elif x < 0:
            x = -x
        else:
            x = x + 1
        total = 0
        j = -5
        for j in range(x % 7, 20, 3):
            if j == 13:
                continue
            total += j
        for j in range(10, x % 5, -2):
            total -= j
        k = 0
        while True:
            k += 1
            if k * k > x:
                break
        out[i, 0] = total
        out[i, 1] = k
        out[i, 2] = j  # the loop variable keeps its last value
        out[i, 3] = x if total > 0 else -x  # only one side evaluated
        out[i, 4] = 1 if (x > 3 and a[i] % 2 == 0) or x == 7 else 0

    a = rng.integers(-100, 100, 500, dtype=np.int32)
    check(flow, a.size, a, np.zeros((a.size, 5), np.int32))


def test_range_bounds_near_the_type_limit_do_not_wrap():
    @pk.kernel
    def near(start: pk.i32, out: pk.i32[:]):
        n = 0
        last = 0
        for j in range(start, 2147483647, 1000000000):
            n += 1
            last = j
        out[0] = n
        out[1] = last

    out = check(near, 1, 2147483000 - 2000000000, np.zeros(2, np.int32))[1]
    assert out.tolist() == [3, 2147483000]  # the next value, 3147483000, is past i32


def test_device_functions_and_tuple_returns():
    @pk.kernel
    def use(a: pk.i32[:], b: pk.i32[:], out: pk.i32[:, :]):
        i = pk.global_id(0)
        out[i, 0] = clamp_add(a[i], b[i], 50)
        q, r = divmod_pair(a[i], b[i] | 1)
        out[i, 1] = q
        out[i, 2] = r

    a = rng.integers(-100, 100, 300, dtype=np.int32)
    b = rng.integers(-100, 100, 300, dtype=np.int32)
    check(use, a.size, a, b, np.zeros((a.size, 3), np.int32))


def test_local_arrays_per_invocation():
    @pk.kernel
    def sort4(a: pk.i32[:, :], out: pk.i32[:, :]):
        i = pk.global_id(0)
        buf = pk.local(pk.i32, 4)
        for k in range(4):
            buf[k] = a[i, k]
        for n in range(4):
            for k in range(3 - n):
                if buf[k] > buf[k + 1]:
                    t = buf[k]
                    buf[k] = buf[k + 1]
                    buf[k + 1] = t
        for k in range(4):
            out[i, k] = buf[k]

    a = rng.integers(-9, 9, (200, 4), dtype=np.int32)
    out = check(sort4, 200, a, np.zeros_like(a))[1]
    np.testing.assert_array_equal(out, np.sort(a, axis=1))


def test_strided_and_offset_views_are_written_in_place():
    @pk.kernel
    def scale(x: pk.f32[:, :], out: pk.f32[:, :]):
        i = pk.global_id(0)
        j = pk.global_id(1)
        out[i, j] = x[i, j] * 2.0 + pk.f32(x.shape[1])

    base = rng.standard_normal((40, 30)).astype(np.float32)
    x = base[3:, ::-2]
    target = np.zeros((30, 80), np.float32)
    out = target.T[5:42, 1::2]  # a transposed, offset, strided view
    assert out.shape == x.shape
    expected = x * 2.0 + np.float32(x.shape[1])
    scale_host = check(scale, x.shape, x, out)[1]
    np.testing.assert_array_equal(scale_host, expected)


def test_builtin_ids_in_three_dimensions():
    @pk.kernel(workgroup=(4, 3, 2))
    def ids(out: pk.i32[:, :, :, :]):
        x = pk.global_id(0)
        y = pk.global_id(1)
        z = pk.global_id(2)
        out[x, y, z, 0] = pk.local_id(0) + 10 * pk.local_id(1) + 100 * pk.local_id(2)
        out[x, y, z, 1] = pk.group_id(0) + 10 * pk.group_id(1) + 100 * pk.group_id(2)
        out[x, y, z, 2] = pk.num_groups(0) + 10 * pk.num_groups(1) + 100 * pk.num_groups(2)
        out[x, y, z, 3] = pk.grid(0) + 10 * pk.grid(1) + 100 * pk.grid(2) + pk.group_size(2)

    check(ids, (9, 7, 5), np.zeros((9, 7, 5, 4), np.int32))


def test_scalars_of_every_kind_and_bool_arrays():
    @pk.kernel
    def scalars(flag: pk.bool_, small: pk.i8, big: pk.u64, h: pk.f16, d: pk.f64,
                m: pk.bool_[:], out: pk.f64[:]):
        i = pk.global_id(0)
        v = d + pk.f64(h) + pk.f64(big) + pk.f64(small)
        if flag and m[i]:
            v = -v
        m[i] = not m[i]
        out[i] = v

    m = rng.integers(0, 2, 50).astype(bool)
    check(scalars, 50, True, -7, 2**63 + 5, 1.5, 0.25, m, np.zeros(50))


def test_zero_grid_runs_nothing():
    @pk.kernel
    def fill(out: pk.i32[:]):
        out[pk.global_id(0)] = 1

    out = np.zeros(4, np.int32)
    assert not check(fill, 0, out)[0].any()
