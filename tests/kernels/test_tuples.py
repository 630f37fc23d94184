"""Tuples: returns of several values from @pk.func, unpacking assignments, array shapes as
tuples, pk.unravel and pk.ravel. Each kernel runs on the device and in the interpreter and is
compared with Python or numpy."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

BACKENDS = [pytest.param(False, id="vulkan"), pytest.param(True, id="interpreter")]
rng = np.random.default_rng(9)


@pk.func
def floor_divmod(a, b):
    q = a // b
    return q, a - q * b


@pk.func
def min_max_count(x, row, lo_limit):
    """Elements of one row of a 2-D array: min, max, and how many are above lo_limit."""
    lo = x[row, 0]
    hi = x[row, 0]
    count = 0
    for c in range(x.shape[1]):
        lo = min(lo, x[row, c])
        hi = max(hi, x[row, c])
        if x[row, c] > lo_limit:
            count += 1
    if count == 0:
        return lo, hi, -1  # an early return of the same tuple shape and types
    return lo, hi, count


@pk.func
def swapped(a, b):
    return floor_divmod(b, a)  # a tuple returned on from another function


@pk.func
def sorted_pair(a, b):
    if a > b:
        a, b = b, a
    return a, b


@pytest.mark.parametrize("interpret", BACKENDS)
def test_tuple_return_of_two_values_matches_python_divmod(interpret):
    @pk.kernel(interpret=interpret)
    def k(a: pk.i32[:], b: pk.i32[:], q: pk.i32[:], r: pk.i32[:]):
        i = pk.global_id(0)
        q[i], r[i] = floor_divmod(a[i], b[i])

    a = rng.integers(-1000, 1000, 200, dtype=np.int32)
    b = rng.integers(1, 30, 200, dtype=np.int32) * rng.choice([-1, 1], 200).astype(np.int32)
    q, r = np.zeros_like(a), np.zeros_like(a)
    k[200](a, b, q, r)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)


@pytest.mark.parametrize("interpret", BACKENDS)
def test_tuple_of_mixed_types_with_early_return_in_a_loop(interpret):
    @pk.kernel(interpret=interpret)
    def k(x: pk.f32[:, :], lo: pk.f32[:], hi: pk.f32[:], count: pk.i32[:], reps: pk.i32):
        row = pk.global_id(0)
        total = 0
        low, high = 0.0, 0.0
        for _rep in range(reps):  # calls in a loop with a run-time trip count
            low, high, n = min_max_count(x, row, 0.5)
            total += n
        lo[row] = low
        hi[row] = high
        count[row] = total

    x = rng.uniform(-1, 1, (40, 7)).astype(np.float32)
    x[3] = -0.25  # no element above the limit: the early return
    lo, hi = np.zeros(40, np.float32), np.zeros(40, np.float32)
    count = np.zeros(40, np.int32)
    k[40](x, lo, hi, count, 3)
    np.testing.assert_array_equal(lo, x.min(axis=1))
    np.testing.assert_array_equal(hi, x.max(axis=1))
    above = (x > 0.5).sum(axis=1)
    np.testing.assert_array_equal(count, 3 * np.where(above == 0, -1, above))


@pytest.mark.parametrize("interpret", BACKENDS)
def test_unpacking_swaps_and_literals(interpret):
    @pk.kernel(interpret=interpret)
    def k(a: pk.i32[:], b: pk.i32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        x, y = 1, 2.0  # each literal takes its own default type
        s, t = a[i], b[i]
        s, t = t, s  # both read before either is written
        lo, hi = sorted_pair(s, t)
        a[i], b[i] = b[i], a[i]  # element swap
        q, r = swapped(3, t)
        out[i] = pk.f32(lo * 1000 + hi) + x * 0.5 + y + pk.f32(q * 100 + r)

    a = rng.integers(0, 100, 64, dtype=np.int32)
    b = rng.integers(0, 100, 64, dtype=np.int32)
    a0, b0 = a.copy(), b.copy()
    out = np.zeros(64, np.float32)
    k[64](a, b, out)
    np.testing.assert_array_equal(a, b0)
    np.testing.assert_array_equal(b, a0)
    lo, hi = np.minimum(a0, b0), np.maximum(a0, b0)
    expected = lo * 1000 + hi + 0.5 + 2.0 + (a0 // 3) * 100 + a0 % 3
    np.testing.assert_array_equal(out, expected.astype(np.float32))


@pytest.mark.parametrize("interpret", BACKENDS)
def test_unravel_and_ravel_match_numpy(interpret):
    @pk.kernel(interpret=interpret)
    def k(x: pk.f32[:, :, :], out: pk.i32[:, :], flat: pk.i32[:]):
        i = pk.global_id(0)
        i0, i1, i2 = pk.unravel(i, x.shape)
        out[i, 0] = i0
        out[i, 1] = i1
        out[i, 2] = i2
        j0, j1 = pk.unravel(i, (x.shape[0] * 2, 6 * len(x.shape) - 6))  # a tuple of exprs
        out[i, 3] = j0 * 100 + j1 + pk.unravel(i, (5, 7))[1] * 0
        out[i, 4] = pk.unravel(i + 0, 7)[0] + pk.unravel(i, x.shape)[-1] * 1000
        flat[i] = pk.ravel((i2, i1, i0), (x.shape[2], x.shape[1], x.shape[0]))

    shape = (3, 4, 5)
    n = int(np.prod(shape))
    x = np.zeros(shape, np.float32)
    out = np.zeros((n, 5), np.int32)
    flat = np.zeros(n, np.int32)
    k[n](x, out, flat)
    idx = np.unravel_index(np.arange(n), shape)
    np.testing.assert_array_equal(out[:, :3], np.stack(idx, axis=1))
    j = np.unravel_index(np.arange(n), (6, 12))
    np.testing.assert_array_equal(out[:, 3], j[0] * 100 + j[1])
    np.testing.assert_array_equal(out[:, 4], np.arange(n) + idx[2] * 1000)
    np.testing.assert_array_equal(flat, np.ravel_multi_index(idx[::-1], shape[::-1]))


@pytest.mark.parametrize("interpret", BACKENDS)
def test_unravel_follows_floor_division_for_negative_and_wide_ints(interpret):
    @pk.kernel(interpret=interpret)
    def k(v: pk.i64[:], out: pk.i64[:, :]):
        i = pk.global_id(0)
        a, b = pk.unravel(v[i], (7, 5))
        out[i, 0] = a
        out[i, 1] = b

    if not interpret and not pk.runtime.get_device().features.int64:
        pytest.skip("the device has no int64")
    v = np.array([-36, -1, 0, 4, 34, 35, 3_000_000_000], np.int64)
    out = np.zeros((7, 2), np.int64)
    k[7](v, out)
    np.testing.assert_array_equal(out[:, 0], v // 5)
    np.testing.assert_array_equal(out[:, 1], v % 5)
    assert pk.unravel(-36, (7, 5)) == (-8, 4) and pk.ravel((1, 2), (7, 5)) == 7


@pytest.mark.parametrize("interpret", BACKENDS)
def test_unravel_of_an_atomic_evaluates_it_once(interpret):
    @pk.kernel(interpret=interpret)
    def k(counter: pk.i32[:], out: pk.i32[:, :]):
        i = pk.global_id(0)
        r, c = pk.unravel(pk.atomic_add(counter, 0, 1), (4, 8))
        out[r, c] = i + 1

    counter = np.zeros(1, np.int32)
    out = np.zeros((4, 8), np.int32)
    k[32](counter, out)
    assert counter[0] == 32
    assert sorted(out.ravel().tolist()) == list(range(1, 33))


@pk.func
def flat_index(idx, shape):
    """A tuple parameter is a tuple in the function: indexed, measured, passed on."""
    assert len(idx) == len(shape)
    return pk.ravel(idx, shape) + 0 * shape[len(shape) - 1]


@pk.func
def halves(shape):
    a, b = shape
    return a // 2, b // 2


@pytest.mark.parametrize("interpret", BACKENDS)
def test_tuple_variables_and_tuple_arguments(interpret):
    @pk.kernel(interpret=interpret)
    def k(x: pk.f32[:, :], out: pk.i32[:, :]):
        i = pk.global_id(0)
        shape = x.shape
        idx = pk.unravel(i, shape)
        r, c = idx
        out[i, 0] = flat_index(idx, shape)
        out[i, 1] = flat_index((c, r), (shape[1], shape[0]))
        h = halves(shape)
        hr, hc = h
        if r >= hr:
            idx = (r - hr, c)  # a tuple variable is re-assigned with one of the same types
        out[i, 2] = idx[0] * 100 + idx[1] + len(idx) * 10000 + hc * 0

    x = np.zeros((6, 5), np.float32)
    out = np.zeros((30, 3), np.int32)
    k[30](x, out)
    r, c = np.unravel_index(np.arange(30), (6, 5))
    np.testing.assert_array_equal(out[:, 0], np.arange(30))
    np.testing.assert_array_equal(out[:, 1], c * 6 + r)
    np.testing.assert_array_equal(out[:, 2], np.where(r >= 3, r - 3, r) * 100 + c + 20000)


@pk.func
def exchange_with_neighbour(tile, lid, v):
    """Writes shared memory, waits at a barrier, returns a tuple read after it."""
    tile[lid] = v
    pk.barrier()
    return tile[(lid + 1) % 8], lid


@pk.func
def log_and_split(log, i, v):
    log[i] = v * 2
    return v // 10, v % 10


@pytest.mark.parametrize("interpret", BACKENDS)
def test_tuple_functions_with_barriers_in_debug_mode_and_as_statements(interpret):
    @pk.kernel(interpret=interpret, debug=True, workgroup=(8, 1, 1))
    def k(x: pk.i32[:], out: pk.i32[:], log: pk.i32[:]):
        i = pk.global_id(0)
        tile = pk.shared(pk.i32, 8)
        right, lid = exchange_with_neighbour(tile, pk.local_id(0), x[i])
        log_and_split(log, i, x[i])  # the result unused: the call still runs
        tens, ones = log_and_split(log, i, right)
        i, tens = pk.unravel(i, (4, 8))[1], tens + i * 0  # a target also read on the right
        out[pk.global_id(0)] = tens * 100 + ones * 10 + lid + i * 0

    x = rng.integers(0, 100, 32, dtype=np.int32)
    out, log = np.zeros(32, np.int32), np.zeros(32, np.int32)
    k[32](x, out, log)
    lane = np.arange(32) % 8
    right = x[(np.arange(32) // 8) * 8 + (lane + 1) % 8]
    np.testing.assert_array_equal(out, (right // 10) * 100 + (right % 10) * 10 + lane)
    np.testing.assert_array_equal(log, right * 2)


@pytest.mark.parametrize("interpret", BACKENDS)
def test_generic_ndim_kernel_indexes_with_tuples(interpret):
    """One kernel for every ndim: arrays indexed by a tuple, tuples sliced and joined."""
    @pk.kernel(interpret=interpret)
    def k(x: pk.Array, out: pk.Array, row_sums: pk.Array):
        i = pk.global_id(0)
        idx = pk.unravel(i, x.shape)
        out[idx] = x[idx] * 2
        if idx[-1] == 0:  # the first element of each last-axis row sums that row
            head = idx[:-1]
            total = x.dtype(0)
            for c in range(x.shape[-1]):
                total += x[head + (c,)]
            row_sums[pk.unravel(pk.ravel(head, x.shape[:-1]), row_sums.shape)] = total
        zeros = (0,) * len(x.shape)
        if i == 0:
            out[zeros] = out[zeros] + x[zeros[1:] + (0,)] * 0

    for shape in [(12,), (3, 4), (2, 3, 4), (2, 2, 3, 2)]:
        x = rng.integers(-50, 50, shape).astype(np.int32)
        out = np.zeros_like(x)
        sums = np.zeros(shape[:-1] if len(shape) > 1 else (1,), np.int32)
        k[x.size](x, out, sums)
        np.testing.assert_array_equal(out, x * 2)
        np.testing.assert_array_equal(sums, x.sum(axis=-1).reshape(sums.shape))
