"""SPIR-V enumerants newer than the grammar `grammar.py` is generated from (Debian 12's
spirv-headers): SPV_KHR_cooperative_matrix and SPV_KHR_bfloat16, with the values the SPIR-V
registry gives them. When the generator's input catches up these move into grammar.py."""

from __future__ import annotations

import enum


class CoopOp(enum.IntEnum):
    """Opcodes of SPV_KHR_cooperative_matrix."""

    TypeCooperativeMatrixKHR = 4456
    CooperativeMatrixLoadKHR = 4457
    CooperativeMatrixStoreKHR = 4458
    CooperativeMatrixMulAddKHR = 4459
    CooperativeMatrixLengthKHR = 4460


class CoopCapability(enum.IntEnum):
    CooperativeMatrixKHR = 6022
    BFloat16TypeKHR = 5116
    BFloat16CooperativeMatrixKHR = 5118


class CooperativeMatrixUse(enum.IntEnum):
    MatrixAKHR = 0
    MatrixBKHR = 1
    MatrixAccumulatorKHR = 2


class CooperativeMatrixLayout(enum.IntEnum):
    RowMajorKHR = 0
    ColumnMajorKHR = 1


class CooperativeMatrixOperands(enum.IntFlag):
    NoneKHR = 0x00
    MatrixASignedComponentsKHR = 0x01
    MatrixBSignedComponentsKHR = 0x02
    MatrixCSignedComponentsKHR = 0x04
    MatrixResultSignedComponentsKHR = 0x08
    SaturatingAccumulationKHR = 0x10


class FPEncoding(enum.IntEnum):
    BFloat16KHR = 0


COOPERATIVE_MATRIX_EXTENSION = "SPV_KHR_cooperative_matrix"
BFLOAT16_EXTENSION = "SPV_KHR_bfloat16"
