"""What the SPIR-V layer may assume about the device it compiles for."""

from __future__ import annotations

from dataclasses import dataclass

from pykern.spirv.grammar import Capability

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
# VkPhysicalDeviceFloatControlsProperties (SPV_KHR_float_controls): the capability may be
# declared where the device allows its execution mode for some float width; which widths is
# `Target.float_controls`. Optional: without them the driver's defaults hold.
# shaderSignedZeroInfNanPreserveFloat16/32/64: IEEE infinities, NaNs and signed zeros, as numpy
# computes them (else the driver may assume none occur: fast math)
PRESERVE_INF_NAN = "signed_zero_inf_nan_preserve"
DENORM_PRESERVE = "denorm_preserve"  # shaderDenormPreserveFloat16/32/64: subnormals kept
ROUNDING_RTE = "rounding_mode_rte"  # shaderRoundingModeRTEFloat16/32/64: round to nearest even

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
    Capability.DenormPreserve: DENORM_PRESERVE,
    Capability.RoundingModeRTE: ROUNDING_RTE,
}

ALL_FEATURES = frozenset(CAPABILITY_FEATURES.values())


FLOAT_WIDTHS = frozenset({16, 32, 64})


@dataclass(frozen=True)
class FloatControls:
    """Per float width (16, 32, 64), the SPV_KHR_float_controls execution modes the device
    allows: IEEE inf/NaN/-0 (`preserve_inf_nan`), subnormals kept (`denorm_preserve`), round to
    nearest even (`round_to_nearest`). The independences (VkShaderFloatControlsIndependence:
    'all', '32_bit_only' or 'none') say which widths must ask for the same denormal / rounding
    mode. The default allows everything."""

    preserve_inf_nan: frozenset[int] = FLOAT_WIDTHS
    denorm_preserve: frozenset[int] = FLOAT_WIDTHS
    round_to_nearest: frozenset[int] = FLOAT_WIDTHS
    denorm_independence: str = "all"
    rounding_independence: str = "all"

    def keeps_denormals(self, bits: int, present: frozenset[int] = FLOAT_WIDTHS) -> bool:
        """Whether a module may ask for DenormPreserve on floats of `bits`, on a device with
        the float types `present`."""
        return _allowed(self.denorm_preserve, self.denorm_independence, bits, present)

    def rounds_to_nearest(self, bits: int, present: frozenset[int] = FLOAT_WIDTHS) -> bool:
        """Whether a module may ask for RoundingModeRTE on floats of `bits`."""
        return _allowed(self.round_to_nearest, self.rounding_independence, bits, present)


def _allowed(widths: frozenset[int], independence: str, bits: int,
             present: frozenset[int]) -> bool:
    # the widths that may not choose apart must all allow the mode: whichever of them a module
    # uses then asks for the same one
    if independence == "all":
        group = {bits}
    elif independence == "32_bit_only":
        group = {32} if bits == 32 else {16, 64}
    else:
        group = set(FLOAT_WIDTHS)
    return bits in widths and (group & present) <= widths


@dataclass(frozen=True)
class Target:
    """The device as the compiler sees it.

    `features` are the optional device features (names above) the compiler may use; a kernel
    that needs one outside it is refused. The default allows all of them: the module then lists
    what it needs in `SpirvModule.required_features`, for the runtime to enable or refuse.
    Where a feature only makes code faster (native float atomics) or more exact
    (PRESERVE_INF_NAN), its absence selects another way (a compare-and-swap loop; fast math)
    instead of a refusal.

    `strict_float` is not the device's but the kernel's: IEEE results for `+ - * / sqrt fma`
    and conversions (`pykern.spirv.strict`), with every float control `float_controls` allows.
    `loop_iteration_cap` is the number of loop iterations after which the device's driver
    ends every loop of an invocation without a word (`DeviceLimits.loop_iteration_cap`); where
    it is set, every loop reports being cut short (`pykern.spirv.loopcap`).
    """

    max_push_constants_size: int = 128
    features: frozenset[str] = ALL_FEATURES
    spirv_version: tuple[int, int] = (1, 5)
    target_env: str = "vulkan1.2"
    float_controls: FloatControls = FloatControls()
    strict_float: bool = False
    loop_iteration_cap: int | None = None

    def preserves_inf_nan(self, bits: int) -> bool:
        """Whether modules for this target ask for IEEE inf/NaN/-0 on floats of `bits`."""
        return PRESERVE_INF_NAN in self.features and bits in self.float_controls.preserve_inf_nan

    def keeps_denormals(self, bits: int) -> bool:
        """Whether a strict module keeps subnormals of `bits` (asks for DenormPreserve)."""
        return DENORM_PRESERVE in self.features and \
            self.float_controls.keeps_denormals(bits, self.float_types)

    def rounds_to_nearest(self, bits: int) -> bool:
        """Whether a strict module asks for round-to-nearest-even on floats of `bits`; where it
        cannot, conversions round in code (`pykern.spirv.casts`)."""
        return ROUNDING_RTE in self.features and \
            self.float_controls.rounds_to_nearest(bits, self.float_types)

    @property
    def float_types(self) -> frozenset[int]:
        """The float widths kernels may use on this target."""
        return frozenset({32} | ({16} if FP16 in self.features else set())
                         | ({64} if FP64 in self.features else set()))


def required_features(capabilities: frozenset[Capability]) -> frozenset[str]:
    """The device features a module declaring `capabilities` needs."""
    return frozenset(CAPABILITY_FEATURES[c] for c in capabilities if c in CAPABILITY_FEATURES)


def float_controls_of(device_float_controls: object) -> FloatControls:
    """The `FloatControls` of a `pykern.runtime.FloatControls` (VkPhysicalDeviceFloatControls-
    Properties as the runtime reads it), or of any object with the same fields."""
    d = device_float_controls
    return FloatControls(
        preserve_inf_nan=frozenset(getattr(d, "signed_zero_inf_nan_preserve", ())),
        denorm_preserve=frozenset(getattr(d, "denorm_preserve", ())),
        round_to_nearest=frozenset(getattr(d, "rounding_mode_rte", ())),
        denorm_independence=getattr(d, "denorm_behavior_independence", "none"),
        rounding_independence=getattr(d, "rounding_mode_independence", "none"))


def features_of(device_features: object) -> frozenset[str]:
    """The feature names a `pykern.runtime.DeviceFeatures` (or any object with the same
    fields) grants: its true bool fields, and "subgroup_<op>" per `subgroup_operations`."""
    names = {n for n in ALL_FEATURES if getattr(device_features, n, False) is True}
    for op in getattr(device_features, "subgroup_operations", ()):
        if f"subgroup_{op}" in ALL_FEATURES:
            names.add(f"subgroup_{op}")
    return frozenset(names)
