"""What a Vulkan device is and can do: its `DeviceInfo` (runtime/description.py), read once per
physical device."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from . import _vk
from ._vk import ffi, lib
from .coop_shapes import query_coop_shapes
from ..description import DeviceFeatures, DeviceInfo, DeviceLimits
from ..description import FloatControls
from .features import device_extensions, query_float_controls, query_supported

KINDS = {
    lib.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: "discrete",
    lib.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: "integrated",
    lib.VK_PHYSICAL_DEVICE_TYPE_CPU: "cpu",
    lib.VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: "virtual",
    lib.VK_PHYSICAL_DEVICE_TYPE_OTHER: "other",
}

# drivers that end every loop of an invocation after a number of iterations in total, by
# VkDriverId: Mesa's llvmpipe (lavapipe) counts loop back-edges per invocation batch and stops
# at 65,535 (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS), in every version we know
LOOP_ITERATION_CAPS = {lib.VK_DRIVER_ID_MESA_LLVMPIPE: 65535}

SUBGROUP_OPERATIONS = (
    (lib.VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"),
    (lib.VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"),
    (lib.VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"),
    (lib.VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"),
    (lib.VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"),
    (lib.VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"),
    (lib.VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"),
    (lib.VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"),
)


def query_device_info(
    index: int, physical_device: object, instance: object | None = None, validate: bool = False
) -> DeviceInfo:
    """Reads properties, limits, memory heaps, curated features and cooperative-matrix shapes
    of one physical device. `instance` (its VkInstance) provides the shapes' query function;
    without it, or where `validate` (the validation layer is on), the shapes are ()."""
    extensions = device_extensions(physical_device)
    supported = query_supported(physical_device, extensions, validate)
    queried = _PropertyChain(physical_device, extensions)
    props = queried.props2.properties
    api_version = _vk.split_version(props.apiVersion)
    driver = queried.driver
    features = _features(physical_device, supported, extensions, queried, api_version)
    return DeviceInfo(
        index=index,
        name=ffi.string(props.deviceName).decode(errors="replace"),
        kind=KINDS.get(props.deviceType, "other"),
        vendor_id=props.vendorID,
        device_id=props.deviceID,
        api_version=api_version,
        driver=ffi.string(driver.driverInfo).decode(errors="replace")
        or ffi.string(driver.driverName).decode(errors="replace"),
        uuid=bytes(ffi.buffer(queried.ids.deviceUUID)).hex(),
        memory=largest_device_local_heap(physical_device),
        features=features,
        limits=_limits(props.limits, queried),
        extensions=frozenset(extensions),
        pipeline_cache_uuid=bytes(ffi.buffer(props.pipelineCacheUUID)).hex(),
        coop_shapes=query_coop_shapes(instance, physical_device)
        if features.cooperative_matrix and instance is not None else (),
    )


class _PropertyChain:
    """vkGetPhysicalDeviceProperties2 with the subgroup, driver, ID and (where the extension
    is there) push-descriptor properties chained. Holds every struct of the chain: cffi frees
    a struct with its last Python reference."""

    def __init__(self, physical_device: object, extensions: Collection[str]) -> None:
        self.subgroup = ffi.new(
            "VkPhysicalDeviceSubgroupProperties*",
            {"sType": lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES},
        )
        self.driver = ffi.new(
            "VkPhysicalDeviceDriverProperties*",
            {"sType": lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
             "pNext": self.subgroup},
        )
        self.ids = ffi.new(
            "VkPhysicalDeviceIDProperties*",
            {"sType": lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, "pNext": self.driver},
        )
        self.push = ffi.new(
            "VkPhysicalDevicePushDescriptorPropertiesKHR*",
            {"sType": lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR},
        )
        # the chain may only name structs the driver knows
        self.has_push = "VK_KHR_push_descriptor" in extensions
        optional = [("push", self.push if self.has_push else None)]
        for name, struct, stype, extension in _OPTIONAL_PROPERTIES:
            wanted = extension in extensions or (
                extension == "VK_EXT_subgroup_size_control" and api_version_of(physical_device)
                >= (1, 3))
            made = ffi.new(struct, {"sType": getattr(lib, stype)}) if wanted else None
            setattr(self, name, made)
            optional.append((name, made))
        tail = self.subgroup
        for _, made in optional:
            if made is not None:
                tail.pNext = made
                tail = made
        self.props2 = ffi.new(
            "VkPhysicalDeviceProperties2*",
            {"sType": lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, "pNext": self.ids},
        )
        lib.vkGetPhysicalDeviceProperties2(physical_device, self.props2)


# properties read where the driver has their extension: (attribute, struct, sType, extension)
_OPTIONAL_PROPERTIES = (
    ("sm", "VkPhysicalDeviceShaderSMBuiltinsPropertiesNV*",
     "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV",
     "VK_NV_shader_sm_builtins"),
    ("amd", "VkPhysicalDeviceShaderCorePropertiesAMD*",
     "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD",
     "VK_AMD_shader_core_properties"),
    ("arm", "VkPhysicalDeviceShaderCorePropertiesARM*",
     "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_ARM",
     "VK_ARM_shader_core_properties"),
    ("sizes", "VkPhysicalDeviceSubgroupSizeControlProperties*",
     "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES",
     "VK_EXT_subgroup_size_control"),
)


def api_version_of(physical_device: object) -> tuple[int, ...]:
    """The device's Vulkan version (major, minor, patch), from its plain properties."""
    props = ffi.new("VkPhysicalDeviceProperties*")
    lib.vkGetPhysicalDeviceProperties(physical_device, props)
    return _vk.split_version(props.apiVersion)


