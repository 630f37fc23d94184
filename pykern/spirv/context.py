"""The state shared while lowering one kernel: module, function, resources, local variables."""

from __future__ import annotations

from dataclasses import dataclass, field

from pykern import ir
from pykern.dtypes import DType

from .function import FunctionBuilder
from .module import ModuleBuilder
from .resources import Resources
from .typemap import value_capabilities, value_type
from .types import ScalarType


@dataclass
class LoweringContext:
    """What every lowering step needs. `locals` maps a local's name to its variable's id."""

    kernel: ir.Kernel
    module: ModuleBuilder
    fn: FunctionBuilder
    resources: Resources
    locals: dict[str, int] = field(default_factory=dict)

    def type_of(self, dtype: DType) -> ScalarType:
        """The register type of `dtype`, declaring the capability arithmetic on it needs."""
        ty = value_type(dtype)
        self.module.require(*value_capabilities(ty))
        return ty

    def const(self, ty: ScalarType, value: bool | int | float) -> int:
        """The id of a constant of type `ty`."""
        return self.module.constant(ty, value)
