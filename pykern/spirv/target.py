"""What the SPIR-V layer may assume about the device it compiles for."""

from __future__ import annotations

from dataclasses import dataclass

from .grammar import Capability

# Device feature names, as the compiler reports them in `SpirvModule.required_features`. Where
# `pykern.runtime.DeviceFeatures` has a bool field for one, the name is that field's; the
# subgroup ones are "subgroup_" + a name in `DeviceFeatures.subgroup_operations`
# (see `features_of`). The comment names the Vulkan feature the runtime must enable.
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
# VkPhysicalDeviceFloatControlsProperties.shaderSignedZeroInfNanPreserveFloat16/32/64 (all the
# widths the device has): IEEE infinities, NaNs and signed zeros, as numpy computes them.
# Optional: without it the driver may assume none occur (fast math)
PRESERVE_INF_NAN = "signed_zero_inf_nan_preserve"

# the device feature each capability needs; capabilities not listed are core Vulkan 1.2 compute
CAPABILITY_FEATURES: dict[Capability, str] = {
    Capability.Float16: FP16,
    Capability.Float64: FP64,
    Capability.Int8: INT8,
    Capability.Int16: INT16,
    Capability.Int64: INT64,
    Capability.StorageBuffer8BitAccess: STORAGE8,
    Capability.StorageBuffer16BitAccess: STORAGE16,
    Capability.AtomicFloat32AddEXT: FLOAT32_ATOMIC_ADD,
    Capability.AtomicFloat64AddEXT: FLOAT64_ATOMIC_ADD,
    Capability.Int64Atomics: INT64_ATOMICS,
    Capability.GroupNonUniform: SUBGROUP_BASIC,
    Capability.GroupNonUniformVote: SUBGROUP_VOTE,
    Capability.GroupNonUniformArithmetic: SUBGROUP_ARITHMETIC,
    Capability.GroupNonUniformBallot: SUBGROUP_BALLOT,
    Capability.GroupNonUniformShuffle: SUBGROUP_SHUFFLE,
    Capability.SignedZeroInfNanPreserve: PRESERVE_INF_NAN,
}

ALL_FEATURES = frozenset(CAPABILITY_FEATURES.values())


@dataclass(frozen=True)
class Target:
    """The device as the compiler sees it.

    `features` are the optional device features (names above) the compiler may use; a kernel
    that needs one outside it is refused. The default allows all of them: the module then lists
    what it needs in `SpirvModule.required_features`, for the runtime to enable or refuse.
    Where a feature only makes code faster (native float atomics) or more exact
    (PRESERVE_INF_NAN), its absence selects another way (a compare-and-swap loop; fast math)
    instead of a refusal.

    `loop_iteration_cap` is the number of loop iterations after which the device's driver
    ends every loop of an invocation without a word (`DeviceLimits.loop_iteration_cap`); where
    it is set, every loop reports being cut short (`pykern.spirv.loopcap`).
    """

    max_push_constants_size: int = 128
    features: frozenset[str] = ALL_FEATURES
    spirv_version: tuple[int, int] = (1, 5)
    target_env: str = "vulkan1.2"
    loop_iteration_cap: int | None = None


def required_features(capabilities: frozenset[Capability]) -> frozenset[str]:
    """The device features a module declaring `capabilities` needs."""
    return frozenset(CAPABILITY_FEATURES[c] for c in capabilities if c in CAPABILITY_FEATURES)


def features_of(device_features: object) -> frozenset[str]:
    """The feature names a `pykern.runtime.DeviceFeatures` (or any object with the same
    fields) grants: its true bool fields, and "subgroup_<op>" per `subgroup_operations`."""
    names = {n for n in ALL_FEATURES if getattr(device_features, n, False) is True}
    for op in getattr(device_features, "subgroup_operations", ()):
        if f"subgroup_{op}" in ALL_FEATURES:
            names.add(f"subgroup_{op}")
    return frozenset(names)
