"""Subgroup operations on the host backend: every operation on every dtype it takes, partial
last subgroups (of a workgroup and of the grid), exchanges in divergent `if`s and loops, with
`break`, `continue` and `return`, in device functions and next to barriers. Each kernel runs
on the host and in the interpreter (with the host's subgroup size) and, where the operation is
exact and defined, on the Vulkan device too (lavapipe's subgroups are the host's size); the
results must agree bit for bit, and the basic ones also match a numpy reference."""

from __future__ import annotations

import re

import numpy as np
import pytest
from subgroup_diff import check, on_device, on_host

import pykern as pk
import pykern.llvm
from pykern.lang import dtypes as dt
from pykern.llvm.lanes import SUBGROUP_SIZE

rng = np.random.default_rng(12)
NUMBERS = [t for t in dt.ALL_DTYPES if t != dt.bool_]


def values(t: dt.DType, n: int) -> np.ndarray:
    """`n` values of `t`: integers over the whole range, floats of mixed magnitude with a NaN,
    infinities and both zeros among them."""
    if t == dt.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if t.is_int:
        info = np.iinfo(t.numpy)
        return rng.integers(info.min, info.max, n, dtype=t.numpy, endpoint=True)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    x[rng.choice(n, 5, replace=False)] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    return x.astype(t.numpy)


def subgroups_of(grid: int, workgroup: int) -> list[np.ndarray]:
    """The global ids of each subgroup of a 1-D launch that lie inside the grid."""
    out = []
    for start in range(0, grid, workgroup):
        for first in range(start, start + workgroup, SUBGROUP_SIZE):
            last = min(first + SUBGROUP_SIZE, start + workgroup, grid)
            if first < last:
                out.append(np.arange(first, last))
    return out


def test_the_host_subgroup_size_is_reported_and_lanes_are_consecutive_linear_ids():
    @pk.kernel(workgroup=(3, 5))
    def ids(out: pk.i32[:, :, :]):
        x, y = pk.global_id(0), pk.global_id(1)
        out[x, y, 0] = pk.subgroup_lane()
        out[x, y, 1] = pk.subgroup_size()

    # the interpreter's, and NVIDIA's; lavapipe starts a subgroup at each row of x instead
    out = check(ids, (7, 9), np.full((7, 9, 2), -1, np.int32))
    x, y = np.meshgrid(np.arange(7), np.arange(9), indexing="ij")
    linear = x % 3 + 3 * (y % 5)
    np.testing.assert_array_equal(out[0][..., 0], linear % SUBGROUP_SIZE)
    assert (out[0][..., 1] == SUBGROUP_SIZE).all()


@pk.kernel(workgroup=(20,))
def reductions(x: pk.Array, out: pk.Array):
    i = pk.global_id(0)
    v = x[i]
    out[i, 0] = pk.subgroup_add(v)
    out[i, 1] = pk.subgroup_min(v)
    out[i, 2] = pk.subgroup_max(v)
    out[i, 3] = pk.subgroup_prefix_add(v)


@pytest.mark.parametrize("t", NUMBERS, ids=lambda t: t.name)
def test_reductions_and_the_prefix_sum_on_every_number_type(t):
    # workgroups of 20: subgroups of 8, 8 and 4; the grid's end leaves the last one 8 and 4
    x = values(t, 52)
    check(reductions, 52, x, np.zeros((52, 4), t.numpy))


def test_integer_reductions_match_numpy_and_the_device():
    x = rng.integers(-1000, 1000, 52, dtype=np.int32)
    out = check(reductions, 52, x, np.zeros((52, 4), np.int32), device=True)[1]
    for ids in subgroups_of(52, 20):
        v = x[ids]
        np.testing.assert_array_equal(out[ids, 0], v.sum())
        np.testing.assert_array_equal(out[ids, 1], v.min())
        np.testing.assert_array_equal(out[ids, 2], v.max())
        np.testing.assert_array_equal(out[ids, 3], np.cumsum(v) - v)


@pytest.mark.parametrize("t", [dt.u32, dt.f32], ids=lambda t: t.name)
def test_reductions_agree_with_the_device(t):
    x = rng.integers(0, 200, 52).astype(t.numpy)  # float sums of integers are exact
    check(reductions, 52, x, np.zeros((52, 4), t.numpy), device=True)


def test_integer_sums_wrap():
    x = np.full(16, np.iinfo(np.int8).max, np.int8)
    out = check(reductions, 16, x, np.zeros((16, 4), np.int8))[1]
    assert (out[:, 0] == np.int8(-8)).all()  # 8 * 127 wraps to -8


