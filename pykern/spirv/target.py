"""What the SPIR-V layer may assume about the device it compiles for."""

from __future__ import annotations

from dataclasses import dataclass

from .grammar import Capability

# Device feature names, as the compiler reports them in `SpirvModule.required_features`. The
# comment names the Vulkan feature (VkPhysicalDeviceVulkan1xFeatures / VkPhysicalDeviceFeatures
# / extension struct) the runtime must enable for it.
FP16 = "fp16"  # shaderFloat16
FP64 = "fp64"  # shaderFloat64
INT8 = "int8"  # shaderInt8
INT16 = "int16"  # shaderInt16
INT64 = "int64"  # shaderInt64
STORAGE_BUFFER_8BIT = "storage_buffer_8bit"  # storageBuffer8BitAccess
UNIFORM_BUFFER_8BIT = "uniform_buffer_8bit"  # uniformAndStorageBuffer8BitAccess
PUSH_CONSTANT_8BIT = "push_constant_8bit"  # storagePushConstant8
STORAGE_BUFFER_16BIT = "storage_buffer_16bit"  # storageBuffer16BitAccess
UNIFORM_BUFFER_16BIT = "uniform_buffer_16bit"  # uniformAndStorageBuffer16BitAccess
PUSH_CONSTANT_16BIT = "push_constant_16bit"  # storagePushConstant16
FLOAT_ATOMICS = "float_atomics"  # VK_EXT_shader_atomic_float shaderBufferFloat32AtomicAdd

ALL_FEATURES = frozenset({
    FP16, FP64, INT8, INT16, INT64, STORAGE_BUFFER_8BIT, UNIFORM_BUFFER_8BIT, PUSH_CONSTANT_8BIT,
    STORAGE_BUFFER_16BIT, UNIFORM_BUFFER_16BIT, PUSH_CONSTANT_16BIT, FLOAT_ATOMICS,
})

# the device feature each capability needs; capabilities not listed are core Vulkan 1.2 compute
CAPABILITY_FEATURES: dict[Capability, str] = {
    Capability.Float16: FP16,
    Capability.Float64: FP64,
    Capability.Int8: INT8,
    Capability.Int16: INT16,
    Capability.Int64: INT64,
    Capability.StorageBuffer8BitAccess: STORAGE_BUFFER_8BIT,
    Capability.UniformAndStorageBuffer8BitAccess: UNIFORM_BUFFER_8BIT,
    Capability.StoragePushConstant8: PUSH_CONSTANT_8BIT,
    Capability.StorageBuffer16BitAccess: STORAGE_BUFFER_16BIT,
    Capability.StorageUniform16: UNIFORM_BUFFER_16BIT,
    Capability.StoragePushConstant16: PUSH_CONSTANT_16BIT,
    Capability.AtomicFloat32AddEXT: FLOAT_ATOMICS,
}


@dataclass(frozen=True)
class Target:
    """The device as the compiler sees it.

    `features` are the optional device features (names above) the compiler may use; a kernel
    that needs one outside it is refused. The default allows all of them: the module then lists
    what it needs in `SpirvModule.required_features`, for the runtime to enable or refuse.
    """

    max_push_constants_size: int = 128
    features: frozenset[str] = ALL_FEATURES
    spirv_version: tuple[int, int] = (1, 5)
    target_env: str = "vulkan1.2"


def required_features(capabilities: frozenset[Capability]) -> frozenset[str]:
    """The device features a module declaring `capabilities` needs."""
    return frozenset(CAPABILITY_FEATURES[c] for c in capabilities if c in CAPABILITY_FEATURES)
