"""Kernels with `pk.barrier()` and grids that end inside a workgroup.

Every invocation of a workgroup must reach each barrier, so such kernels are not masked by the
grid (docs/language.md): all invocations of the launched workgroups run the body, and the kernel
tests `pk.global_id(d) < pk.grid(d)` itself. Each kernel here runs on the device and in the
interpreter and is compared with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


@pk.func
def square(v):
    return v * v


def block_sum_of_squares(x: pk.f32[:], total: pk.f32[:]):
    buf = pk.shared(pk.f32, 64)
    t = pk.local_id(0)
    i = pk.global_id(0)
    buf[t] = square(x[i]) if i < len(x) else 0.0  # only the chosen side is evaluated
    pk.barrier()
    step = 32
    while step > 0:
        if t < step:
            buf[t] += buf[t + step]
        pk.barrier()
        step //= 2
    if t == 0:
        pk.atomic_add(total, 0, buf[0])


TILE = 16


def tiled_matmul(a: pk.f32[:, :], b: pk.f32[:, :], c: pk.f32[:, :]):
    """c = a @ b with TILE x TILE tiles of a and b staged in shared memory; the grid is c's
    shape, which need not be a multiple of the tile."""
    sa = pk.shared(pk.f32, (TILE, TILE))
    sb = pk.shared(pk.f32, (TILE, TILE))
    row = pk.global_id(0)
    col = pk.global_id(1)
    tr = pk.local_id(0)
    tc = pk.local_id(1)
    acc = 0.0
    for k0 in range(0, a.shape[1], TILE):
        sa[tr, tc] = a[row, k0 + tc] if row < a.shape[0] and k0 + tc < a.shape[1] else 0.0
        sb[tr, tc] = b[k0 + tr, col] if k0 + tr < b.shape[0] and col < b.shape[1] else 0.0
        pk.barrier()
        for k in range(TILE):
            acc += sa[tr, k] * sb[k, tc]
        pk.barrier()
    if row < pk.grid(0) and col < pk.grid(1):
        c[row, col] = acc


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_a_partial_last_workgroup_takes_part_in_the_reduction(interpret):
    kern = pk.kernel(block_sum_of_squares, workgroup=(64,), interpret=interpret)
    x = np.arange(1000, dtype=np.float32) / 100  # 15 full workgroups and 40 invocations
    total = np.zeros(1, np.float32)
    kern[x.size](x, total)
    expected = float((x.astype(np.float64) ** 2).sum())
    assert total[0] == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_tiled_matmul_with_a_grid_that_is_not_a_multiple_of_the_tile(interpret):
    kern = pk.kernel(tiled_matmul, workgroup=(TILE, TILE), interpret=interpret)
    rng = np.random.default_rng(0)
    m, k, n = (40, 37, 30) if interpret else (200, 75, 150)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    kern[m, n](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_invocations_past_the_grid_run_a_kernel_with_barriers():
    @pk.kernel(workgroup=(8,))
    def mark(seen: pk.i32[:]):
        pk.barrier()
        seen[pk.global_id(0)] = 1  # seen has room for the whole last workgroup

    seen = np.zeros(16, np.int32)
    mark[11](seen)
    assert seen.tolist() == [1] * 16


def test_a_kernel_without_barriers_stays_masked():
    @pk.kernel(workgroup=(8,))
    def mark(seen: pk.i32[:]):
        seen[pk.global_id(0)] = 1

    seen = np.zeros(16, np.int32)
    mark[11](seen)
    assert seen.tolist() == [1] * 11 + [0] * 5


def test_a_barrier_in_a_device_function_unmasks_the_kernel():
    @pk.func
    def wait():
        pk.barrier()

    @pk.kernel(workgroup=(8,))
    def mark(seen: pk.i32[:]):
        wait()
        seen[pk.global_id(0)] = 1

    seen = np.zeros(16, np.int32)
    mark[3](seen)
    assert seen.tolist() == [1] * 8 + [0] * 8
    assert not mark.ir(seen).masked


def test_a_barrier_that_is_not_translated_leaves_the_kernel_masked():
    @pk.kernel(workgroup=(8,))
    def mark(seen: pk.i32[:], sync: pk.constexpr):
        if sync:
            pk.barrier()
        seen[pk.global_id(0)] = 1
        return
        pk.barrier()  # after the return: never runs, not translated

    seen = np.zeros(16, np.int32)
    assert mark.ir(seen, False).masked
    assert not mark.ir(seen, True).masked


def test_the_guard_reads_nothing_out_of_range_in_debug_mode():
    @pk.kernel(workgroup=(64,), debug=True)
    def guarded(x: pk.f32[:], out: pk.f32[:]):
        buf = pk.shared(pk.f32, 64)
        i = pk.global_id(0)
        t = pk.local_id(0)
        buf[t] = x[i] if i < len(x) else 0.0
        pk.barrier()
        if i < len(x):
            out[i] = buf[t] + buf[(t + 1) % 64]

    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    guarded[100](x, out)  # no KernelIndexError: x[i] is not read past the end
    neighbour = np.where(np.arange(100) % 64 == 63, x - 63, x + 1)
    neighbour[99] = 0.0  # invocation 100 wrote 0.0 into the shared slot next to 99's
    np.testing.assert_array_equal(out, x + neighbour)


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_an_access_past_the_grid_names_the_barrier_rule(interpret):
    @pk.kernel(workgroup=(64,), debug=True, interpret=interpret)
    def unguarded(x: pk.f32[:], total: pk.f32[:]):
        buf = pk.shared(pk.f32, 64)
        t = pk.local_id(0)
        buf[t] = x[pk.global_id(0)]
        pk.barrier()
        if t == 0:
            pk.atomic_add(total, 0, buf[0])

    x = np.ones(100, np.float32)
    total = np.zeros(1, np.float32)
    with pytest.raises(pk.KernelIndexError,
                       match=r"invocation \(100, 0, 0\).*outside the grid \(100, 1, 1\).*"
                             r"pk\.barrier\(\).*pk\.global_id\(d\) < pk\.grid\(d\)"):
        unguarded[100](x, total)
    unguarded[128](np.ones(128, np.float32), total)  # a full last workgroup: no error


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_subgroup_operations_of_a_masked_kernel_see_only_the_grid(interpret):
    size = pk.get_device().info.features.subgroup_size if not interpret else 32

    @pk.kernel(workgroup=(64,), interpret=interpret)
    def sums(x: pk.i32[:], out: pk.i32[:]):
        i = pk.global_id(0)
        out[i] = pk.subgroup_add(x[i])

    n = size + 3  # the second subgroup has three invocations inside the grid
    x = np.arange(1, n + 1, dtype=np.int32)
    out = np.zeros(n, np.int32)
    sums[n](x, out)
    expected = [x[:size].sum()] * size + [x[size:].sum()] * 3
    assert out.tolist() == expected