def test_float_min_and_max_ignore_nans_and_keep_the_first_of_equal_zeros():
    x = np.array([np.nan, -0.0, 0.0, np.nan, 3.0, -2.0, np.nan, 0.0] * 2, np.float32)
    x[8:] = [0.0, -0.0, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan]
    out = check(reductions, 16, x, np.zeros((16, 4), np.float32))[1]
    assert (out[:8, 1] == -2.0).all() and (out[:8, 2] == 3.0).all()
    assert not np.signbit(out[8:, 1]).any() and not np.signbit(out[8:, 2]).any()


@pk.kernel(workgroup=(20,))
def shuffles(x: pk.Array, lanes: pk.i32[:], out: pk.Array):
    i = pk.global_id(0)
    v = x[i]
    out[i, 0] = pk.subgroup_shuffle(v, lanes[i])
    out[i, 1] = pk.subgroup_shuffle_xor(v, 3)
    out[i, 2] = pk.subgroup_shuffle_xor(v, lanes[i])
    out[i, 3] = pk.subgroup_broadcast(v, 5)
    out[i, 4] = pk.subgroup_broadcast(v, 0)


@pytest.mark.parametrize("t", dt.ALL_DTYPES, ids=lambda t: t.name)
def test_shuffles_and_broadcasts_on_every_type(t):
    # lanes out of range (negative, past the subgroup, past a partial subgroup's end) give
    # the invocation's own value, as in the interpreter
    lanes = rng.integers(-3, 12, 52).astype(np.int32)
    lanes[:4] = [-2**31, 2**31 - 1, 8, 1000]
    check(shuffles, 52, values(t, 52), lanes, np.zeros((52, 5), t.numpy))


def test_shuffles_within_range_match_numpy_and_the_device():
    x = rng.integers(-1000, 1000, 60, dtype=np.int32)
    lane = np.arange(60) % 20 % 8
    lanes = (lane ^ 1).astype(np.int32)  # inside every subgroup, the partial ones of 4 too
    args = (x, lanes, np.zeros((60, 5), np.int32))
    out = check(shuffles, 60, *args)[2]
    first = np.arange(60) - lane
    np.testing.assert_array_equal(out[:, 0], x[np.arange(60) ^ 1])
    np.testing.assert_array_equal(out[:, 1], x[np.arange(60) ^ 3])
    np.testing.assert_array_equal(out[:, 4], x[first])
    # broadcast from lane 5 of a subgroup of 4 is undefined on Vulkan: column 3 is left out
    device = on_device(shuffles, 60, *args)[2]
    np.testing.assert_array_equal(out[:, [0, 1, 2, 4]], device[:, [0, 1, 2, 4]])


def test_an_exchange_assigned_to_its_own_operand():
    @pk.kernel(workgroup=(16,))
    def k(x: pk.i32[:], out: pk.i32[:, :]):
        i = pk.global_id(0)
        v = x[i]
        v = pk.subgroup_prefix_add(v)
        w = x[i]
        w = pk.subgroup_shuffle(w, (pk.subgroup_lane() + 1) % pk.subgroup_size())
        lane = 7 - pk.subgroup_lane()
        lane = pk.subgroup_shuffle(lane, lane)
        out[i, 0], out[i, 1], out[i, 2] = v, w, lane

    x = rng.integers(-100, 100, 32).astype(np.int32)
    out = check(k, 32, x, np.zeros((32, 3), np.int32), device=True)[1]
    g = x.reshape(-1, 8)
    np.testing.assert_array_equal(out[:, 0], (np.cumsum(g, 1) - g).ravel())
    lane = np.arange(32) % 8
    np.testing.assert_array_equal(out[:, 1], x[np.arange(32) - lane + (lane + 1) % 8])
    np.testing.assert_array_equal(out[:, 2], lane)


@pk.kernel(workgroup=(12,))
def votes(c: pk.bool_[:], out: pk.i32[:, :]):
    i = pk.global_id(0)
    out[i, 0] = int(pk.subgroup_any(c[i]))
    out[i, 1] = int(pk.subgroup_all(c[i]))
    out[i, 2] = pk.subgroup_add(c[i])  # a bool counts as an i32
    out[i, 3] = pk.subgroup_prefix_add(c[i])


def test_votes_and_bool_sums():
    c = np.zeros(46, bool)
    c[8:12] = True  # a partial subgroup all true
    c[12:20] = True
    c[25] = True
    c[36:46] = rng.integers(0, 2, 10).astype(bool)
    out = check(votes, 46, c, np.zeros((46, 4), np.int32), device=True)[1]
    for ids in subgroups_of(46, 12):
        assert (out[ids, 0] == c[ids].any()).all() and (out[ids, 1] == c[ids].all()).all()
        np.testing.assert_array_equal(out[ids, 2], c[ids].sum())


# ---------------------------------------------------------------- divergent control flow


