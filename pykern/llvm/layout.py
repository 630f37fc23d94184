"""The argument block of a host launch: one 8-byte slot per value, which the compiled entry
reads and the launcher writes (one computation serves both).

In parameter order: an array takes `ARRAY_HEAD + 2 * ndim` slots (its element pointer, the
number of elements its buffer holds, its offset, then its shape and its element strides), a
scalar one slot (its bytes at the start, little endian); then the grid and the number of
workgroups, three slots each, then the address of the launch's stop word (an i32 the
launcher sets to stop the launch early: `pykern.llvm.stopping`); a kernel compiled in debug
mode has one more, the address of the report its failed checks write (`pykern.llvm.debug`).

The buffer's length bounds every access outside debug mode (`pykern.llvm.robust`): an
element whose address `offset + sum(index * stride)` is not in `[0, length)` is never
touched.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykern import ir
from pykern.lang.dtypes import ArrayType

# an array's slots before its shape: pointer, buffer length (elements), offset (elements)
ARRAY_HEAD = 3
POINTER, LENGTH, OFFSET = 0, 1, 2


@dataclass(frozen=True)
class ArgLayout:
    first_slot: dict[str, int]  # parameter -> its first slot
    grid_slot: int  # grid[0..2], then num_groups[0..2]
    size: int  # slots in all
    report_slot: int | None = None  # debug mode: the report's address

    @property
    def stop_slot(self) -> int:
        """The slot of the stop word's address (after the grid and the workgroup counts)."""
        return self.grid_slot + 6


def array_slots(ndim: int) -> int:
    """The slots an array of `ndim` dimensions takes."""
    return ARRAY_HEAD + 2 * ndim


def arg_layout(kernel: ir.Kernel) -> ArgLayout:
    first: dict[str, int] = {}
    slot = 0
    for p in kernel.params:
        first[p.name] = slot
        slot += array_slots(p.type.ndim) if isinstance(p.type, ArrayType) else 1
    if kernel.debug:
        return ArgLayout(first, slot, slot + 8, report_slot=slot + 7)
    return ArgLayout(first, slot, slot + 7)
