"""`lower`: a typed `ir.Kernel` to a validated SPIR-V module plus its binding layout."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from pykern import ir
from pykern.lang.coop import CoopType
from pykern.runtime.errors import InternalError
from pykern.runtime.feature import Feature
from pykern.runtime.layout import BindingLayout

from pykern.spirv.arrays import DeclaredArray, kernel_arrays
from pykern.spirv.context import FunctionRef, LoweringContext
from pykern.spirv.debug import DebugReporter, DebugSite
from pykern.spirv.function import FunctionBuilder
from pykern.spirv.encoding.grammar import Capability, ExecutionMode, ExecutionModel, Op
from pykern.spirv.encoding.instruction import instructions
from pykern.spirv.binding_plan import plan_layout, without_loop_status
from pykern.spirv.loopcap import LoopGuard, LoopSite
from pykern.spirv.encoding.module import ModuleBuilder
from pykern.spirv.resources import Resources
from pykern.spirv.statements import StatementLowering
from pykern.spirv.target import Target, required_features
from pykern.spirv.typemap import value_type
from pykern.spirv.encoding.types import VOID, CoopMatrixType
from pykern.spirv.encoding.validate import validate

ENTRY_POINT = "main"
DEFAULT_TARGET = Target()


@dataclass(frozen=True)
class SpirvModule:
    """A compiled kernel: SPIR-V `words` (little-endian bytes), how to bind it (`layout`), its
    entry point, the optional device features (`pykern.runtime.feature.Feature`) it needs, in
    debug mode the sites its debug buffer can name (`pykern.spirv.debug`), and for a target
    that cuts loops short the loops that report it (`pykern.spirv.loopcap`; the layout then
    has the LOOP_STATUS_BUFFER slot)."""

    words: bytes
    layout: BindingLayout
    entry_point: str = ENTRY_POINT
    required_features: frozenset[Feature] = field(default_factory=frozenset)
    debug_sites: tuple[DebugSite, ...] = ()
    masked: bool = True  # the kernel's body starts with the grid mask (ir.Kernel.masked)
    loop_sites: tuple[LoopSite, ...] = ()
    items: int = 1  # logical invocations per invocation (ir.Kernel.items; layout.workgroup
    # is then the LocalSize times this along x)


def lower(kernel: ir.Kernel, target: Target = DEFAULT_TARGET) -> SpirvModule:
    """Compiles `kernel` for `target`; the result has passed spirv-val.

    `kernel` must be valid for `target`: decomposed (`pykern.passes.decompose`) and needing no
    feature the target lacks (`pykern.passes.required_features`, which the JIT layer checks).
    Every exception is a compiler bug or a documented gap (SpirvValidationError when spirv-val
    rejects the output, InternalError when the module needs a feature the target lacks,
    NotImplementedError for what this backend does not do: 8/16-bit atomics), never a user's
    error.
    """
    guard = LoopGuard() if target.loop_iteration_cap is not None else None
    layout = plan_layout(kernel, target.max_push_constants_size, loop_status=guard is not None)
    module = ModuleBuilder(target.spirv_version)
    module.require(Capability.Shader)
    if any(isinstance(getattr(n, "type", None), CoopType) for n in ir.walk(kernel)):
        module.use_vulkan_memory_model()  # what SPV_KHR_cooperative_matrix requires
    resources = Resources(module, kernel, layout)
    entry = FunctionBuilder(module, name=kernel.name, strict=target.strict_float)
    ctx = LoweringContext(kernel, module, entry, resources, target,
                          kernel_arrays(kernel, module, resources, target),
                          debug=DebugReporter() if kernel.debug else None, loops=guard)

    # callees come first in `kernel.functions`, so each body can name those before it
    for function in kernel.functions:
        _lower_function(ctx, function)
    for array in ctx.arrays.values():  # pk.local arrays start at zero
        if isinstance(array, DeclaredArray) and array.private:
            array.clear(entry)
    _lower_body(ctx, kernel.locals, kernel.body)
    entry.finish()

    module.entry_point(ExecutionModel.GLCompute, entry.id, ENTRY_POINT, module.global_variables)
    module.execution_mode(entry.id, ExecutionMode.LocalSize, *kernel.workgroup)
    _float_controls(module, entry.id, target)
    words = module.assemble()
    validate(words, target.target_env)

    needed = required_features(module.capabilities)
    missing = needed - target.features
    if missing:  # required_features should have found them on the IR: a compiler bug
        raise InternalError(f"kernel {kernel.name!r} was lowered to a module needing "
                           f"{', '.join(sorted(missing))}, which the target lacks")
    sites = tuple(ctx.debug.sites) if ctx.debug is not None else ()
    loop_sites = tuple(guard.sites) if guard is not None else ()
    if guard is not None and not loop_sites:
        layout = without_loop_status(layout)  # no loop: nothing to bind
    return SpirvModule(words, layout, ENTRY_POINT, needed, sites, kernel.masked, loop_sites,
                       kernel.items)


class _FloatControl(NamedTuple):
    """A float control (SPV_KHR_float_controls) and when a module asks for it."""

    what: str  # as `strict_float_shortfall` names it
    mode: ExecutionMode
    capability: Capability
    allowed: Callable[[Target, int], bool]  # whether the target allows it for a float width
    strict_only: bool  # asked for by strict kernels only


# in the order a module asks for them, per float width
_FLOAT_CONTROLS = (
    _FloatControl("inf/nan/-0", ExecutionMode.SignedZeroInfNanPreserve,
                  Capability.SignedZeroInfNanPreserve, Target.preserves_inf_nan, False),
    _FloatControl("denormals", ExecutionMode.DenormPreserve, Capability.DenormPreserve,
                  Target.keeps_denormals, True),
    _FloatControl("round to nearest even", ExecutionMode.RoundingModeRTE,
                  Capability.RoundingModeRTE, Target.rounds_to_nearest, True),
)


def _float_controls(module: ModuleBuilder, entry: int, target: Target) -> None:
    """Asks for IEEE inf/NaN/-0 for every float width in use that the target allows it for
    (the driver may assume none occur otherwise); strict kernels also for subnormals kept and
    round-to-nearest-even (`strict_float_shortfall` names what the target cannot give)."""
    for bits in sorted(module.float_widths):
        for control in _FLOAT_CONTROLS:
            if (target.strict_float or not control.strict_only) and control.allowed(target, bits):
                module.require(control.capability)
                module.execution_mode(entry, control.mode, bits)


def strict_float_shortfall(words: bytes, target: Target) -> tuple[str, ...]:
    """What strict floating point cannot have on `target` for the float widths module `words`
    uses ("denormals (f32)", ...): empty where the device allows every float control."""
    return tuple(f"{control.what} (f{bits})" for bits in sorted(float_widths(words))
                 for control in _FLOAT_CONTROLS if not control.allowed(target, bits))


def float_widths(words: bytes) -> frozenset[int]:
    """The widths of the OpTypeFloat declarations of a SPIR-V module (as `lower` returns it, or
    loaded from the disk cache)."""
    return frozenset(operands[1] for opcode, operands in instructions(words)
                     if opcode == Op.TypeFloat)  # after the result id: the width


def _lower_function(kernel_ctx: LoweringContext, function: ir.Function) -> None:
    """Emits device function `function` and registers it for the calls that follow."""
    result = value_type(function.return_type) if function.return_type is not None else VOID
    params = [kernel_ctx.type_of(p.type) for p in function.params]
    fn = FunctionBuilder(kernel_ctx.module, result, params, function.name,
                         strict=kernel_ctx.target.strict_float)
    ctx = kernel_ctx.for_function(fn)
    # parameters are locals assigned from the arguments on entry
    for param, value in zip(function.params, fn.params, strict=True):
        ctx.locals[param.name] = fn.variable(ctx.type_of(param.type), param.name)
        fn.store(ctx.locals[param.name], value)
    _lower_body(ctx, function.locals, function.body)
    fn.finish()
    kernel_ctx.functions[function.name] = FunctionRef(fn.id, result)


def _lower_body(ctx: LoweringContext, locals_: tuple[ir.Local, ...],
                body: tuple[ir.Stmt, ...]) -> None:
    # locals start at zero, as in the interpreter (the frontend rejects reads before writes
    # where it can see them; this makes the rest deterministic)
    for local in locals_:
        ty = ctx.type_of(local.type)
        # a tile is always assigned before it is read (the frontend checks), and OpConstantNull
        # of a cooperative matrix is not allowed
        zero = None if isinstance(ty, CoopMatrixType) else ctx.module.constant_null(ty)
        ctx.locals[local.name] = ctx.fn.variable(ty, local.name, zero)
    StatementLowering(ctx).lower_block(body)
    if ctx.fn.is_open:
        # falling off the end: a kernel or void function returns; a typed function cannot get
        # here (the frontend requires its returns), so any value will do
        result = ctx.fn.result
        if result == VOID:
            ctx.fn.return_()
        else:
            ctx.fn.return_value(ctx.module.constant_null(result))