def test_exchanges_in_a_divergent_if_and_its_else():
    @pk.kernel(workgroup=(16,))
    def k(x: pk.i32[:], out: pk.i32[:, :]):
        i = pk.global_id(0)
        if x[i] > 1:
            out[i, 0] = pk.subgroup_add(x[i])
            out[i, 1] = pk.subgroup_prefix_add(x[i])
        else:
            out[i, 0] = pk.subgroup_max(x[i] + 100)
            out[i, 1] = pk.subgroup_shuffle_xor(i, 0)

    x = (np.arange(40) % 5).astype(np.int32)
    out = check(k, 40, x, np.zeros((40, 2), np.int32), device=True)[1]
    for ids in subgroups_of(40, 16):
        taken = ids[x[ids] > 1]
        assert (out[taken, 0] == x[taken].sum()).all()
        np.testing.assert_array_equal(out[taken, 1], np.cumsum(x[taken]) - x[taken])


def test_a_shuffle_from_a_lane_that_took_the_other_branch_gives_the_own_value():
    @pk.kernel(workgroup=(16,))
    def k(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = -1
        if x[i] > 1:
            out[i] = pk.subgroup_shuffle(x[i] * 10 + i, pk.subgroup_lane() ^ 1)

    x = (np.arange(16) % 5).astype(np.int32)
    out = check(k, 16, x, np.zeros(16, np.int32))[1]
    assert out[4] == 44  # lane 5 (x 0) is inactive: lane 4 keeps its own value


def test_the_subgroup_reconverges_after_a_divergent_if():
    # as on Vulkan devices: an exchange after the if sees every lane again (the interpreter
    # does not reconverge: it answers the lanes that skipped the if apart)
    @pk.kernel(workgroup=(16,))
    def k(out: pk.i32[:, :]):
        i = pk.global_id(0)
        a = 0
        if pk.subgroup_lane() < 3:
            a = pk.subgroup_add(1)
        out[i, 0] = a
        out[i, 1] = pk.subgroup_add(1)

    host = on_host(k, 20, np.zeros((20, 2), np.int32))
    np.testing.assert_array_equal(host[0], on_device(k, 20, np.zeros((20, 2), np.int32))[0])
    lane = np.arange(20) % 16 % 8
    np.testing.assert_array_equal(host[0][:, 0], np.where(lane < 3, 3, 0))
    np.testing.assert_array_equal(host[0][:, 1], [8] * 16 + [4] * 4)


def test_an_if_inside_a_loop_takes_the_lanes_of_that_iteration():
    @pk.kernel(workgroup=(16,))
    def k(out: pk.i32[:]):
        i = pk.global_id(0)
        s = 0
        for j in range(4):
            if (pk.subgroup_lane() + j) % 3 == 0:
                s += pk.subgroup_add(1) * 10 ** j
        out[i] = s

    host = on_host(k, 16, np.zeros(16, np.int32))[0]
    np.testing.assert_array_equal(host, on_device(k, 16, np.zeros(16, np.int32))[0])
    lane = np.arange(16) % 8
    want = sum(np.where((lane + j) % 3 == 0, ((np.arange(8) + j) % 3 == 0).sum() * 10 ** j, 0)
               for j in range(4))
    np.testing.assert_array_equal(host, want)


def test_a_loop_whose_trip_count_differs_per_lane():
    @pk.kernel(workgroup=(12,))
    def k(out: pk.i32[:, :]):
        i = pk.global_id(0)
        s = 0
        j = -1
        for j in range(pk.subgroup_lane(), 0, -1):
            s += pk.subgroup_add(1) * 100 + pk.subgroup_max(j)
        out[i, 0] = s
        out[i, 1] = j  # the last value taken, or -1

    check(k, 24, np.zeros((24, 2), np.int32), device=True)


def test_a_while_loop_whose_condition_exchanges():
    @pk.kernel(workgroup=(16,))
    def k(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        v = x[i]
        n = 0
        while pk.subgroup_any(v > 0):
            v -= 1
            n += pk.subgroup_add(1)
        out[i] = n * 1000 + v

    x = (np.arange(30) % 7).astype(np.int32)
    check(k, 30, x, np.zeros(30, np.int32), device=True)


def test_break_continue_and_nested_loops_with_exchanges():
    @pk.kernel(workgroup=(16,))
    def k(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        s = 0
        for j in range(10):
            if j >= x[i]:
                break
            if j == 1:
                continue
            k = 0
            while k < j % 3:
                s += pk.subgroup_add(j + k)
                k += 1
            s += pk.subgroup_min(x[i] * j)
        out[i] = s

    x = (np.arange(40) % 7).astype(np.int32)
    check(k, 40, x, np.zeros(40, np.int32), device=True)


def test_a_return_before_an_exchange_leaves_the_subgroup():
    @pk.kernel(workgroup=(16,))
    def k(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        if x[i] == 3:
            return
        out[i] = pk.subgroup_add(x[i])
        for j in range(3):
            if j == x[i]:
                return
            out[i] += pk.subgroup_add(j)

    x = (np.arange(16) % 5).astype(np.int32)
    check(k, 16, x, np.zeros(16, np.int32), device=True)


def test_exchanges_in_conditional_expressions_and_short_circuits():
    # only the invocations that evaluate the branch (or the right of and/or) take part; one
    # kernel each, as the interpreter answers lanes apart once they diverged
    @pk.kernel(workgroup=(16,))
    def branches(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = pk.subgroup_add(x[i]) if x[i] > 1 else pk.subgroup_max(x[i] * 10)

    @pk.kernel(workgroup=(16,))
    def conjunction(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = int(x[i] > 2 and pk.subgroup_all(x[i] > 3))

    @pk.kernel(workgroup=(16,))
    def disjunction(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = int(x[i] < 2 or any_positive(x[i] - 3))

    x = (np.arange(40) % 5).astype(np.int32)
    outs = [check(k, 40, x, np.zeros(40, np.int32), device=True)[1]
            for k in (branches, conjunction, disjunction)]
    for ids in subgroups_of(40, 16):
        v = x[ids]
        np.testing.assert_array_equal(outs[0][ids], np.where(v > 1, v[v > 1].sum(),
                                                             10 * v[v <= 1].max()))
        np.testing.assert_array_equal(outs[1][ids], (v > 2) & (v[v > 2] > 3).all())
        np.testing.assert_array_equal(outs[2][ids], (v < 2) | (v[v >= 2] > 3).any())


# ---------------------------------------------------------------- functions and barriers


@pk.func
def any_positive(v):
    return pk.subgroup_any(v > 0)



@pk.func
def subgroup_mean(v):
    return pk.subgroup_add(v) / pk.subgroup_add(1.0)


@pk.func
def centred(v):
    return v - subgroup_mean(v)


def test_exchanges_in_device_functions_called_inside_expressions():
    @pk.kernel(workgroup=(16,))
    def k(x: pk.f32[:], out: pk.f32[:, :]):
        i = pk.global_id(0)
        out[i, 0] = centred(x[i]) * 2.0 + subgroup_mean(1.0)
        if x[i] > 0.0:
            out[i, 1] = centred(x[i])

    x = rng.standard_normal(29).astype(np.float32)
    check(k, 29, x, np.zeros((29, 2), np.float32))


def test_exchanges_and_barriers_in_one_kernel():
    @pk.kernel(workgroup=(32,))
    def k(x: pk.i32[:], out: pk.i32[:]):
        partial = pk.shared(pk.i32, 4)
        i = pk.global_id(0)
        t = pk.local_id(0)
        total = 0
        for r in range(2):
            s = pk.subgroup_add(x[i] + r)
            if pk.subgroup_lane() == 0:
                partial[t // 8] = s
            pk.barrier()
            if t < 4:
                total += pk.subgroup_add(partial[t])
            pk.barrier()
        if i < pk.grid(0):
            out[i] = total

    x = rng.integers(-100, 100, 64).astype(np.int32)
    out = check(k, 60, x, np.zeros(64, np.int32), device=True)[1]
    sums = [x[g * 32:(g + 1) * 32].sum() * 2 + 32 for g in range(2)]
    np.testing.assert_array_equal(out[[0, 1, 2, 3, 32, 35]], [sums[0]] * 4 + [sums[1]] * 2)


def test_the_regions_around_an_exchange_are_vectorised():
    # while no invocation has returned, a region's loop asks none whether it is alive
    @pk.kernel(workgroup=(256,))
    def k(x: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        out[i] = pk.subgroup_add(x[i] * 2.0) + 1.0

    x = np.ones(1024, np.float32)
    ir_text = pykern.llvm.compile_for(k, x.size, x, x.copy()).llvm_ir
    widths = [int(w) for w in re.findall(r"f(?:mul|add) <(\d+) x float>", ir_text)]
    assert widths and max(widths) >= 4, ir_text


def test_a_while_loop_with_a_barrier_whose_condition_exchanges():
    @pk.kernel(workgroup=(16,))
    def k(x: pk.i32[:], n: pk.i32, out: pk.i32[:]):
        buf = pk.shared(pk.i32, 16)
        t = pk.local_id(0)
        i = pk.global_id(0)
        r = 0
        total = x[i]
        while pk.subgroup_all(r < n):  # uniform: every invocation has the same r and n
            buf[t] = total
            pk.barrier()
            total = buf[(t + 1) % 16] + pk.subgroup_max(total)
            pk.barrier()
            r += 1
        out[i] = total * 100 + r

    x = rng.integers(-50, 50, 32).astype(np.int32)
    check(k, 32, x, 3, np.zeros(32, np.int32), device=True)
