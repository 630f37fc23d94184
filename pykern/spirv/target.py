"""What the SPIR-V layer may assume about the device it compiles for."""

from __future__ import annotations

from dataclasses import dataclass

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.runtime.feature import Feature
from pykern.lang.coop import CoopType
from pykern.spirv.encoding.grammar import Capability
from pykern.spirv.encoding.grammar_ext import CoopCapability

# the device feature each capability needs; capabilities not listed are core Vulkan 1.2 compute
CAPABILITY_FEATURES: dict[Capability, Feature] = {
    Capability.Float16: Feature.FP16,
    Capability.Float64: Feature.FP64,
    Capability.Int8: Feature.INT8,
    Capability.Int16: Feature.INT16,
    Capability.Int64: Feature.INT64,
    Capability.StorageBuffer8BitAccess: Feature.STORAGE8,
    Capability.StorageBuffer16BitAccess: Feature.STORAGE16,
    Capability.AtomicFloat32AddEXT: Feature.FLOAT32_ATOMIC_ADD,
    Capability.AtomicFloat64AddEXT: Feature.FLOAT64_ATOMIC_ADD,
    Capability.Int64Atomics: Feature.INT64_ATOMICS,
    Capability.GroupNonUniform: Feature.SUBGROUP_BASIC,
    Capability.GroupNonUniformVote: Feature.SUBGROUP_VOTE,
    Capability.GroupNonUniformArithmetic: Feature.SUBGROUP_ARITHMETIC,
    Capability.GroupNonUniformBallot: Feature.SUBGROUP_BALLOT,
    Capability.GroupNonUniformShuffle: Feature.SUBGROUP_SHUFFLE,
    Capability.SignedZeroInfNanPreserve: Feature.SIGNED_ZERO_INF_NAN_PRESERVE,
    Capability.DenormPreserve: Feature.DENORM_PRESERVE,
    Capability.RoundingModeRTE: Feature.ROUNDING_MODE_RTE,
    CoopCapability.CooperativeMatrixKHR: Feature.COOPERATIVE_MATRIX,  # type: ignore[dict-item]
    CoopCapability.BFloat16CooperativeMatrixKHR:  # type: ignore[dict-item]
        Feature.BFLOAT16_COOPERATIVE_MATRIX,
}

# and the features a kernel's IR nodes need without a capability of this grammar (its
# cooperative-matrix capabilities are NVIDIA's, not VK_KHR_cooperative_matrix's)
ALL_FEATURES = frozenset(CAPABILITY_FEATURES.values()) | {
    Feature.COOPERATIVE_MATRIX, Feature.BFLOAT16_COOPERATIVE_MATRIX}

