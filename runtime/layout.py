"""How a shader's resources are bound: the one description shared by compiler and launcher.

A `BindingLayout` says which storage buffer sits at which binding (descriptor set 0) and how the
argument block is laid out: a list of scalar fields at byte offsets. The compiler emits a block
struct with exactly these members and offsets; the launcher packs values with `pack`. The block
goes into push constants when it fits the device's `maxPushConstantsSize`, otherwise into a
small uniform buffer at `uniform_binding` (the compiler decides and records it here).

Fields are scalars only (no arrays), so the push-constant (std430) and uniform (std140) rules
give the same offsets: each field is aligned to its own size.

This module knows nothing of kernels: a hand-written GLSL shader can be described by it as well.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

# struct format characters of the scalar kinds a field may have, and their sizes
FIELD_FORMATS = {"b": 1, "B": 1, "h": 2, "H": 2, "e": 2, "i": 4, "I": 4, "f": 4,
                 "q": 8, "Q": 8, "d": 8}

# the default names of the fields that receive the launch's grid and each dispatch's base
GRID_FIELDS = ("grid0", "grid1", "grid2")
BASE_FIELDS = ("base0", "base1", "base2")

PUSH_CONSTANT = "push_constant"
UNIFORM = "uniform"


@dataclass(frozen=True)
class BufferSlot:
    """A storage buffer at `binding` of descriptor set 0."""

    binding: int
    name: str
    readable: bool = True
    writable: bool = True


@dataclass(frozen=True)
class Field:
    """One scalar of the argument block. `fmt` is a `struct` format character."""

    name: str
    fmt: str
    offset: int


@dataclass(frozen=True)
class BindingLayout:
    """Buffers and argument block of one compute shader.

    `grid_fields` / `base_fields` name the three u32 fields that receive the launch's logical
    grid and, for each dispatch the runtime issues, the index of its first invocation (a launch
    larger than the device's workgroup-count limit is split into several dispatches). A shader
    computes its logical id as `gl_GlobalInvocationID + base` and skips ids outside `grid`.
    `workgroup` is what one workgroup covers of the grid: the shader's local size, or a
    multiple of it along x for a shader that runs several logical invocations per invocation
    (the runtime counts workgroups and bases in logical invocations either way).
    """

    buffers: tuple[BufferSlot, ...]
    fields: tuple[Field, ...]
    workgroup: tuple[int, int, int]
    block: str = PUSH_CONSTANT
    uniform_binding: int = -1
    grid_fields: tuple[str, str, str] | None = GRID_FIELDS
    base_fields: tuple[str, str, str] | None = BASE_FIELDS
    _struct: struct.Struct = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fmt, pos = "<", 0
        for f in self.fields:
            if f.offset < pos:
                raise ValueError(f"field {f.name} overlaps the one before it")
            fmt += "x" * (f.offset - pos) + f.fmt
            pos = f.offset + FIELD_FORMATS[f.fmt]
        fmt += "x" * (self.size - pos)
        object.__setattr__(self, "_struct", struct.Struct(fmt))

    @staticmethod
    def build(
        buffers: Sequence[BufferSlot],
        fields: Sequence[tuple[str, str]],
        workgroup: tuple[int, int, int],
        max_push_size: int = 128,
    ) -> BindingLayout:
        """Assigns offsets to `(name, fmt)` fields in order, each aligned to its size; puts the
        block in push constants when it fits `max_push_size`, else in a uniform buffer bound
        after the storage buffers."""
        placed, pos = [], 0
        for name, fmt in fields:
            size = FIELD_FORMATS[fmt]
            pos = -(-pos // size) * size
            placed.append(Field(name, fmt, pos))
            pos += size
        size = -(-pos // 16) * 16
        block, ubo = PUSH_CONSTANT, -1
        if size > max_push_size:
            block, ubo = UNIFORM, max((b.binding for b in buffers), default=-1) + 1
        return BindingLayout(tuple(buffers), tuple(placed), tuple(workgroup), block, ubo)

    @property
    def size(self) -> int:
        """Bytes of the argument block, rounded up to 16."""
        if not self.fields:
            return 0
        last = self.fields[-1]
        return -(-(last.offset + FIELD_FORMATS[last.fmt]) // 16) * 16

    def buffer_index(self, name: str) -> int | None:
        """The index in `buffers` of the slot named `name`, or None."""
        return next((i for i, s in enumerate(self.buffers) if s.name == name), None)

    def offset_of(self, name: str) -> int:
        for f in self.fields:
            if f.name == name:
                return f.offset
        raise KeyError(name)

    def pack(self, values: Sequence[object]) -> bytearray:
        """Packs one value per field, in field order, into a new block."""
        return bytearray(self._struct.pack(*values))

    @property
    def packer(self) -> struct.Struct:
        """The block's `struct.Struct`, for hot paths: `layout.packer.pack(*values)` gives the
        bytes `pack(values)` holds, without the list and the copy."""
        return self._struct
