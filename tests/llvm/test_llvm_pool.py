"""Workgroups over the thread pool (`pykern.llvm.pool`): the chunks cover the launch, native
calls release the GIL, and kernels with many workgroups (atomics, shared memory, barriers) give
bit for bit what one thread gives, on any number of threads."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time

import numpy as np
import pytest

import pykern as pk
import pykern.llvm
from pykern.llvm import pool

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernels"))
from test_barriers import TILE, tiled_matmul  # noqa: E402

rng = np.random.default_rng(11)
THREADS = [None, 2, 3, 7]  # the default (one per core), and more threads than cores


@pytest.mark.parametrize("total", [0, 1, 5, 8, 9, 1000])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_chunks_cover_the_workgroups_in_order(total, threads):
    ranges = pool.chunks(total, threads)
    flat = [g for first, end in ranges for g in range(first, end)]
    assert flat == list(range(total))
    assert len(ranges) <= pool.CHUNKS_PER_THREAD * threads
    sizes = [end - first for first, end in ranges]
    assert not sizes or max(sizes) - min(sizes) <= 1


def test_the_pool_is_sized_to_the_cores():
    assert 1 <= pool.core_count() <= (os.cpu_count() or 1)


def run(kernel, grid, *args, threads):
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    pykern.llvm.launch(kernel, grid, *copies, threads=threads)
    return copies


def same_as_one_thread(kernel, grid, *args):
    """Runs `kernel` on one thread and on each of THREADS; asserts every array is identical."""
    expected = run(kernel, grid, *args, threads=1)
    for threads in THREADS:
        got = run(kernel, grid, *args, threads=threads)
        for k, (g, e) in enumerate(zip(got, expected, strict=True)):
            if isinstance(e, np.ndarray):
                np.testing.assert_array_equal(g, e, err_msg=f"argument {k}, threads={threads}")
    return expected


def test_native_calls_release_the_gil():
    @pk.kernel
    def spin(n: pk.i32, out: pk.f32[:]):
        acc = 0.0
        for _ in range(n):
            acc = acc * 0.999 + 1.0  # no fast-math: not folded, one long dependency chain
        out[pk.global_id(0)] = acc

    out = np.zeros(1, np.float32)
    host = pykern.llvm.compile_for(spin, 1, 10, out)
    assert not host.native.entry._flags_ & ctypes._FUNCFLAG_PYTHONAPI  # a CFUNCTYPE call
    pykern.llvm.launch(spin, 1, 10, out, threads=1)  # compiled before timing
    worker = threading.Thread(target=pykern.llvm.launch,
                              args=(spin, 1, 100_000_000, out), kwargs={"threads": 1})
    ticks = [time.perf_counter()]
    worker.start()
    while worker.is_alive():
        time.sleep(0.001)
        ticks.append(time.perf_counter())
    spun = ticks[-1] - ticks[0]
    longest_pause = max(b - a for a, b in zip(ticks, ticks[1:]))
    # holding the GIL would stop this thread for the whole kernel
    assert spun < 0.05 or longest_pause < 0.5 * spun, (spun, longest_pause)
    assert out[0] == pytest.approx(1000.0, rel=1e-3)


def test_integer_atomics_from_many_workgroups():
    @pk.kernel(workgroup=(32,))
    def atomics(v: pk.i64[:], acc: pk.i64[:]):
        i = pk.global_id(0)
        b = i % 4
        pk.atomic_add(acc, b, v[i])
        pk.atomic_min(acc, 4 + b, v[i])
        pk.atomic_max(acc, 8 + b, v[i])
        pk.atomic_and_(acc, 12 + b, v[i] | 0xFFFF0)
        pk.atomic_or_(acc, 16 + b, v[i] & 0xFF)
        pk.atomic_xor(acc, 20 + b, v[i])

    v = rng.integers(-10**9, 10**9, 20_000).astype(np.int64)
    acc = np.zeros(24, np.int64)
    acc[12:16] = -1
    out = same_as_one_thread(atomics, v.size, v, acc)[1]
    lanes = np.arange(v.size) % 4
    assert [out[b] for b in range(4)] == [v[lanes == b].sum() for b in range(4)]
    assert [out[4 + b] for b in range(4)] == [min(0, v[lanes == b].min()) for b in range(4)]


def test_shared_memory_histogram_over_many_workgroups():
    @pk.kernel(workgroup=(64,))
    def histogram(v: pk.i32[:], counts: pk.i32[:]):
        local = pk.shared(pk.i32, 16)
        t = pk.local_id(0)
        if t < 16:
            local[t] = 0
        pk.barrier()
        if pk.global_id(0) < pk.grid(0):
            pk.atomic_add(local, v[pk.global_id(0)] % 16, 1)
        pk.barrier()
        if t < 16:
            pk.atomic_add(counts, t, local[t])

    v = rng.integers(0, 1000, 50_001, dtype=np.int32)
    counts = same_as_one_thread(histogram, v.size, v, np.zeros(16, np.int32))[1]
    np.testing.assert_array_equal(counts, np.bincount(v % 16, minlength=16))


def test_barriers_and_values_live_across_them_over_many_workgroups():
    @pk.kernel(workgroup=(32,))
    def rotate(x: pk.f32[:], out: pk.f32[:]):
        buf = pk.shared(pk.f32, 32)
        t = pk.local_id(0)
        mine = x[pk.global_id(0)] * 3.0
        left = mine
        for r in range(3):
            buf[t] = left + r
            pk.barrier()
            left = buf[(t + 1) % 32]
            pk.barrier()
        out[pk.global_id(0)] = left * mine

    x = rng.standard_normal(32 * 400).astype(np.float32)
    same_as_one_thread(rotate, x.size, x, np.zeros_like(x))


def test_tiled_matmul_over_a_two_dimensional_grid_of_workgroups():
    kern = pk.kernel(tiled_matmul, workgroup=(TILE, TILE))
    m, k, n = 130, 37, 99
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = same_as_one_thread(kern, (m, n), a, b, np.full((m, n), np.nan, np.float32))[2]
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads, inline", [(1, False), (1, True), (2, False), (2, True)])
def test_the_workgroups_running_time_is_returned(threads, inline):
    # what the host device weighs when it chooses the pool: the workgroups' own time, which
    # a pool thread's hand-off and the caller's wait do not add to; the entry runs half the
    # range and leaves the rest to the fallback, whose time counts too
    ran = []

    def entry(block, first, end):
        stop_at = max(first + 1, (first + end) // 2)
        for g in range(first, stop_at):
            time.sleep(0.002)
            ran.append(g)
        return stop_at

    def rest(block, first, end):
        for g in range(first, end):
            time.sleep(0.002)
            ran.append(g)
        return end

    start = time.perf_counter()
    busy = pool.run_workgroups(entry, 0, 6, threads, pool.StopWord(), None, inline,
                               lambda: rest)
    wall = time.perf_counter() - start
    assert sorted(ran) == list(range(6))
    assert 6 * 0.002 <= busy <= wall * threads
