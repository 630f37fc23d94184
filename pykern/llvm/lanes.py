"""Subgroups on the host: `SUBGROUP_SIZE` lanes of consecutive local linear ids (x fastest), as
on Vulkan, so a workgroup whose size is not a multiple of it ends in a partial subgroup.
`pk.subgroup_lane()` and `pk.subgroup_size()` are values of the invocation (`lane`, `size`);
the operations that exchange values between lanes are `pykern.llvm.subgroups`.
"""

from __future__ import annotations

from llvmlite import ir as ll

from pykern.llvm.emitter import Emitter

# 8: the f32 lanes of a 256-bit SIMD register (AVX2), the width LLVM's loop vectoriser gives
# the region loops on such a core; also lavapipe's subgroup size, so the host and CI's Vulkan
# device agree bit for bit on every exchange
SUBGROUP_SIZE = 8


def lane(em: Emitter) -> ll.Value:
    """`pk.subgroup_lane()`: the linear local id modulo the subgroup size."""
    assert em.ids is not None
    x, y, z = em.ids.local_id
    wx, wy, _ = em.kernel.workgroup
    bld = em.builder
    linear = bld.add(x, bld.add(bld.mul(y, em.i32(wx)), bld.mul(z, em.i32(wx * wy))))
    return bld.urem(linear, em.i32(SUBGROUP_SIZE))


def size(em: Emitter) -> ll.Value:
    return em.i32(SUBGROUP_SIZE)
