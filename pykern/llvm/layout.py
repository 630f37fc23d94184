"""The argument block of a host launch: one 8-byte slot per value, which the compiled entry
reads and the launcher writes (one computation serves both).

In parameter order: an array takes `2 + 2 * ndim` slots (its element pointer, its offset,
then its shape and its element strides), a scalar one slot (its bytes at the start, little
endian); then the grid and the number of workgroups, three slots each; a kernel compiled in
debug mode has one more, the address of the report its failed checks write
(`pykern.llvm.debug`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pykern import ir
from pykern.lang.dtypes import ArrayType


@dataclass(frozen=True)
class ArgLayout:
    first_slot: dict[str, int]  # parameter -> its first slot
    grid_slot: int  # grid[0..2], then num_groups[0..2]
    size: int  # slots in all
    report_slot: int | None = None  # debug mode: the report's address


def arg_layout(kernel: ir.Kernel) -> ArgLayout:
    first: dict[str, int] = {}
    slot = 0
    for p in kernel.params:
        first[p.name] = slot
        slot += 2 + 2 * p.type.ndim if isinstance(p.type, ArrayType) else 1
    if kernel.debug:
        return ArgLayout(first, slot, slot + 7, report_slot=slot + 6)
    return ArgLayout(first, slot, slot + 6)
