"""Argument-block planning: field order, formats, offsets, buffers, uniform fallback."""

from __future__ import annotations

import struct

import pytest
from pykern.runtime.layout import PUSH_CONSTANT, UNIFORM
from spirv_irkit import array, kernel, scalar

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.spirv import plan_layout
from pykern.spirv.binding_plan import SCALAR_FORMATS

GRID = ["grid0", "grid1", "grid2", "base0", "base1", "base2"]


def test_fields_in_order_with_offsets():
    k = kernel([], params=[
        scalar("a", dt.f32),
        array("x", dt.f32, 2, ir.Access.READ),
        scalar("flag", dt.bool_),
        array("y", dt.i32, 1, ir.Access.WRITE),
    ])
    layout = plan_layout(k, 128)
    assert [f.name for f in layout.fields] == GRID + [
        "a", "flag",
        "x.offset", "x.shape0", "x.shape1", "x.stride0", "x.stride1",
        "y.offset", "y.shape0", "y.stride0",
    ]
    assert [f.fmt for f in layout.fields] == ["I"] * 6 + ["f", "I"] + ["i"] * 8
    assert [f.offset for f in layout.fields] == [4 * n for n in range(16)]
    assert layout.block == PUSH_CONSTANT and layout.size == 64
    assert layout.workgroup == (64, 1, 1)
    assert layout.grid_fields == ("grid0", "grid1", "grid2")
    assert layout.base_fields == ("base0", "base1", "base2")


def test_buffers_follow_array_order_and_access():
    k = kernel([], params=[
        array("r", dt.f32, access=ir.Access.READ),
        scalar("n", dt.i32),
        array("w", dt.f32, access=ir.Access.WRITE),
        array("rw", dt.u8, access=ir.Access.READ_WRITE),
        array("unused", dt.f32, access=ir.Access.NONE),
    ])
    slots = plan_layout(k).buffers
    assert [(s.binding, s.name, s.readable, s.writable) for s in slots] == [
        (0, "r", True, False), (1, "w", False, True), (2, "rw", True, True),
        (3, "unused", True, False),
    ]


# 8- and 16-bit scalars travel widened to 32 bits: no device feature needed for them
EXPECTED_FORMATS = {
    "bool_": "I", "i8": "i", "u8": "I", "i16": "i", "u16": "I", "f16": "f", "i32": "i",
    "u32": "I", "f32": "f", "i64": "q", "u64": "Q", "f64": "d", "bf16": "f",
}


@pytest.mark.parametrize("dtype", dt.ALL_DTYPES, ids=lambda d: d.name)
def test_scalar_formats_and_alignment(dtype):
    # a 4-byte field after the grid (offset 24), then one aligned to its own size
    k = kernel([], params=[scalar("s", dtype), scalar("d", dtype), scalar("e", dt.f64)])
    layout = plan_layout(k)
    fields = {f.name: f for f in layout.fields}
    assert fields["s"].fmt == SCALAR_FORMATS[dtype.name] == EXPECTED_FORMATS[dtype.name]
    assert fields["s"].offset == 24
    size = 8 if dtype.bits == 64 else 4
    assert fields["d"].offset == -(-(24 + size) // size) * size
    assert fields["e"].offset % 8 == 0


def test_uniform_fallback_when_the_block_is_too_big():
    params = [array(f"a{i}", dt.f32, 4) for i in range(3)]  # 3 * 9 ints + 6 = 132 bytes
    small = plan_layout(kernel([], params=params[:2]), 128)
    assert small.block == PUSH_CONSTANT and small.uniform_binding == -1
    big = plan_layout(kernel([], params=params), 128)
    assert big.block == UNIFORM and big.size == 144
    assert big.uniform_binding == 3  # after the storage buffers
    assert plan_layout(kernel([], params=params), 256).block == PUSH_CONSTANT


def test_pack_roundtrip_matches_the_launcher_contract():
    k = kernel([], params=[scalar("a", dt.f32), array("x", dt.f32)])
    layout = plan_layout(k)
    values = [10, 1, 1, 0, 0, 0, 2.5, 3, 10, 1]
    block = layout.pack(values)
    assert len(block) == layout.size == 48
    assert struct.unpack_from("<f", block, layout.offset_of("a"))[0] == 2.5
    assert struct.unpack_from("<i", block, layout.offset_of("x.offset"))[0] == 3
