"""Programs: a compute pipeline built from SPIR-V words and a `BindingLayout`."""

from __future__ import annotations

import struct

from ..vulkan import _vk
from ..vulkan._vk import ffi, lib
from ..vulkan.objects import create
from ..errors import DeviceError
from ..vulkan.info import DeviceLimits
from ..layout import PUSH_CONSTANT, UNIFORM, BindingLayout

SPIRV_MAGIC = 0x07230203
COMPUTE = lib.VK_SHADER_STAGE_COMPUTE_BIT


class Program:
    """A compiled compute shader ready to launch: shader module, descriptor set layout (set 0),
    pipeline layout and pipeline. Made by `Device.create_program`; lives as long as its device.

    The argument block goes into push constants (`layout.block == "push_constant"`) or into a
    per-launch uniform buffer at `layout.uniform_binding`.

    Buffers are bound with push descriptors (`push_descriptors`: one vkCmdPushDescriptorSetKHR
    per launch, nothing to allocate) or else with a descriptor set from a pool; there the
    uniform block is UNIFORM_BUFFER_DYNAMIC, so that the dispatches of a split launch share one
    set and differ only in the offset.
    """

    def __init__(
        self,
        vk_device: object,
        fn: object,
        limits: DeviceLimits,
        words: bytes,
        layout: BindingLayout,
        entry: str,
        push_descriptors: bool = False,
        pipeline_cache: object | None = None,
    ) -> None:
        _check_layout(layout, limits)
        self.words = words  # kept: the same program can be made on another device
        self.layout = layout
        self.entry = entry
        self.workgroup = tuple(layout.workgroup)
        self.n_buffers = len(layout.buffers)
        self.uses_uniform = layout.block == UNIFORM and layout.size > 0
        self.block_size = layout.size
        self.push_size = layout.size if layout.block == PUSH_CONSTANT else 0
        self.grid_offsets = _offsets(layout, layout.grid_fields, "grid")
        self.base_offsets = _offsets(layout, layout.base_fields, "base")
        self.writes_mask = tuple(slot.writable for slot in layout.buffers)
        # a slot neither read nor written counts as read: hazard tracking errs on the safe side
        self.reads_mask = tuple(slot.readable or not slot.writable for slot in layout.buffers)
        # bytes between the argument blocks of consecutive dispatches in a uniform chunk
        align = max(limits.min_uniform_buffer_offset_alignment, 16)
        self.uniform_stride = -(-layout.size // align) * align
        self.grid_packer = _packer(self.grid_offsets)
        self.base_packer = _packer(self.base_offsets)
        self.n_writes = self.n_buffers + (1 if self.uses_uniform else 0)
        self.push_descriptors = (
            push_descriptors and 0 < self.n_writes <= limits.max_push_descriptors
        )
        self.uniform_type = (
            lib.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
            if self.push_descriptors
            else lib.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC
        )
        self.vk_device = self._vk_device = vk_device
        self._fn = fn
        self.module = self.set_layout = self.pipeline_layout = self.pipeline = None
        try:
            self.module = self._create_module(words)
            self.set_layout = self._create_set_layout()
            self.pipeline_layout = self._create_pipeline_layout()
            self.pipeline = self._create_pipeline(entry, pipeline_cache or ffi.NULL)
        except BaseException:
            self.destroy()
            raise
        self._build_descriptor_templates()

    # ---- creation ----

    def _create_module(self, words: bytes) -> object:
        code = ffi.new("uint32_t[]", len(words) // 4)
        ffi.memmove(code, words, len(words))
        return create(
            self._fn.vkCreateShaderModule, self._vk_device, "VkShaderModuleCreateInfo",
            {
                "sType": lib.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                "codeSize": len(words),
                "pCode": code,
            },
            "VkShaderModule",
        )

    def _create_set_layout(self) -> object:
        bindings = [
            (slot.binding, lib.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER) for slot in self.layout.buffers
        ]
        if self.uses_uniform:
            bindings.append((self.layout.uniform_binding, self.uniform_type))
        array = (
            ffi.new(
                "VkDescriptorSetLayoutBinding[]",
                [
                    {"binding": b, "descriptorType": t, "descriptorCount": 1, "stageFlags": COMPUTE}
                    for b, t in bindings
                ],
            )
            if bindings
            else ffi.NULL
        )
        return create(
            self._fn.vkCreateDescriptorSetLayout, self._vk_device,
            "VkDescriptorSetLayoutCreateInfo",
            {
                "sType": lib.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                "flags": lib.VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR
                if self.push_descriptors
                else 0,
                "bindingCount": len(bindings),
                "pBindings": array,
            },
            "VkDescriptorSetLayout",
        )

    def _create_pipeline_layout(self) -> object:
        self._set_layouts = ffi.new("VkDescriptorSetLayout[1]", [self.set_layout])
        ranges = ffi.new(
            "VkPushConstantRange*", {"stageFlags": COMPUTE, "offset": 0, "size": self.push_size}
        )
        return create(
            self._fn.vkCreatePipelineLayout, self._vk_device, "VkPipelineLayoutCreateInfo",
            {
                "sType": lib.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                "setLayoutCount": 1,
                "pSetLayouts": self._set_layouts,
                "pushConstantRangeCount": 1 if self.push_size else 0,
                "pPushConstantRanges": ranges if self.push_size else ffi.NULL,
            },
            "VkPipelineLayout",
        )

    def _create_pipeline(self, entry: str, pipeline_cache: object) -> object:
        name = _vk.cstr(entry)
        info = ffi.new(
            "VkComputePipelineCreateInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                "stage": {
                    "sType": lib.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                    "stage": COMPUTE,
                    "module": self.module,
                    "pName": name,
                },
                "layout": self.pipeline_layout,
            },
        )
        handle = ffi.new("VkPipeline*")
        _vk.check(
            self._fn.vkCreateComputePipelines(
                self._vk_device, pipeline_cache, 1, info, ffi.NULL, handle
            ),
            f"vkCreateComputePipelines (entry point {entry!r})",
        )
        return handle[0]

    def _build_descriptor_templates(self) -> None:
        """Descriptor writes built once; a launch only patches buffer handles and the set.

        Building these structs per launch would cost several microseconds of cffi work."""
        n = self.n_writes
        self.buffer_infos = ffi.new("VkDescriptorBufferInfo[]", max(n, 1))
        self.writes = ffi.new("VkWriteDescriptorSet[]", max(n, 1))
        for i in range(n):
            uniform = i == self.n_buffers
            w = self.writes[i]
            w.sType = lib.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
            w.dstBinding = (
                self.layout.uniform_binding if uniform else self.layout.buffers[i].binding
            )
            w.descriptorCount = 1
            w.descriptorType = (
                self.uniform_type if uniform else lib.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
            )
            w.pBufferInfo = self.buffer_infos + i
            if uniform:
                self.buffer_infos[i].range = self.block_size
        self.info_list = [self.buffer_infos[i] for i in range(n)]  # indexing cffi costs
        # the argument block of the launch being recorded (launches hold the device lock)
        self.block_data = ffi.new("char[]", max(self.block_size, 1))
        self.block_view = ffi.buffer(self.block_data, self.block_size)
        # what the last launch wrote into the descriptor writes and the block: a launch that
        # repeats them skips rewriting (and, right after one of its own, rebinding) them
        self.last_raws: list[object] = [None] * self.n_buffers
        self.last_args: bytes | None = None
        self.last_grid: tuple[int, int, int] | None = None
        self.alloc_info = ffi.new(
            "VkDescriptorSetAllocateInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                "descriptorSetCount": 1,
                "pSetLayouts": self._set_layouts,
            },
        )

    def destroy(self) -> None:
        """Destroys the Vulkan objects; the device must no longer use them."""
        fn, dev = self._fn, self._vk_device
        if self.pipeline is not None:
            fn.vkDestroyPipeline(dev, self.pipeline, ffi.NULL)
        if self.pipeline_layout is not None:
            fn.vkDestroyPipelineLayout(dev, self.pipeline_layout, ffi.NULL)
        if self.set_layout is not None:
            fn.vkDestroyDescriptorSetLayout(dev, self.set_layout, ffi.NULL)
        if self.module is not None:
            fn.vkDestroyShaderModule(dev, self.module, ffi.NULL)
        self.module = self.set_layout = self.pipeline_layout = self.pipeline = None


