"""On the host device a kernel that does not depend on its workgroup runs over 2-D and 3-D grids
in rows of `HOST_ROWS_WORKGROUP` (a loop LLVM vectorises); one that reads its local or group
id, or has a barrier or a shared array, keeps its own workgroup. Results as numpy's (and the
same on Vulkan, where the workgroup is the kernel's)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.jit.host_pipeline import HOST_ROWS_WORKGROUP, workgroup_free


@pk.kernel
def scaled_rows(x: pk.f32[:, :], out: pk.f32[:, :]):
    j, i = pk.global_id(0), pk.global_id(1)
    out[i, j] = x[i, j] * 2.0 + pk.f32(j)


@pk.kernel
def local_ids(out: pk.i32[:, :]):
    j, i = pk.global_id(0), pk.global_id(1)
    out[i, j] = pk.local_id(0) + 100 * pk.local_id(1)


@pk.kernel(workgroup=(8, 2, 1))
def group_ids(out: pk.i32[:, :, :]):
    k, j, i = pk.global_id(0), pk.global_id(1), pk.global_id(2)
    out[i, j, k] = pk.group_id(0) + 100 * pk.group_id(1)


@pk.kernel
def shared_copy(x: pk.f32[:, :], out: pk.f32[:, :]):
    tile = pk.shared(pk.f32, (16, 16))
    j, i = pk.global_id(0), pk.global_id(1)
    tile[pk.local_id(1), pk.local_id(0)] = x[i, j]
    pk.barrier()
    out[i, j] = tile[pk.local_id(1), pk.local_id(0)]


def _on_host() -> bool:
    return pk.get_device().info.kind == "host"


def test_which_kernels_do_not_depend_on_their_workgroup():
    x = np.zeros((4, 4), np.float32)
    assert workgroup_free(scaled_rows.ir(x, x))
    assert not workgroup_free(local_ids.ir(np.zeros((4, 4), np.int32)))
    assert not workgroup_free(group_ids.ir(np.zeros((2, 4, 4), np.int32)))
    assert not workgroup_free(shared_copy.ir(x, x))


@pytest.mark.parametrize("shape", [(3, 5), (64, 10), (70, 130), (1, 1)])
def test_a_workgroup_free_kernel_runs_in_rows(shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    out = pk.zeros(shape, pk.f32)
    grid = (shape[1], shape[0])
    scaled_rows[grid](pk.asarray(x), out)
    np.testing.assert_array_equal(out.numpy(), x * np.float32(2) + np.arange(shape[1],
                                                                            dtype=np.float32))
    if _on_host():
        variant = scaled_rows.compile(pk.asarray(x), out, grid=grid)
        assert variant.program.workgroup == HOST_ROWS_WORKGROUP


@pytest.mark.parametrize("shape", [(20, 35), (3, 4)])
def test_kernels_that_read_their_ids_keep_their_workgroup(shape):
    out = pk.zeros(shape, pk.i32)
    grid = (shape[1], shape[0])
    local_ids[grid](out)
    i, j = np.indices(shape)
    np.testing.assert_array_equal(out.numpy(), j % 16 + 100 * (i % 16))
    groups = pk.zeros((2, *shape), pk.i32)
    group_ids[(shape[1], shape[0], 2)](groups)
    np.testing.assert_array_equal(groups.numpy(), np.broadcast_to(j // 8 + 100 * (i // 2),
                                                                  (2, *shape)))
    x = np.arange(32 * 48, dtype=np.float32).reshape(32, 48)
    copied = pk.zeros((32, 48), pk.f32)
    shared_copy[(48, 32)](pk.asarray(x), copied)  # whole workgroups: the barrier's rule
    np.testing.assert_array_equal(copied.numpy(), x)
    if _on_host():
        assert local_ids.compile(out, grid=grid).program.workgroup == (16, 16, 1)
