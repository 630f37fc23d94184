"""The SPIR-V backend: typed IR in, validated SPIR-V words and a binding layout out.

    from pykern.spirv import lower, Target
    module = lower(kernel_ir, Target(max_push_constants_size=128))
    module.words, module.layout
"""

from .layout import plan_layout
from .lower import SpirvModule, lower
from .target import Target
from .validate import SpirvToolMissingError, SpirvValidationError, disassemble, validate

__all__ = [
    "lower", "SpirvModule", "Target", "plan_layout", "validate", "disassemble",
    "SpirvValidationError", "SpirvToolMissingError",
]
