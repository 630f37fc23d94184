"""The Taichi peers' kernels (imported only where Taichi is): the same work as pykern's.

Arrays are Taichi fields, its fastest data structure (as in the anchor figures measured on the
H200). All fields live in one root buffer that cannot shrink, so each case starts Taichi afresh
(`fresh_fields`): otherwise the cases add up past lavapipe's 128 MiB storage-buffer limit.
No `from __future__ import annotations` here: Taichi reads the annotations as objects.
"""

import taichi as ti


@ti.kernel
def add(a: ti.template(), b: ti.template(), c: ti.template()):
    for i in c:
        c[i] = a[i] + b[i]


@ti.kernel
def saxpy(alpha: ti.f32, x: ti.template(), y: ti.template(), out: ti.template()):
    for i in out:
        out[i] = alpha * x[i] + y[i]


def fresh_fields(n: int, count: int) -> list:
    """`count` f32 fields of `n` elements, in a Taichi runtime of their own (the fields made
    before are gone)."""
    ti.reset()
    ti.init(arch=ti.vulkan, log_level=ti.WARN)
    return [ti.field(ti.f32, shape=n) for _ in range(count)]