# What kernels need of a Vulkan device, stated here for `pykern.passes`: computing with a type
# needs the first feature, keeping it in a buffer the second (bools are bytes in buffers)
TYPE_FEATURES: dict[DType, tuple[Feature | None, Feature | None]] = {
    dt.f16: (Feature.FP16, Feature.STORAGE16), dt.f64: (Feature.FP64, None),
    dt.i64: (Feature.INT64, None), dt.u64: (Feature.INT64, None),
    dt.i16: (Feature.INT16, Feature.STORAGE16), dt.u16: (Feature.INT16, Feature.STORAGE16),
    dt.i8: (Feature.INT8, Feature.STORAGE8), dt.u8: (Feature.INT8, Feature.STORAGE8),
    dt.bool_: (None, Feature.STORAGE8),
    # bf16 is f32 values on u16 words (pykern.passes.bf16): its arrays need what u16 ones do
    dt.bf16: (None, Feature.STORAGE16),
    # complex values are pairs of their parts (pykern.passes.complex): c128 is f64's
    dt.c128: (Feature.FP64, None),
}
_BASIC = Feature.SUBGROUP_BASIC
# the subgroup operations' features (SPIR-V's GroupNonUniform* capabilities)
SUBGROUP_FEATURES: dict[ir.SubgroupOp, tuple[Feature, ...]] = {
    ir.SubgroupOp.SIZE: (_BASIC,), ir.SubgroupOp.LANE: (_BASIC,),
    ir.SubgroupOp.ADD: (_BASIC, Feature.SUBGROUP_ARITHMETIC),
    ir.SubgroupOp.MIN: (_BASIC, Feature.SUBGROUP_ARITHMETIC),
    ir.SubgroupOp.MAX: (_BASIC, Feature.SUBGROUP_ARITHMETIC),
    ir.SubgroupOp.PREFIX_ADD: (_BASIC, Feature.SUBGROUP_ARITHMETIC),
    ir.SubgroupOp.ANY: (_BASIC, Feature.SUBGROUP_VOTE),
    ir.SubgroupOp.ALL: (_BASIC, Feature.SUBGROUP_VOTE),
    ir.SubgroupOp.BROADCAST: (_BASIC, Feature.SUBGROUP_BALLOT),
    ir.SubgroupOp.SHUFFLE: (_BASIC, Feature.SUBGROUP_SHUFFLE),
    ir.SubgroupOp.SHUFFLE_XOR: (_BASIC, Feature.SUBGROUP_SHUFFLE),
}
# GLSL.std.450 has these for 16- and 32-bit floats only: in f64 they are decomposed
# (`pykern.passes.decompose`) into pykern code before lowering
MATH_WITHOUT_F64 = frozenset({
    ir.MathFn.EXP, ir.MathFn.EXP2, ir.MathFn.LOG, ir.MathFn.LOG2, ir.MathFn.SIN, ir.MathFn.COS,
    ir.MathFn.TAN, ir.MathFn.ASIN, ir.MathFn.ACOS, ir.MathFn.ATAN, ir.MathFn.ATAN2,
    ir.MathFn.SINH, ir.MathFn.COSH, ir.MathFn.TANH, ir.MathFn.POW, ir.MathFn.ERF,
})

