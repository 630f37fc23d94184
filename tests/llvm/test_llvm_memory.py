"""Atomics, pk.shared memory and pk.barrier() on the host backend, against the interpreter.

Both run workgroups and invocations in the same order (x fastest) on one thread
(`threads=1` where workgroups race through atomics: the pool's order is its threads'), so even
float atomic sums agree bit for bit; barrier kernels run region by region (`pykern.llvm.regions`).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from differential import check

import pykern as pk

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernels"))
from test_barriers import TILE, block_sum_of_squares, tiled_matmul  # noqa: E402

rng = np.random.default_rng(3)


@pk.func
def neighbour(v, buf):
    """The value of the next invocation of the workgroup, through shared memory."""
    buf[pk.local_id(0)] = v
    pk.barrier()
    got = buf[(pk.local_id(0) + 1) % 16]
    pk.barrier()
    return got


@pk.func
def twice_rotated(v, buf):
    first = neighbour(v, buf)
    return neighbour(first, buf)


@pytest.mark.parametrize("t", [pk.i32, pk.u32, pk.i64, pk.u64], ids=lambda t: t.name)
def test_integer_atomics_return_the_old_value(t):
    @pk.kernel
    def atomics(v: pk.Array, acc: pk.Array, old: pk.Array):
        i = pk.global_id(0)
        b = i % 4
        old[i, 0] = pk.atomic_add(acc, b, v[i])
        old[i, 1] = pk.atomic_sub(acc, 4 + b, v[i])
        old[i, 2] = pk.atomic_min(acc, 8 + b, v[i])
        old[i, 3] = pk.atomic_max(acc, 12 + b, v[i])
        old[i, 4] = pk.atomic_and_(acc, 16 + b, v[i])
        old[i, 5] = pk.atomic_or_(acc, 20 + b, v[i])
        old[i, 6] = pk.atomic_xor(acc, 24 + b, v[i])
        old[i, 7] = pk.atomic_exchange(acc, 28 + b, v[i])
        old[i, 8] = pk.atomic_cas(acc, 32 + b, v[i] % 3, v[i])

    info = np.iinfo(t.numpy)
    v = rng.integers(max(info.min, -1000), 1000, 300).astype(t.numpy)
    acc = rng.integers(0, 5, 36).astype(t.numpy)
    check(atomics, v.size, v, acc, np.zeros((v.size, 9), t.numpy), threads=1)


def test_float_atomics_add_min_max_exchange_and_cas_on_bits():
    @pk.kernel
    def atomics(v: pk.f32[:], acc: pk.f32[:], old: pk.f32[:, :]):
        i = pk.global_id(0)
        old[i, 0] = pk.atomic_add(acc, i % 3, v[i])
        old[i, 1] = pk.atomic_min(acc, 3, v[i])
        old[i, 2] = pk.atomic_max(acc, 4, v[i])
        old[i, 3] = pk.atomic_exchange(acc, 5, v[i])
        old[i, 4] = pk.atomic_cas(acc, 6, -0.0, v[i])

    v = rng.standard_normal(500).astype(np.float32)
    v[::17] = np.nan
    acc = np.array([0, 0, 0, np.nan, 1, 2, 0.0, 0], np.float32)  # +0.0 is not -0.0 to CAS
    check(atomics, v.size, v, acc, np.zeros((v.size, 5), np.float32), threads=1)


def test_atomics_on_shared_memory_make_a_histogram():
    @pk.kernel(workgroup=(64,))
    def histogram(v: pk.i32[:], counts: pk.i32[:]):
        local = pk.shared(pk.i32, 8)
        t = pk.local_id(0)
        if t < 8:
            local[t] = 0
        pk.barrier()
        if pk.global_id(0) < pk.grid(0):
            pk.atomic_add(local, v[pk.global_id(0)] % 8, 1)
        pk.barrier()
        if t < 8:
            pk.atomic_add(counts, t, local[t])

    v = rng.integers(0, 1000, 1000, dtype=np.int32)
    counts = check(histogram, v.size, v, np.zeros(8, np.int32))[1]
    np.testing.assert_array_equal(counts, np.bincount(v % 8, minlength=8))


def test_a_reduction_over_barriers_with_a_partial_last_workgroup():
    kern = pk.kernel(block_sum_of_squares, workgroup=(64,))
    x = np.arange(1000, dtype=np.float32) / 100
    total = check(kern, x.size, x, np.zeros(1, np.float32), threads=1)[1]
    assert total[0] == pytest.approx(float((x.astype(np.float64) ** 2).sum()), rel=1e-5)


def test_tiled_matmul_with_barriers_in_a_loop():
    kern = pk.kernel(tiled_matmul, workgroup=(TILE, TILE))
    m, k, n = 40, 37, 30
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = check(kern, (m, n), a, b, np.full((m, n), np.nan, np.float32))[2]
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_values_live_across_barriers_and_early_return():
    @pk.kernel(workgroup=(32,))
    def rotate(x: pk.i32[:], out: pk.i32[:], alive: pk.i32[:]):
        buf = pk.shared(pk.i32, 32)
        t = pk.local_id(0)
        mine = x[pk.global_id(0)] * 3
        scratch = pk.local(pk.i32, 2)
        scratch[1] = mine + 1
        buf[t] = mine
        pk.barrier()
        left = buf[(t + 1) % 32]
        if t % 5 == 4:
            return  # takes no part in later barriers
        pk.barrier()
        for r in range(3):
            buf[t] = left + r
            pk.barrier()
            left = buf[(t + 31) % 32]
            pk.barrier()
        out[pk.global_id(0)] = left + mine + scratch[1]
        alive[pk.global_id(0)] = 1

    x = rng.integers(-100, 100, 96, dtype=np.int32)
    check(rotate, x.size, x, np.zeros_like(x), np.zeros_like(x))


def test_barriers_inside_device_functions_are_inlined_into_regions():
    @pk.kernel(workgroup=(16,))
    def rotate(x: pk.i32[:], out: pk.i32[:, :]):
        buf = pk.shared(pk.i32, 16)
        i = pk.global_id(0)
        a = neighbour(x[i], buf)
        b = twice_rotated(x[i] * 10, buf)
        for _ in range(2):
            a = neighbour(a, buf)
        out[i, 0] = a
        out[i, 1] = b

    x = rng.integers(-100, 100, 48, dtype=np.int32)
    out = check(rotate, x.size, x, np.zeros((x.size, 2), np.int32))[1]
    lanes = np.arange(48)
    group = lanes // 16 * 16
    np.testing.assert_array_equal(out[:, 0], x[group + (lanes + 3) % 16])
    np.testing.assert_array_equal(out[:, 1], 10 * x[group + (lanes + 2) % 16])
