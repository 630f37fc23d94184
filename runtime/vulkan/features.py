"""Which Vulkan features the runtime turns on, and how they are queried and enabled.

The compiler emits SPIR-V capabilities (Int64, Float16, StorageBuffer8BitAccess,
AtomicFloat32AddEXT, ...) whenever a kernel uses them; a capability whose feature is off is
undefined behaviour. So the device is created with every feature of this curated list that it
supports. One table drives both
the query (for `DeviceInfo.features`) and the enabling.

The validation layer of Debian 12 (1.3.239) predates VK_KHR_cooperative_matrix and
VK_KHR_shader_bfloat16: it rejects a pNext chain that names their feature structs (in the query
as in vkCreateDevice). So with the layer on (`PYKERN_VALIDATE=1`, `Config.validate`) those
structs are neither chained nor their extensions enabled, and their features read False:
cooperative matrices are unusable in a validated process, on every device.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _vk
from ._vk import ffi, lib
from .objects import read_properties
from ..description import FloatControls
from .raw_struct import RawFeatures

COOPERATIVE_MATRIX = "VK_KHR_cooperative_matrix"
SHADER_BFLOAT16 = "VK_KHR_shader_bfloat16"
# VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR (extension 142), newer than the
# `vulkan` package
SHADER_BFLOAT16_FEATURES_STYPE = 1000141000


@dataclass(frozen=True)
class FeatureStruct:
    """One Vulkan feature struct of the pNext chain, and the members of it we enable.

    `raw_layout`, for a struct the `vulkan` package does not declare, lists all its VkBool32
    members in declaration order: it is then built as raw memory (`RawFeatures`).
    `newer_than_validation`: the validation layer we test with does not know the struct, so it
    is left out whenever the layer is on.
    """

    ctype: str
    stype: int
    members: tuple[str, ...]
    extension: str | None = None  # None: core in Vulkan 1.2
    raw_layout: tuple[str, ...] = ()
    newer_than_validation: bool = False

    def new(self, **values: bool) -> object:
        """A zeroed struct of this kind with its sType, and `values` set."""
        if self.raw_layout:
            return RawFeatures(self.stype, self.raw_layout, **values)
        return ffi.new(self.ctype + "*", {"sType": self.stype, **values})

    def usable(self, extensions: list[str], validate: bool) -> bool:
        """Whether the struct may be chained on a device with `extensions`."""
        if self.newer_than_validation and validate:
            return False
        return self.extension is None or self.extension in extensions


CORE_MEMBERS = ("shaderInt64", "shaderFloat64", "shaderInt16")

FEATURE_STRUCTS = (
    FeatureStruct(
        "VkPhysicalDeviceVulkan11Features",
        lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        (
            "storageBuffer16BitAccess",
            "uniformAndStorageBuffer16BitAccess",
            "storagePushConstant16",
            "variablePointersStorageBuffer",
            "variablePointers",
        ),
    ),
    FeatureStruct(
        "VkPhysicalDeviceVulkan12Features",
        lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        (
            "storageBuffer8BitAccess",
            "uniformAndStorageBuffer8BitAccess",
            "storagePushConstant8",
            "shaderBufferInt64Atomics",
            "shaderSharedInt64Atomics",
            "shaderFloat16",
            "shaderInt8",
            "scalarBlockLayout",
            "uniformBufferStandardLayout",
            "shaderSubgroupExtendedTypes",
            "hostQueryReset",
            "timelineSemaphore",
            "vulkanMemoryModel",
            "vulkanMemoryModelDeviceScope",
            "subgroupBroadcastDynamicId",
        ),
    ),
    FeatureStruct(
        "VkPhysicalDeviceShaderAtomicFloatFeaturesEXT",
        lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
        (
            "shaderBufferFloat32Atomics",
            "shaderBufferFloat32AtomicAdd",
            "shaderBufferFloat64Atomics",
            "shaderBufferFloat64AtomicAdd",
            "shaderSharedFloat32Atomics",
            "shaderSharedFloat32AtomicAdd",
            "shaderSharedFloat64Atomics",
            "shaderSharedFloat64AtomicAdd",
        ),
        "VK_EXT_shader_atomic_float",
    ),
    FeatureStruct(
        "VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT",
        lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT,
        (
            "shaderBufferFloat16Atomics",
            "shaderBufferFloat16AtomicAdd",
            "shaderBufferFloat16AtomicMinMax",
            "shaderBufferFloat32AtomicMinMax",
            "shaderBufferFloat64AtomicMinMax",
            "shaderSharedFloat16Atomics",
            "shaderSharedFloat16AtomicAdd",
            "shaderSharedFloat16AtomicMinMax",
            "shaderSharedFloat32AtomicMinMax",
            "shaderSharedFloat64AtomicMinMax",
        ),
        "VK_EXT_shader_atomic_float2",
    ),
    FeatureStruct(
        "VkPhysicalDeviceSubgroupSizeControlFeatures",
        lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
        ("subgroupSizeControl", "computeFullSubgroups"),
        "VK_EXT_subgroup_size_control",
    ),
    FeatureStruct(
        "VkPhysicalDeviceCooperativeMatrixFeaturesKHR",
        lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
        ("cooperativeMatrix",),  # not cooperativeMatrixRobustBufferAccess: robustness is off
        COOPERATIVE_MATRIX,
        newer_than_validation=True,
    ),
    FeatureStruct(
        "VkPhysicalDeviceShaderBfloat16FeaturesKHR",
        SHADER_BFLOAT16_FEATURES_STYPE,
        ("shaderBFloat16Type", "shaderBFloat16CooperativeMatrix"),
        SHADER_BFLOAT16,
        raw_layout=("shaderBFloat16Type", "shaderBFloat16DotProduct",
                    "shaderBFloat16CooperativeMatrix"),
        newer_than_validation=True,
    ),
)

# extensions without a feature struct of their own, enabled when present
PLAIN_EXTENSIONS = (
    "VK_KHR_push_descriptor",
    "VK_KHR_shader_non_semantic_info",  # debugPrintf
    "VK_KHR_portability_subset",  # must be enabled whenever a driver exposes it
)


_INDEPENDENCE = {
    lib.VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY: "32_bit_only",
    lib.VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL: "all",
    lib.VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE: "none",
}


def query_float_controls(physical_device: object) -> FloatControls:
    """The device's float controls (the caller checks that it has Vulkan 1.2 or
    VK_KHR_shader_float_controls, which the struct needs)."""
    props = read_properties(physical_device, "VkPhysicalDeviceFloatControlsProperties",
                            lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES)

    def widths(member: str) -> frozenset[int]:
        return frozenset(w for w in (16, 32, 64) if getattr(props, f"{member}Float{w}"))

    return FloatControls(
        signed_zero_inf_nan_preserve=widths("shaderSignedZeroInfNanPreserve"),
        denorm_preserve=widths("shaderDenormPreserve"),
        denorm_flush_to_zero=widths("shaderDenormFlushToZero"),
        rounding_mode_rte=widths("shaderRoundingModeRTE"),
        rounding_mode_rtz=widths("shaderRoundingModeRTZ"),
        denorm_behavior_independence=_INDEPENDENCE.get(props.denormBehaviorIndependence, "none"),
        rounding_mode_independence=_INDEPENDENCE.get(props.roundingModeIndependence, "none"),
    )


def device_extensions(physical_device: object) -> list[str]:
    """Names of the device extensions the driver offers."""
    return _vk.enumerate_names(
        lib.vkEnumerateDeviceExtensionProperties,
        physical_device,
        ffi.NULL,
        kind="VkExtensionProperties",
        field="extensionName",
    )


def query_supported(
    physical_device: object, extensions: list[str], validate: bool = False
) -> dict[str, bool]:
    """Every curated feature name mapped to whether the device supports it (and, where
    `validate`, the validation layer lets us use it).

    Structs of absent extensions are left out of the query (the chain may only name structs the
    driver knows), as are those newer than the validation layer where `validate`; their members
    read False.
    """
    chain = [(fs, fs.new()) for fs in FEATURE_STRUCTS if fs.usable(extensions, validate)]
    root = ffi.new(
        "VkPhysicalDeviceFeatures2*", {"sType": lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2}
    )
    _link(root, [s for _, s in chain])
    lib.vkGetPhysicalDeviceFeatures2(physical_device, root)
    supported = {name: bool(getattr(root.features, name)) for name in CORE_MEMBERS}
    present = {fs.ctype: s for fs, s in chain}
    for fs in FEATURE_STRUCTS:
        struct = present.get(fs.ctype)
        for name in fs.members:
            supported[name] = struct is not None and bool(getattr(struct, name))
    return supported


def build_enable_chain(
    supported: dict[str, bool], extensions: list[str], validate: bool = False
) -> tuple[object, list[object], list[str]]:
    """The VkPhysicalDeviceFeatures2 to chain into VkDeviceCreateInfo.pNext, the structs it
    points to (keep them alive), and the extensions to enable with them; where `validate`,
    nothing the validation layer does not know."""
    root = ffi.new(
        "VkPhysicalDeviceFeatures2*", {"sType": lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2}
    )
    for name in CORE_MEMBERS:
        setattr(root.features, name, supported[name])
    structs, enable = [], [e for e in PLAIN_EXTENSIONS if e in extensions]
    for fs in FEATURE_STRUCTS:
        on = {name: supported[name] for name in fs.members if supported[name]}
        if fs.extension is not None:
            if not fs.usable(extensions, validate) or not on:
                continue
            enable.append(fs.extension)
        structs.append(fs.new(**on))
    _link(root, structs)
    return root, structs, enable


def _link(root: object, structs: list[object]) -> None:
    previous = root
    for struct in structs:
        previous.pNext = struct.pointer if isinstance(struct, RawFeatures) else struct
        previous = struct
