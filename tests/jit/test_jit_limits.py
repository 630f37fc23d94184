"""Workgroup size and shared memory are checked against the device before lowering: a
located pk.CompileError, and the next launch works."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


def too_wide(out: pk.f32[:]):
    out[pk.global_id(0)] = 1.0


def test_a_workgroup_past_the_device_limit_is_a_located_compile_error():
    limits = pk.get_device().info.limits
    wide = pk.kernel(workgroup=(limits.max_workgroup_invocations * 2,))(too_wide)
    with pytest.raises(pk.CompileError, match="exceeds the device's limits") as info:
        wide[4](pk.zeros(4, pk.f32))
    assert (info.value.file, info.value.line) == (__file__, too_wide.__code__.co_firstlineno)
    assert str(limits.max_workgroup_invocations) in str(info.value)


def test_shared_memory_past_the_device_limit_names_the_largest_array():
    limit = pk.get_device().info.limits.max_shared_memory
    words = limit // 4 + 1

    @pk.kernel(workgroup=(64,))
    def hog(out: pk.f32[:]):
        small = pk.shared(pk.f32, 4)
        big = pk.shared(pk.f32, words)
        i = pk.local_id(0)
        small[i % 4] = 1.0
        big[i] = 2.0
        pk.barrier()
        out[pk.global_id(0)] = big[i] + small[0]

    with pytest.raises(pk.CompileError, match=f"more than the device's {limit}") as info:
        hog[64](pk.zeros(64, pk.f32))
    assert "big = pk.shared" in str(info.value)

    @pk.kernel(workgroup=(64,))
    def fits(out: pk.f32[:]):
        buf = pk.shared(pk.f32, 64)
        i = pk.local_id(0)
        buf[i] = pk.f32(i)
        pk.barrier()
        out[pk.global_id(0)] = buf[63 - i]

    out = pk.zeros(64, pk.f32)
    fits[64](out)
    np.testing.assert_array_equal(out.numpy(), np.arange(63, -1, -1, dtype=np.float32))