def check_words(words: bytes) -> bytes:
    """Validates the SPIR-V header cheaply; returns the words as bytes."""
    data = bytes(words)
    if len(data) < 20 or len(data) % 4:
        raise DeviceError(
            f"not a SPIR-V module: {len(data)} bytes (a multiple of 4, at least 20, expected)"
        )
    if int.from_bytes(data[:4], "little") != SPIRV_MAGIC:
        raise DeviceError("not a SPIR-V module: wrong magic number (words must be little-endian)")
    return data


def _packer(offsets: tuple[int, ...] | None) -> tuple[struct.Struct, int] | None:
    """A struct writing three u32 at once, and where, when the three fields are consecutive
    (one pack_into per launch instead of three); None otherwise."""
    if offsets is None or offsets != (offsets[0], offsets[0] + 4, offsets[0] + 8):
        return None
    return struct.Struct("<III"), offsets[0]


def _offsets(
    layout: BindingLayout, names: tuple[str, str, str] | None, what: str
) -> tuple[int, ...] | None:
    if names is None:
        return None
    try:
        offsets = tuple(layout.offset_of(name) for name in names)
    except KeyError as missing:
        raise DeviceError(
            f"the layout names {what} field {missing} but has no such field "
            f"(set {what}_fields=None for a shader without one)"
        ) from None
    for name in names:
        fmt = next(f.fmt for f in layout.fields if f.name == name)
        if fmt not in ("I", "i"):
            raise DeviceError(f"{what} field {name!r} must be a 32-bit integer, not {fmt!r}")
    return offsets


