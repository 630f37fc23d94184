"""What a device is and can do, as data: `DeviceInfo` with its `DeviceFeatures`,
`DeviceLimits` and `FloatControls`.

A leaf, free of Vulkan: the Vulkan devices fill these in from the driver's answers
(`info.py`), the host device from what the host backend provides (`host_device.py`), and the
compiler reads them without loading any binding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .feature import SUBGROUP_OPERATIONS as SUBGROUP_FEATURES
from .feature import CoopShape, Feature


@dataclass(frozen=True)
class FloatControls:
    """VkPhysicalDeviceFloatControlsProperties: what a shader may ask of the device's float
    arithmetic (SPV_KHR_float_controls, core in Vulkan 1.2), per float width (16, 32, 64).

    `signed_zero_inf_nan_preserve`: the widths where a shader may ask for IEEE infinities, NaNs
    and signed zeros (else the driver may assume none occur); `denorm_preserve` /
    `denorm_flush_to_zero`: where it may ask for subnormals to be kept / flushed;
    `rounding_mode_rte` / `rounding_mode_rtz`: where it may ask for round-to-nearest-even /
    toward-zero. The independences say which widths may choose their denormal and rounding
    modes separately: 'all', '32_bit_only' (16 and 64 must agree) or 'none' (all agree).
    """

    signed_zero_inf_nan_preserve: frozenset[int] = frozenset()
    denorm_preserve: frozenset[int] = frozenset()
    denorm_flush_to_zero: frozenset[int] = frozenset()
    rounding_mode_rte: frozenset[int] = frozenset()
    rounding_mode_rtz: frozenset[int] = frozenset()
    denorm_behavior_independence: str = "none"
    rounding_mode_independence: str = "none"

    def __str__(self) -> str:
        def widths(ws: frozenset[int]) -> str:
            return " ".join(f"f{w}" for w in sorted(ws)) or "none"

        return (f"inf/nan/-0 preserved: {widths(self.signed_zero_inf_nan_preserve)}; "
                f"denormals preserved: {widths(self.denorm_preserve)}; "
                f"round to nearest even: {widths(self.rounding_mode_rte)}")


@dataclass(frozen=True)
class DeviceFeatures:
    """Optional capabilities a kernel may need; each True only if the device supports it (and
    the runtime therefore enables it at device creation)."""

    fp16: bool
    fp64: bool
    int64: bool
    int16: bool
    int8: bool
    storage8: bool  # 8-bit integers in storage buffers (storageBuffer8BitAccess)
    storage16: bool  # 16-bit values in storage buffers (storageBuffer16BitAccess)
    uniform8: bool  # uniformAndStorageBuffer8BitAccess
    uniform16: bool  # uniformAndStorageBuffer16BitAccess
    push_constant8: bool  # storagePushConstant8
    push_constant16: bool  # storagePushConstant16
    float32_atomic_add: bool  # shaderBufferFloat32AtomicAdd
    float32_atomic_min_max: bool  # shaderBufferFloat32AtomicMinMax (VK_EXT_shader_atomic_float2)
    float64_atomic_add: bool
    int64_atomics: bool  # shaderBufferInt64Atomics
    subgroup_size: int
    subgroup_operations: frozenset[str]  # in compute shaders: 'basic', 'vote', 'arithmetic', ...
    # VK_KHR_cooperative_matrix's cooperativeMatrix, enabled: False under the validation layer,
    # which predates it (see features.py)
    cooperative_matrix: bool
    push_descriptor: bool  # VK_KHR_push_descriptor
    timeline_semaphore: bool
    vulkan_memory_model: bool
    scalar_block_layout: bool
    subgroup_size_control: bool
    float_controls: FloatControls = FloatControls()
    # VK_KHR_shader_bfloat16 (False under the validation layer, as cooperative_matrix):
    # shaderBFloat16Type, and shaderBFloat16CooperativeMatrix together with cooperative_matrix
    bfloat16: bool = False
    bfloat16_cooperative_matrix: bool = False

    # SPV_KHR_float_controls capabilities, usable where the device allows the mode for some width
    @property
    def signed_zero_inf_nan_preserve(self) -> bool:
        return bool(self.float_controls.signed_zero_inf_nan_preserve)

    @property
    def denorm_preserve(self) -> bool:
        return bool(self.float_controls.denorm_preserve)

    @property
    def rounding_mode_rte(self) -> bool:
        return bool(self.float_controls.rounding_mode_rte)

    def has(self, feature: Feature) -> bool:
        """Whether the device has `feature` (and the runtime enabled it)."""
        operation = SUBGROUP_FEATURES.get(feature)
        if operation is not None:
            return operation in self.subgroup_operations
        return getattr(self, feature.value) is True  # a field (or property) of that name


@dataclass(frozen=True)
class DeviceLimits:
    """The limits a launch or an allocation is checked against."""

    max_push_constants_size: int
    max_workgroup_count: tuple[int, int, int]
    max_workgroup_size: tuple[int, int, int]
    max_workgroup_invocations: int
    max_storage_buffer_range: int
    max_uniform_buffer_range: int
    max_shared_memory: int
    min_storage_buffer_offset_alignment: int
    min_uniform_buffer_offset_alignment: int
    timestamp_period: float  # nanoseconds per timestamp tick
    max_push_descriptors: int = 0  # VK_KHR_push_descriptor; 0 without it
    # Loop iterations the driver lets one invocation run, all its loops together, before it
    # silently ends every loop still running (None: no such cap). lavapipe has one
    # (LP_MAX_TGSI_LOOP_ITERATIONS, one counter shared by every loop of the shader).
    loop_iteration_cap: int | None = None
    # The device's compute units (NVIDIA's SMs, AMD's CUs, Arm's shader cores; the host's CPU
    # cores), where the driver says (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties,
    # VK_ARM_shader_core_properties); None where it does not. Ops size their work by it
    # (pykern.ops.choice.compute_units supplies an estimate for None).
    compute_units: int | None = None
    # The subgroup sizes a pipeline may ask for (VK_EXT_subgroup_size_control, core in 1.3):
    # (min, max), both the device's one size where it cannot choose.
    subgroup_sizes: tuple[int, int] | None = None


@dataclass(frozen=True)
class DeviceInfo:
    """One Vulkan physical device, as `devices()` lists it.

    `memory` is the size in bytes of its largest device-local heap; `index` is its position in
    `devices()` (and what `set_device` and PYKERN_DEVICE accept). `coop_shapes` are the
    cooperative-matrix multiplies kernels may use (`CoopShape(m, n, k, a, c)`, subgroup
    scope), sorted; () where `features.cooperative_matrix` is False.
    """

    index: int
    name: str
    kind: str  # 'discrete', 'integrated', 'cpu', 'virtual', 'other', or 'host' (no Vulkan)
    vendor_id: int
    device_id: int
    api_version: tuple[int, int, int]
    driver: str
    uuid: str  # VkPhysicalDeviceIDProperties.deviceUUID, hex; keys caches of compiled code
    memory: int
    features: DeviceFeatures
    limits: DeviceLimits
    extensions: frozenset[str] = field(repr=False)
    # VkPhysicalDeviceProperties.pipelineCacheUUID, hex: names the on-disk pipeline cache
    pipeline_cache_uuid: str = field(default="", repr=False)
    coop_shapes: tuple[CoopShape, ...] = ()

    def __str__(self) -> str:
        f, lim = self.features, self.limits
        flags = [
            name
            for name in (
                "fp16",
                "fp64",
                "int64",
                "int16",
                "int8",
                "storage8",
                "storage16",
                "float32_atomic_add",
                "cooperative_matrix",
                "bfloat16",
                "push_descriptor",
                "timeline_semaphore",
            )
            if getattr(f, name)
        ]
        major, minor, patch = self.api_version
        api = "" if self.kind == "host" else f"Vulkan {major}.{minor}.{patch}, "
        return (
            f"[{self.index}] {self.name} "
            f"({self.kind}, {api}{self.driver})\n"
            f"    memory {self.memory / 2**30:.1f} GiB, subgroup {f.subgroup_size}, "
            f"workgroups up to {lim.max_workgroup_invocations} invocations, "
            f"{lim.max_workgroup_count[0]} groups per dispatch, "
            f"storage buffers up to {lim.max_storage_buffer_range / 2**20:.0f} MiB, "
            f"push constants {lim.max_push_constants_size} B, "
            f"shared memory {lim.max_shared_memory // 1024} KiB"
            + (f", loops cut after {lim.loop_iteration_cap:,} iterations per invocation"
               if lim.loop_iteration_cap is not None else "")
            + "\n"
            f"    features: {', '.join(flags) or 'none'}; "
            f"subgroup ops: {', '.join(sorted(f.subgroup_operations)) or 'none'}\n"
            f"    float controls: {f.float_controls}\n"
            f"    cooperative matrices: {', '.join(map(str, self.coop_shapes)) or 'none'}"
        )


class DescribedDevice:
    """What every device answers from its `info`: `name`, `features`, `limits`."""

    info: DeviceInfo

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def features(self) -> DeviceFeatures:
        return self.info.features

    @property
    def limits(self) -> DeviceLimits:
        return self.info.limits

    def _check_copy(self, src: object, src_offset: int, dst: object, dst_offset: int,
                    nbytes: int) -> None:
        """Raises ValueError unless `nbytes` bytes at `src_offset` of `src` and at `dst_offset`
        of `dst` lie inside live buffers of this device (the check of `copy_buffer`)."""
        for buf, at in ((src, src_offset), (dst, dst_offset)):
            if buf.device is not self or buf.freed:  # type: ignore[attr-defined]
                raise ValueError(f"{buf!r} is freed or belongs to another device")
            if at < 0 or nbytes < 0 or at + nbytes > buf.nbytes:  # type: ignore[attr-defined]
                raise ValueError(f"a copy of {nbytes} bytes at {at} passes the end of {buf!r}")