# the integer feature a float's bits need where the backend computes on them (f64 // and %,
# strict floating point): f32's are plain 32-bit integers, and f16's are taken through f32
_ON_BITS = {dt.f16: Feature.INT16, dt.f64: Feature.INT64}
_FLOAT_REMAINDERS = (ir.BinOpKind.FLOORDIV, ir.BinOpKind.MOD)

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

    `features` are the optional device features the compiler may use; a kernel that needs one
    outside it is refused (`pykern.passes.required_features` lists what it needs, from this
    target's `type_features` and `node_features`). The default allows all of them: the module
    then lists what it needs in `SpirvModule.required_features`. Where a feature only makes
    code faster (native float atomics) or more exact (SIGNED_ZERO_INF_NAN_PRESERVE), its
    absence selects another way (a compare-and-swap loop; fast math) instead of a refusal.

    `strict_float` is not the device's but the kernel's: IEEE results for `+ - * / sqrt fma`
    and conversions (`pykern.spirv.numerics.strict`), with every float control
    `float_controls` allows.
    `loop_iteration_cap` is the number of loop iterations after which the device's driver
    ends every loop of an invocation without a word (`DeviceLimits.loop_iteration_cap`); where
    it is set, every loop reports being cut short (`pykern.spirv.loopcap`).
    `coop_shapes` are the device's cooperative-matrix shapes (`DeviceInfo.coop_shapes`:
    `pykern.runtime.feature.CoopShape`s); none by default.
    `items_per_invocation` is how many logical invocations a kernel that allows it runs per
    invocation (`pykern.passes.spread`), as long as a workgroup then covers at most
    `max_workgroup_span` of them (the device's workgroup limits: the runtime counts
    workgroups in logical invocations); 1 (no spreading) by default.
    """

    max_push_constants_size: int = 128
    features: frozenset[Feature] = ALL_FEATURES
    spirv_version: tuple[int, int] = (1, 5)
    target_env: str = "vulkan1.2"
    float_controls: FloatControls = FloatControls()
    strict_float: bool = False
    loop_iteration_cap: int | None = None
    coop_shapes: tuple = ()
    items_per_invocation: int = 1
    max_workgroup_span: int = 128  # Vulkan's minimum maxComputeWorkGroupInvocations

    def preserves_inf_nan(self, bits: int) -> bool:
        """Whether modules for this target ask for IEEE inf/NaN/-0 on floats of `bits`."""
        return Feature.SIGNED_ZERO_INF_NAN_PRESERVE in self.features and \
            bits in self.float_controls.preserve_inf_nan

    def keeps_denormals(self, bits: int) -> bool:
        """Whether a strict module keeps subnormals of `bits` (asks for DenormPreserve)."""
        return Feature.DENORM_PRESERVE in self.features and \
            self.float_controls.keeps_denormals(bits, self.float_types)

    def rounds_to_nearest(self, bits: int) -> bool:
        """Whether a strict module asks for round-to-nearest-even on floats of `bits`; where it
        cannot, conversions round in code (`pykern.spirv.casts`)."""
        return Feature.ROUNDING_MODE_RTE in self.features and \
            self.float_controls.rounds_to_nearest(bits, self.float_types)

    @property
    def float_types(self) -> frozenset[int]:
        """The float widths kernels may use on this target."""
        return frozenset({32} | ({16} if Feature.FP16 in self.features else set())
                         | ({64} if Feature.FP64 in self.features else set()))

    # ---------------------------------------------------------- what the passes ask

    def lowers_math(self, fn: ir.MathFn, dtype: DType) -> bool:
        """Whether this backend lowers `fn` on `dtype` arguments itself; where not, the
        decomposition pass rewrites the call into a prelude function first."""
        return not (dtype == dt.f64 and fn in MATH_WITHOUT_F64)

    def type_features(self, dtype: DType, stored: bool) -> tuple[Feature, ...]:
        """The features computing with `dtype` needs, and keeping it in a buffer too where
        `stored`."""
        compute, storage = TYPE_FEATURES.get(dtype, (None, None))
        return tuple(f for f in (compute, storage if stored else None) if f is not None)

    def node_features(self, node: ir.Node) -> tuple[tuple[Feature, str], ...]:
        """The features IR node `node` needs beyond those of its types, each with what needs
        it ("pk.subgroup_add()", "atomics on i64")."""
        if isinstance(node, ir.Subgroup):
            return tuple((f, f"pk.{node.op.value}()") for f in SUBGROUP_FEATURES[node.op])
        tile = _tile_of(node)
        if tile is not None:
            needs = [(Feature.COOPERATIVE_MATRIX, f"a {tile.name}")]
            if tile.dtype.name == "bf16":
                needs.append((Feature.BFLOAT16_COOPERATIVE_MATRIX, f"a {tile.name}"))
            return tuple(needs)
        if isinstance(node, ir.Atomic) and node.type.bits == 64 and node.type.is_int:
            return ((Feature.INT64_ATOMICS, f"atomics on {node.type.name}"),)
        on_bits = _ON_BITS.get(getattr(node, "type", None))  # type: ignore[arg-type]
        if on_bits is None:
            return ()
        # what the backend computes on a float's bits, in an integer of its width
        if isinstance(node, ir.BinOp) and node.op in _FLOAT_REMAINDERS and node.type == dt.f64:
            return ((on_bits, f"{node.op.value} on {node.type.name}"),)
        if self.strict_float and isinstance(node, (ir.BinOp, ir.MathCall, ir.Cast)):
            return ((on_bits, f"strict floating point on {node.type.name}"),)
        return ()


def _tile_of(node: ir.Node) -> CoopType | None:
    """The tile type a node makes or stores, if any."""
    if isinstance(node, ir.CoopStore):
        node = node.value
    t = getattr(node, "type", None)
    return t if isinstance(t, CoopType) else None


def required_features(capabilities: frozenset[Capability]) -> frozenset[Feature]:
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


def features_of(device_features: object) -> frozenset[Feature]:
    """The features a `pykern.runtime.DeviceFeatures` (anything with its `has`) grants."""
    return frozenset(f for f in ALL_FEATURES if device_features.has(f))  # type: ignore[attr-defined]
