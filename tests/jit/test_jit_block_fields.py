"""The argument block's field names are defined once (pykern.spirv.binding_plan.block_fields, on the
runtime's GRID_FIELDS/BASE_FIELDS): the planned layout, the binder and the runtime agree."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import pykern as pk
from pykern import ir
from pykern.jit.binding import ArgBinder
from pykern.lang import dtypes as dt
from pykern.runtime.layout import BASE_FIELDS, GRID_FIELDS, BindingLayout
from pykern.spirv.binding_plan import HEADER_FIELDS, array_fields, block_fields, plan_layout

PARAMS = (ir.Param(name="n", type=dt.i32), ir.Param(name="x", type=dt.f32[:, :]),
          ir.Param(name="a", type=dt.f64), ir.Param(name="y", type=dt.u8[:]))


def stub(params=PARAMS) -> ir.Kernel:
    return ir.Kernel(name="k", params=params, locals=(), body=(), workgroup=(64, 1, 1))


def test_the_block_is_header_then_scalars_then_array_geometry():
    assert HEADER_FIELDS == GRID_FIELDS + BASE_FIELDS
    assert [name for name, _ in block_fields(PARAMS)] == [
        *HEADER_FIELDS, "n", "a", *array_fields("x", 2), *array_fields("y", 1)]
    assert array_fields("x", 2) == ["x.offset", "x.shape0", "x.shape1", "x.stride0", "x.stride1"]
    layout = plan_layout(stub())
    assert [(f.name, f.fmt) for f in layout.fields] == block_fields(PARAMS)
    assert layout.grid_fields == GRID_FIELDS and layout.base_fields == BASE_FIELDS


def test_the_public_packer_packs_what_pack_does():
    layout = plan_layout(stub())
    values = [3, 4, 5, 0, 0, 0, 7, 2.5, 0, 2, 3, 3, 1, 0, 4, 1]
    assert isinstance(layout.packer, struct.Struct)
    assert layout.packer.pack(*values) == bytes(layout.pack(values))
    assert layout.packer.size == layout.size


def test_the_binder_refuses_a_layout_of_another_shape():
    other = plan_layout(stub(PARAMS[:2]))
    with pytest.raises(AssertionError, match="not laid out"):
        ArgBinder("k", PARAMS, other)
    ArgBinder("k", PARAMS, plan_layout(stub()))  # the planned one is accepted


@pk.kernel
def affine(n: pk.i32, x: pk.f32[:, :], a: pk.f64, y: pk.f32[:]):
    i = pk.global_id(0)
    if i < n:
        y[i] = x[i, 1] * pk.f32(a)


@pytest.mark.usefixtures("on_vulkan")  # of SPIR-V and the Vulkan device
def test_the_binder_fills_each_named_field():
    x = pk.asarray(np.arange(12, dtype=np.float32).reshape(4, 3))
    view = x[1:, :]  # an offset and strides of its own
    y = pk.zeros(3, pk.f32)
    variant = affine.compile(3, view, 2.0, y)
    block, buffers, _ = variant.binder.bind([3, view, 2.0, y])
    layout: BindingLayout = variant.module.layout
    got = dict(zip([f.name for f in layout.fields], layout.packer.unpack(block)))
    assert got["n"] == 3 and got["a"] == 2.0
    assert (got["x.offset"], got["x.shape0"], got["x.shape1"]) == (3, 3, 3)
    assert (got["x.stride0"], got["x.stride1"]) == (3, 1)
    assert buffers[:2] == [view.buffer, y.buffer]
    affine[3](3, view, 2.0, y)
    expected = np.arange(12, dtype=np.float32).reshape(4, 3)[1:, 1] * 2
    np.testing.assert_array_equal(y.numpy(), expected)