def _check_layout(layout: BindingLayout, limits: DeviceLimits) -> None:
    wg = tuple(layout.workgroup)
    if len(wg) != 3 or any(w < 1 for w in wg):
        raise DeviceError(f"workgroup {wg} must be three positive sizes")
    for d in range(3):
        if wg[d] > limits.max_workgroup_size[d]:
            raise DeviceError(
                f"workgroup size {wg} exceeds the device's maxComputeWorkGroupSize "
                f"{limits.max_workgroup_size}"
            )
    if wg[0] * wg[1] * wg[2] > limits.max_workgroup_invocations:
        raise DeviceError(
            f"workgroup {wg} has {wg[0] * wg[1] * wg[2]} invocations; the device allows "
            f"{limits.max_workgroup_invocations} (maxComputeWorkGroupInvocations)"
        )
    if layout.block == PUSH_CONSTANT and layout.size > limits.max_push_constants_size:
        raise DeviceError(
            f"argument block of {layout.size} bytes exceeds the device's "
            f"maxPushConstantsSize of {limits.max_push_constants_size}"
        )
    if layout.block == UNIFORM:
        if layout.size > limits.max_uniform_buffer_range:
            raise DeviceError(
                f"argument block of {layout.size} bytes exceeds maxUniformBufferRange "
                f"{limits.max_uniform_buffer_range}"
            )
        if layout.uniform_binding < 0:
            raise DeviceError("a uniform argument block needs a uniform_binding")
    bindings = [slot.binding for slot in layout.buffers]
    if layout.block == UNIFORM:
        bindings.append(layout.uniform_binding)
    if len(set(bindings)) != len(bindings):
        raise DeviceError(f"bindings {bindings} are not distinct")
    if layout.block not in (PUSH_CONSTANT, UNIFORM):
        raise DeviceError(f"unknown argument block kind {layout.block!r}")
