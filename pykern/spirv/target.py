"""What the SPIR-V layer may assume about the device it compiles for."""

from __future__ import annotations

from dataclasses import dataclass

from .grammar import Capability

# Device feature names, as the compiler reports them in `SpirvModule.required_features`; where
# `pykern.runtime.DeviceFeatures` has a field for one, the name is that field's. The comment
# names the Vulkan feature the runtime must enable for it.
FP16 = "fp16"  # shaderFloat16
FP64 = "fp64"  # shaderFloat64
INT8 = "int8"  # shaderInt8
INT16 = "int16"  # shaderInt16
INT64 = "int64"  # shaderInt64
STORAGE8 = "storage8"  # storageBuffer8BitAccess
UNIFORM8 = "uniform8"  # uniformAndStorageBuffer8BitAccess
PUSH_CONSTANT8 = "push_constant8"  # storagePushConstant8
STORAGE16 = "storage16"  # storageBuffer16BitAccess
UNIFORM16 = "uniform16"  # uniformAndStorageBuffer16BitAccess
PUSH_CONSTANT16 = "push_constant16"  # storagePushConstant16
FLOAT32_ATOMIC_ADD = "float32_atomic_add"  # shaderBufferFloat32AtomicAdd

ALL_FEATURES = frozenset({
    FP16, FP64, INT8, INT16, INT64, STORAGE8, UNIFORM8, PUSH_CONSTANT8, STORAGE16, UNIFORM16,
    PUSH_CONSTANT16, FLOAT32_ATOMIC_ADD,
})

# the device feature each capability needs; capabilities not listed are core Vulkan 1.2 compute
CAPABILITY_FEATURES: dict[Capability, str] = {
    Capability.Float16: FP16,
    Capability.Float64: FP64,
    Capability.Int8: INT8,
    Capability.Int16: INT16,
    Capability.Int64: INT64,
    Capability.StorageBuffer8BitAccess: STORAGE8,
    Capability.UniformAndStorageBuffer8BitAccess: UNIFORM8,
    Capability.StoragePushConstant8: PUSH_CONSTANT8,
    Capability.StorageBuffer16BitAccess: STORAGE16,
    Capability.StorageUniform16: UNIFORM16,
    Capability.StoragePushConstant16: PUSH_CONSTANT16,
    Capability.AtomicFloat32AddEXT: FLOAT32_ATOMIC_ADD,
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