def compute_units(queried: _PropertyChain) -> int | None:
    """SMs, CUs or shader cores, where the driver says how many."""
    if queried.sm is not None:
        return int(queried.sm.shaderSMCount) or None
    if queried.amd is not None:
        amd = queried.amd
        return int(amd.shaderEngineCount * amd.shaderArraysPerEngineCount
                   * amd.computeUnitsPerShaderArray) or None
    if queried.arm is not None:
        return int(queried.arm.shaderCoreCount) or None
    return None


def _features(
    physical_device: object, supported: Mapping[str, bool], extensions: Collection[str],
    queried: _PropertyChain, api_version: tuple[int, ...],
) -> DeviceFeatures:
    """The curated features: what the device supports, as the runtime would enable it."""
    subgroup = queried.subgroup
    # the struct is Vulkan 1.2 core; older drivers may only know it through the extension
    has_float_controls = api_version[:2] >= (1, 2) or "VK_KHR_shader_float_controls" in extensions
    compute_subgroups = bool(subgroup.supportedStages & lib.VK_SHADER_STAGE_COMPUTE_BIT)
    return DeviceFeatures(
        fp16=supported["shaderFloat16"],
        fp64=supported["shaderFloat64"],
        int64=supported["shaderInt64"],
        int16=supported["shaderInt16"],
        int8=supported["shaderInt8"],
        storage8=supported["storageBuffer8BitAccess"],
        storage16=supported["storageBuffer16BitAccess"],
        uniform8=supported["uniformAndStorageBuffer8BitAccess"],
        uniform16=supported["uniformAndStorageBuffer16BitAccess"],
        push_constant8=supported["storagePushConstant8"],
        push_constant16=supported["storagePushConstant16"],
        float32_atomic_add=supported["shaderBufferFloat32AtomicAdd"],
        float32_atomic_min_max=supported["shaderBufferFloat32AtomicMinMax"],
        float64_atomic_add=supported["shaderBufferFloat64AtomicAdd"],
        int64_atomics=supported["shaderBufferInt64Atomics"],
        subgroup_size=subgroup.subgroupSize,
        subgroup_operations=frozenset(
            name
            for bit, name in SUBGROUP_OPERATIONS
            if compute_subgroups and subgroup.supportedOperations & bit
        ),
        cooperative_matrix=supported["cooperativeMatrix"],
        bfloat16=supported["shaderBFloat16Type"],
        bfloat16_cooperative_matrix=supported["cooperativeMatrix"]
        and supported["shaderBFloat16CooperativeMatrix"],
        push_descriptor="VK_KHR_push_descriptor" in extensions,
        timeline_semaphore=supported["timelineSemaphore"],
        vulkan_memory_model=supported["vulkanMemoryModel"],
        scalar_block_layout=supported["scalarBlockLayout"],
        subgroup_size_control=supported["subgroupSizeControl"],
        float_controls=query_float_controls(physical_device) if has_float_controls
        else FloatControls(),
    )


def _limits(lim: object, queried: _PropertyChain) -> DeviceLimits:
    """The limits pykern checks against, from VkPhysicalDeviceLimits `lim` and the chain."""
    return DeviceLimits(
        max_push_constants_size=lim.maxPushConstantsSize,
        max_workgroup_count=tuple(lim.maxComputeWorkGroupCount),
        max_workgroup_size=tuple(lim.maxComputeWorkGroupSize),
        max_workgroup_invocations=lim.maxComputeWorkGroupInvocations,
        max_storage_buffer_range=lim.maxStorageBufferRange,
        max_uniform_buffer_range=lim.maxUniformBufferRange,
        max_shared_memory=lim.maxComputeSharedMemorySize,
        min_storage_buffer_offset_alignment=lim.minStorageBufferOffsetAlignment,
        min_uniform_buffer_offset_alignment=lim.minUniformBufferOffsetAlignment,
        timestamp_period=lim.timestampPeriod,
        max_push_descriptors=queried.push.maxPushDescriptors if queried.has_push else 0,
        loop_iteration_cap=LOOP_ITERATION_CAPS.get(queried.driver.driverID),
        compute_units=compute_units(queried),
        subgroup_sizes=(queried.sizes.minSubgroupSize, queried.sizes.maxSubgroupSize)
        if queried.sizes is not None else None,
    )


def memory_properties(physical_device: object) -> object:
    """The VkPhysicalDeviceMemoryProperties of a device."""
    mem = ffi.new("VkPhysicalDeviceMemoryProperties*")
    lib.vkGetPhysicalDeviceMemoryProperties(physical_device, mem)
    return mem


def largest_device_local_heap(physical_device: object) -> int:
    """Bytes of the largest DEVICE_LOCAL heap (of any heap, where none is device-local)."""
    mem = memory_properties(physical_device)
    heaps = [mem.memoryHeaps[i] for i in range(mem.memoryHeapCount)]
    local = [h.size for h in heaps if h.flags & lib.VK_MEMORY_HEAP_DEVICE_LOCAL_BIT]
    return max(local or [h.size for h in heaps] or [0])
