"""Cooperative-matrix tiles: the type of a `pk.coop_*` value, and the three uses of a tile.

A tile is a rows x cols matrix held by a whole subgroup together (SPIR-V
`OpTypeCooperativeMatrixKHR` with Subgroup scope): the hardware decides which invocation holds
which element, so a kernel only loads, stores, combines and multiplies whole tiles. Its `use`
says which operand of a multiply-add it can be: `pk.MATRIX_A` (M x K), `pk.MATRIX_B` (K x N) or
`pk.ACCUMULATOR` (M x N, the addend and the result).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pykern.lang.dtypes import DType


class CoopUse(enum.Enum):
    """Which operand of `pk.coop_mma(a, b, c)` a tile is."""

    MATRIX_A = "matrix_a"
    MATRIX_B = "matrix_b"
    ACCUMULATOR = "accumulator"

    def __repr__(self) -> str:
        return f"pk.{self.name}"


MATRIX_A = CoopUse.MATRIX_A
MATRIX_B = CoopUse.MATRIX_B
ACCUMULATOR = CoopUse.ACCUMULATOR

# the element types a tile may have (the device says which combinations it multiplies)
# where a tile's rows may start, in bytes: Vulkan asks cooperative-matrix loads and stores for
# the lesser of 16 bytes and a tile row's size, and every tile row the devices offer is 16
# bytes or more (a misaligned row is read from the aligned address below it on NVIDIA)
TILE_ALIGNMENT = 16
TILE_DTYPE_NAMES = ("f16", "bf16", "f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32")


@dataclass(frozen=True)
class CoopType:
    """The type of a tile: element dtype, shape and use. It stands where a `DType` stands for
    scalars (the `type` of an IR expression, of a local), but never mixes with numbers except
    through the operations of docs/language.md "Cooperative matrices"."""

    dtype: DType
    rows: int
    cols: int
    use: CoopUse

    @property
    def name(self) -> str:
        """How messages name it: `tile[f32 16x16 accumulator]`."""
        return f"tile[{self.dtype.name} {self.rows}x{self.cols} {self.use.value}]"

    # what scalar-only code asks of a type: a tile is none of these
    kind = "tile"
    is_float = False
    is_int = False
    is_signed = False

    def __repr__(self) -> str:
        return self.name

    def with_dtype(self, dtype: DType) -> CoopType:
        return CoopType(dtype, self.rows, self.cols, self.use)


def is_tile(t: object) -> bool:
    return isinstance(t, CoopType)
