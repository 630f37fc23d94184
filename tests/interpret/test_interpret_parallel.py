"""What invocations share: pk.shared arrays with barriers, atomics, subgroup operations."""

from __future__ import annotations

import re

import numpy as np
import pytest
from interp_support import interpret

import pykern as pk

rng = np.random.default_rng(5)


def reverse_blocks(x: pk.f32[:], out: pk.f32[:]):
    tile = pk.shared(pk.f32, (8,))
    i = pk.global_id(0)
    k = pk.local_id(0)
    tile[k] = x[i]
    pk.barrier()
    out[i] = tile[7 - k]


def test_shared_memory_and_barrier():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros_like(x)
    compiled = interpret(reverse_blocks, 32, x, out, workgroup=(8, 1, 1))
    np.testing.assert_array_equal(out, x.reshape(4, 8)[:, ::-1].ravel())
    assert compiled.lockstep and "yield None" in compiled.source


def block_sum(x: pk.f32[:], out: pk.f32[:]):
    buf = pk.shared(pk.f32, (16,))
    k = pk.local_id(0)
    buf[k] = x[pk.global_id(0)]
    pk.barrier()
    s = 8
    while s > 0:
        if k < s:
            buf[k] += buf[k + s]
        pk.barrier()
        s //= 2
    if k == 0:
        out[pk.group_id(0)] = buf[0]


def test_tree_reduction_with_barriers_in_a_loop():
    x = rng.uniform(-1, 1, 64).astype(np.float32)
    out = np.zeros(4, np.float32)
    interpret(block_sum, 64, x, out, workgroup=(16, 1, 1))
    want = x.reshape(4, 16).copy()
    s = 8
    while s:  # the same tree, in f32
        want[:, :s] += want[:, s:2 * s]
        s //= 2
    np.testing.assert_array_equal(out, want[:, 0])


def shared_histogram(bins: pk.i32[:], hist: pk.i32[:]):
    local_hist = pk.shared(pk.i32, (4,))
    k = pk.local_id(0)
    if k < 4:
        local_hist[k] = 0
    pk.barrier()
    pk.atomic_add(local_hist, bins[pk.global_id(0)], 1)
    pk.barrier()
    if k < 4:
        pk.atomic_add(hist, k, local_hist[k])


def test_atomics_on_shared_and_global_arrays():
    bins = rng.integers(0, 4, 256).astype(np.int32)
    hist = np.zeros(4, np.int32)
    interpret(shared_histogram, 256, bins, hist, workgroup=(32, 1, 1))
    np.testing.assert_array_equal(hist, np.bincount(bins, minlength=4))


