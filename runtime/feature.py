"""`Feature`: the optional device features kernels may need, one name for the runtime and the
compiler alike.

A leaf: stdlib imports only, nothing of Vulkan, so the compiler (which decides what a kernel
needs) may import it without the loader. The runtime answers `DeviceFeatures.has(feature)`; the
compiler's target lists the features it may use and the passes list what a kernel needs.
"""

from __future__ import annotations

import enum


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
    # VK_KHR_cooperative_matrix's cooperativeMatrix (and VK_KHR_shader_bfloat16's
    # shaderBFloat16CooperativeMatrix for bf16 tiles)
    COOPERATIVE_MATRIX = "cooperative_matrix"
    BFLOAT16_COOPERATIVE_MATRIX = "bfloat16_cooperative_matrix"
    # SPV_KHR_float_controls (VkPhysicalDeviceFloatControlsProperties), present where the
    # device allows the mode for some float width: IEEE inf/NaN/-0, subnormals kept, round to
    # nearest even
    SIGNED_ZERO_INF_NAN_PRESERVE = "signed_zero_inf_nan_preserve"
    DENORM_PRESERVE = "denorm_preserve"
    ROUNDING_MODE_RTE = "rounding_mode_rte"

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
