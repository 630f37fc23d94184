"""`lower`: a typed `ir.Kernel` to a validated SPIR-V module plus its binding layout."""

from __future__ import annotations

from dataclasses import dataclass, field

from pykern import ir
from pykern.errors import CompileError
from pykern.runtime.layout import BindingLayout

from .context import LoweringContext
from .function import FunctionBuilder
from .grammar import Capability, ExecutionMode, ExecutionModel
from .layout import plan_layout
from .module import ModuleBuilder
from .resources import Resources
from .statements import StatementLowering
from .target import Target, required_features
from .validate import validate

ENTRY_POINT = "main"
DEFAULT_TARGET = Target()


@dataclass(frozen=True)
class SpirvModule:
    """A compiled kernel: SPIR-V `words` (little-endian bytes), how to bind it (`layout`), its
    entry point, and the optional device features (`pykern.spirv.target` names) it needs."""

    words: bytes
    layout: BindingLayout
    entry_point: str = ENTRY_POINT
    required_features: frozenset[str] = field(default_factory=frozenset)


def lower(kernel: ir.Kernel, target: Target = DEFAULT_TARGET) -> SpirvModule:
    """Compiles `kernel` for `target`; the result has passed spirv-val.

    Raises CompileError when the kernel needs a device feature `target` lacks; any other
    exception is a compiler bug (SpirvValidationError when spirv-val rejects the output).
    """
    layout = plan_layout(kernel, target.max_push_constants_size)
    module = ModuleBuilder(target.spirv_version)
    module.require(Capability.Shader)
    fn = FunctionBuilder(module, name=kernel.name)
    ctx = LoweringContext(kernel, module, fn, Resources(module, kernel, layout))
    for local in kernel.locals:
        ctx.locals[local.name] = fn.variable(ctx.type_of(local.type), local.name)
    StatementLowering(ctx).lower_block(kernel.body)
    fn.finish()

    module.entry_point(ExecutionModel.GLCompute, fn.id, ENTRY_POINT, module.global_variables)
    module.execution_mode(fn.id, ExecutionMode.LocalSize, *kernel.workgroup)
    words = module.assemble()
    validate(words, target.target_env)

    needed = required_features(module.capabilities)
    missing = needed - target.features
    if missing:
        raise CompileError(
            f"kernel {kernel.name!r} needs device features the device lacks: "
            f"{', '.join(sorted(missing))}", kernel.loc.file, kernel.loc.line, kernel.loc.col)
    return SpirvModule(words, layout, ENTRY_POINT, needed)