def claim_slots(counter: pk.u32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    slot = pk.atomic_add(counter, 0, 1)
    out[slot] = i


def test_atomic_returns_the_old_value():
    counter, out = np.zeros(1, np.uint32), np.full(50, -1, np.int32)
    interpret(claim_slots, 50, counter, out)
    assert counter[0] == 50 and sorted(out) == list(range(50))


def atomic_ops(a: pk.i32[:], f: pk.f32[:], u: pk.u32[:], old: pk.i32[:], fold: pk.f32[:]):
    i = pk.global_id(0)
    v = i - 3
    old[i] = pk.atomic_min(a, 0, v) + pk.atomic_max(a, 1, v) * 0
    pk.atomic_and_(a, 2, ~(1 << i))
    pk.atomic_or_(a, 3, 1 << i)
    pk.atomic_xor(a, 4, i)
    pk.atomic_sub(a, 5, 2147483647)  # wraps
    pk.atomic_exchange(a, 6, i)
    pk.atomic_cas(a, 7, i, i + 1)  # counts up only when it holds i
    fold[i] = pk.atomic_add(f, 0, 0.5)
    pk.atomic_max(f, 1, pk.f32(v))
    pk.atomic_cas(f, 2, -0.0, 9.0)  # compares bits: +0.0 is not -0.0
    pk.atomic_max(u, 0, 4294967295 - pk.u32(i))


def test_every_atomic_op():
    a = np.array([0, 0, -1, 0, 0, 0, 0, 0], np.int32)
    f = np.array([0, -np.inf, 0.0], np.float32)
    u = np.zeros(1, np.uint32)
    old, fold = np.zeros(8, np.int32), np.zeros(8, np.float32)
    interpret(atomic_ops, 8, a, f, u, old, fold)
    v = np.arange(8) - 3
    assert list(old) == [0] + [-3] * 7  # the minimum before each: invocation 0 stored -3
    assert a[0] == -3 and a[1] == 4
    assert a[2] == np.int32(-1 & ~0xFF) and a[3] == 0xFF
    assert a[4] == np.bitwise_xor.reduce(np.arange(8))
    assert a[5] == np.int32(np.int64(-8 * 2147483647) & 0xFFFFFFFF)
    assert a[6] == 7 and a[7] == 8
    np.testing.assert_array_equal(fold, np.arange(8) * 0.5)
    assert f[0] == 4.0 and f[1] == v.max() and f[2] == 0.0
    assert u[0] == 4294967295


def subgroup_ops(x: pk.i32[:], out: pk.i32[:, :]):
    i = pk.global_id(0)
    v = x[i]
    out[i, 0] = pk.subgroup_add(v)
    out[i, 1] = pk.subgroup_prefix_add(v)
    out[i, 2] = pk.subgroup_min(v)
    out[i, 3] = pk.subgroup_max(v)
    out[i, 4] = int(pk.subgroup_any(v > 40))
    out[i, 5] = int(pk.subgroup_all(v > 0))
    out[i, 6] = pk.subgroup_shuffle_xor(v, 1)
    out[i, 7] = pk.subgroup_broadcast(v, 2)
    out[i, 8] = pk.subgroup_shuffle(v, pk.subgroup_lane() + 1)
    out[i, 9] = pk.subgroup_lane()
    out[i, 10] = pk.subgroup_size()


@pytest.mark.parametrize("size", [8, 4])
def test_subgroup_operations(size):
    n = 28  # workgroups of 16: the last has 12 invocations in the grid, so a partial subgroup
    x = rng.integers(1, 50, n).astype(np.int32)
    out = np.zeros((n, 11), np.int32)
    interpret(subgroup_ops, n, x, out, workgroup=(16, 1, 1), subgroup_size=size)
    for start in range(0, n, size):
        group = x[start:start + size]
        m = len(group)
        lanes = np.arange(m)
        got = out[start:start + m]
        np.testing.assert_array_equal(got[:, 0], group.sum())
        np.testing.assert_array_equal(got[:, 1], np.cumsum(group) - group)
        assert (got[:, 2] == group.min()).all() and (got[:, 3] == group.max()).all()
        assert (got[:, 4] == int((group > 40).any())).all() and (got[:, 5] == 1).all()
        # a lane outside the active ones gives the invocation its own value
        partner = lanes ^ 1
        np.testing.assert_array_equal(
            got[:, 6], np.where(partner < m, group[np.minimum(partner, m - 1)], group))
        assert (got[:, 7] == group[2]).all()
        np.testing.assert_array_equal(got[:, 8], np.append(group[1:], group[-1]))
        np.testing.assert_array_equal(got[:, 9], lanes)
        assert (got[:, 10] == size).all()


def subgroup_floats(x: pk.f32[:], total: pk.f32[:], top: pk.f32[:], before: pk.f32[:]):
    i = pk.global_id(0)
    total[i] = pk.subgroup_add(x[i])
    top[i] = pk.subgroup_max(x[i])
    before[i] = pk.subgroup_prefix_add(x[i])


def test_subgroup_float_reductions_in_lane_order():
    x = rng.uniform(-1, 1, 32).astype(np.float32)
    x[5] = np.nan
    total, top, before = (np.zeros_like(x) for _ in range(3))
    interpret(subgroup_floats, 32, x, total, top, before, workgroup=(32, 1, 1))
    running, prefix = np.float32(0), []
    for v in x:
        prefix.append(running)
        running = running + v  # f32, lane by lane
    assert np.isnan(total).all()
    np.testing.assert_array_equal(top, np.nanmax(x))  # NaN ignored, as by max()
    np.testing.assert_array_equal(before, prefix)
    assert not np.isnan(before[:6]).any() and np.isnan(before[6:]).all()


@pk.func
def swap_through(tile, k, v):
    tile[k] = v
    pk.barrier()
    return tile[3 - k]


def reverse_in_function(x: pk.f32[:], out: pk.f32[:]):
    tile = pk.shared(pk.f32, (4,))
    i = pk.global_id(0)
    out[i] = swap_through(tile, pk.local_id(0), x[i])


def test_barrier_inside_a_device_function():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    compiled = interpret(reverse_in_function, 8, x, out, workgroup=(4, 1, 1))
    assert list(out) == [3, 2, 1, 0, 7, 6, 5, 4]
    assert re.search(r"yield from _call_at\(_path, \d+, f_swap_through\w*\(", compiled.source)
