"""`Feature`: the optional device features kernels may need, one name for the runtime and the
compiler alike.

A leaf: stdlib imports only, nothing of Vulkan, so the compiler (which decides what a kernel
needs) may import it without the loader. The runtime answers `DeviceFeatures.has(feature)`; the
compiler's target lists the features it may use and the passes list what a kernel needs.
It also holds `CoopShape`, one cooperative-matrix shape of a device (`DeviceInfo.coop_shapes`),
which the compiler's target carries too.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class Feature(str, enum.Enum):
    """An optional device feature. The value is the name messages print ('fp64') and, for all
    but the subgroup ones, the `DeviceFeatures` field that holds it; the comment names the
    Vulkan feature the runtime enables for it. A str enum, so `Feature.FP64 == "fp64"`."""

    FP16 = "fp16"  # shaderFloat16
    FP64 = "fp64"  # shaderFloat64
    INT8 = "int8"  # shaderInt8
    INT16 = "int16"  # shaderInt16
    INT64 = "int64"  # shaderInt64
    STORAGE8 = "storage8"  # storageBuffer8BitAccess
    STORAGE16 = "storage16"  # storageBuffer16BitAccess
    FLOAT32_ATOMIC_ADD = "float32_atomic_add"  # shaderBufferFloat32AtomicAdd
    FLOAT64_ATOMIC_ADD = "float64_atomic_add"  # shaderBufferFloat64AtomicAdd
    INT64_ATOMICS = "int64_atomics"  # shaderBufferInt64Atomics (shaderSharedInt64Atomics too)
    SUBGROUP_BASIC = "subgroup_basic"  # VK_SUBGROUP_FEATURE_BASIC_BIT in compute
    SUBGROUP_VOTE = "subgroup_vote"  # VK_SUBGROUP_FEATURE_VOTE_BIT
    SUBGROUP_ARITHMETIC = "subgroup_arithmetic"  # VK_SUBGROUP_FEATURE_ARITHMETIC_BIT
    SUBGROUP_BALLOT = "subgroup_ballot"  # VK_SUBGROUP_FEATURE_BALLOT_BIT (broadcast)
    SUBGROUP_SHUFFLE = "subgroup_shuffle"  # VK_SUBGROUP_FEATURE_SHUFFLE_BIT
    # SPV_KHR_float_controls (VkPhysicalDeviceFloatControlsProperties), present where the
    # device allows the mode for some float width: IEEE inf/NaN/-0, subnormals kept, round to
    # nearest even
    SIGNED_ZERO_INF_NAN_PRESERVE = "signed_zero_inf_nan_preserve"
    DENORM_PRESERVE = "denorm_preserve"
    ROUNDING_MODE_RTE = "rounding_mode_rte"
    # VK_KHR_cooperative_matrix (cooperativeMatrix), enabled and usable: off under the
    # validation layer (see runtime/vulkan/features.py)
    COOPERATIVE_MATRIX = "cooperative_matrix"
    # VK_KHR_shader_bfloat16's shaderBFloat16CooperativeMatrix, with COOPERATIVE_MATRIX
    BFLOAT16_COOPERATIVE_MATRIX = "bfloat16_cooperative_matrix"

    def __str__(self) -> str:
        return self.value


# the subgroup features, by the operation name `DeviceFeatures.subgroup_operations` lists
SUBGROUP_OPERATIONS: dict[Feature, str] = {
    Feature.SUBGROUP_BASIC: "basic",
    Feature.SUBGROUP_VOTE: "vote",
    Feature.SUBGROUP_ARITHMETIC: "arithmetic",
    Feature.SUBGROUP_BALLOT: "ballot",
    Feature.SUBGROUP_SHUFFLE: "shuffle",
}


# Vulkan's component types (VkComponentTypeKHR) by pykern's name for them, mapped to the object
# that stands for that type in `CoopShape`. The runtime may not import pykern, so each name
# stands for itself until `import pykern` replaces the values with its dtypes (`pk.f16`, ...):
# then `shape.a == pk.f16` holds.
COMPONENT_DTYPES: dict[str, object] = {
    name: name
    for name in ("f16", "f32", "bf16", "i8", "u8", "i32", "u32", "f64", "i16", "u16", "i64",
                 "u64")
}


class CoopShape(NamedTuple):
    """One cooperative-matrix multiply the device runs at subgroup scope: C (m x n, element
    type `c`) += A (m x k) @ B (k x n), A and B of element type `a`; the result is of type `c`
    too. `a` and `c` are values of `COMPONENT_DTYPES` (pykern dtypes after `import pykern`).

    >>> str(CoopShape(16, 16, 16, "f16", "f32"))
    '16x16x16 f16->f32'
    """

    m: int
    n: int
    k: int
    a: object
    c: object

    def __str__(self) -> str:
        return f"{self.m}x{self.n}x{self.k} {component_name(self.a)}->{component_name(self.c)}"


def component_name(dtype: object) -> str:
    """The name (a key of `COMPONENT_DTYPES`) of a component type, `str(dtype)` if none."""
    for name, value in COMPONENT_DTYPES.items():
        if value is dtype or value == dtype:
            return name
    return str(dtype)
