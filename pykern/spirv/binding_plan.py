"""Planning a kernel's bindings: its storage buffers and the layout of its argument block.

The argument block holds, in this order:

- `grid0 grid1 grid2`, `base0 base1 base2` (u32): the launch's logical size and the first
  invocation of the current dispatch (see `BindingLayout`);
- each scalar parameter, by name, in parameter order: bool_ as a u32 0/1 (bools never live in
  memory), and 8- and 16-bit numbers widened to 32 bits (i8/i16 as i32, u8/u16 as u32, f16 as
  f32, all exact), because 8/16-bit push constants and uniforms need device features
  (storagePushConstant8/16, uniformAndStorageBuffer8/16BitAccess) that many devices lack;
- per array parameter, in parameter order: `NAME.offset`, `NAME.shape0..`, `NAME.stride0..`
  (i32, in elements).

Each array parameter gets a storage buffer at the binding equal to its rank among the array
parameters; a kernel compiled in debug mode gets one more, `DEBUG_BUFFER`, after them (see
`pykern.spirv.debug`). For a device whose driver cuts loops short, the plan also has a slot
for `LOOP_STATUS_BUFFER` (see `pykern.spirv.loopcap`), bound after every other binding so that
`without_loop_status` can drop it from a kernel without loops. The launcher packs values into
the block in exactly this field order.
"""

from __future__ import annotations

from dataclasses import replace

from pykern import ir
from pykern.lang.dtypes import DType
from pykern.runtime.layout import BASE_FIELDS, GRID_FIELDS, BindingLayout, BufferSlot

# the fields the runtime fills in at each launch (grid, then base), before the parameters'
HEADER_FIELDS = GRID_FIELDS + BASE_FIELDS

# the `struct` format of each scalar parameter's field, by dtype name (narrow ones widened)
SCALAR_FORMATS = {
    "bool_": "I", "i8": "i", "u8": "I", "i16": "i", "u16": "I", "f16": "f",
    "i32": "i", "u32": "I", "f32": "f", "i64": "q", "u64": "Q", "f64": "d",
    "bf16": "f",  # an f32 holding a bf16 value (pykern.passes.bf16)
}
ARRAY_FIELD_FORMAT = "i"
# the name of the debug-mode report buffer's slot (pykern.spirv.debug re-exports it)
DEBUG_BUFFER = "__debug__"
# the name of the slot of the buffer where loops report being cut short (pykern.spirv.loopcap)
LOOP_STATUS_BUFFER = "__loop_status__"


def plan_layout(kernel: ir.Kernel, max_push_size: int = 128,
                loop_status: bool = False) -> BindingLayout:
    """The binding layout of `kernel`: push constants when the block fits `max_push_size`
    bytes, a uniform buffer bound after the storage buffers otherwise; with `loop_status`, a
    last slot for the LOOP_STATUS_BUFFER.

    >>> from pykern.lang import dtypes as dt
    >>> k = ir.Kernel(name="k", params=(ir.Param(name="x", type=dt.f32[:]),), locals=(),
    ...               body=(), workgroup=(64, 1, 1))
    >>> [f.name for f in plan_layout(k).fields][6:]
    ['x.offset', 'x.shape0', 'x.stride0']
    """
    arrays = [p for p in kernel.params if p.is_array]
    buffers = [
        BufferSlot(binding, p.name, readable=bool(p.access & ir.Access.READ) or not p.access,
                   writable=bool(p.access & ir.Access.WRITE))
        for binding, p in enumerate(arrays)
    ]
    if kernel.debug:
        buffers.append(BufferSlot(len(buffers), DEBUG_BUFFER, readable=True, writable=True))
    # the runtime counts workgroups and bases in logical invocations: a workgroup's span
    layout = BindingLayout.build(buffers, block_fields(kernel.params), kernel.span,
                                 max_push_size)
    if not loop_status:
        return layout
    # Only atomics touch it, whose order does not matter, and the host reads it after the
    # launch's batch has finished: launches need no barrier around it, so the runtime's hazard
    # tracking is told it is neither read nor written (it then counts as read)
    last = max([b.binding for b in buffers] + [layout.uniform_binding])
    status = BufferSlot(last + 1, LOOP_STATUS_BUFFER, readable=False, writable=False)
    return replace(layout, buffers=layout.buffers + (status,))


def block_fields(params: tuple[ir.Param, ...]) -> list[tuple[str, str]]:
    """The argument block's `(name, struct format)` fields for these parameters, in block
    order: the header, the scalars, then each array's geometry (see the module docstring).

    >>> from pykern.lang import dtypes as dt
    >>> [name for name, _ in block_fields((ir.Param(name="x", type=dt.f32[:]),))][6:]
    ['x.offset', 'x.shape0', 'x.stride0']
    """
    fields = [(name, "I") for name in HEADER_FIELDS]
    fields += [(p.name, scalar_format(p.type)) for p in params if not p.is_array]
    for p in params:
        if p.is_array:
            fields += [(name, ARRAY_FIELD_FORMAT) for name in array_fields(p.name, p.type.ndim)]
    return fields


def array_fields(array: str, ndim: int) -> list[str]:
    """The geometry fields of an array parameter: offset, shape per axis, stride per axis."""
    return [offset_field(array)] + [shape_field(array, k) for k in range(ndim)] \
        + [stride_field(array, k) for k in range(ndim)]


def without_loop_status(layout: BindingLayout) -> BindingLayout:
    """`layout` without its LOOP_STATUS_BUFFER slot (the last binding, so no other moves)."""
    return replace(layout, buffers=tuple(b for b in layout.buffers
                                         if b.name != LOOP_STATUS_BUFFER))


def scalar_format(dtype: DType) -> str:
    """The `struct` format character a scalar parameter of `dtype` is passed as."""
    return SCALAR_FORMATS[dtype.name]


def offset_field(array: str) -> str:
    return f"{array}.offset"


def shape_field(array: str, axis: int) -> str:
    return f"{array}.shape{axis}"


def stride_field(array: str, axis: int) -> str:
    return f"{array}.stride{axis}"
