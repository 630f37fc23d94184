"""The state shared while lowering one kernel, and what is particular to each function."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pykern import ir
from pykern.lang.dtypes import DType

from pykern.spirv.arrays import ArrayAccess
from pykern.spirv.function import FunctionBuilder
from pykern.spirv.encoding.module import ModuleBuilder
from pykern.spirv.resources import Resources
from pykern.spirv.target import Target
from pykern.spirv.typemap import value_capabilities, value_type
from pykern.spirv.encoding.types import I32, ScalarType, SpirvType, VoidType

if TYPE_CHECKING:
    from pykern.spirv.debug import DebugReporter
    from pykern.spirv.loopcap import LoopGuard


@dataclass(frozen=True)
class FunctionRef:
    """A device function as its callers see it."""

    id: int
    result: SpirvType


@dataclass
class LoweringContext:
    """What every lowering step needs. `fn` is the function being emitted and `locals` maps its
    local variables' names to their variables' ids; the rest is the kernel's."""

    kernel: ir.Kernel
    module: ModuleBuilder
    fn: FunctionBuilder
    resources: Resources
    target: Target
    arrays: dict[str, ArrayAccess]
    functions: dict[str, FunctionRef] = field(default_factory=dict)
    locals: dict[str, int] = field(default_factory=dict)
    debug: DebugReporter | None = None  # set when the kernel is compiled in debug mode
    loops: LoopGuard | None = None  # set when the target's driver cuts loops short
    loc: ir.Loc = ir.UNKNOWN_LOC  # of the statement being lowered
    # a run-time 0 the driver cannot see, added to `pk.local` indices inside the loops where
    # lavapipe loses stores to them (see `pykern.spirv.loopcap`); None elsewhere
    hidden_zero: int | None = None

    def type_of(self, dtype: DType) -> ScalarType | VoidType:  # or a CoopMatrixType for a tile
        """The register type of `dtype`, declaring the capability arithmetic on it needs."""
        ty = value_type(dtype)
        self.module.require(*value_capabilities(ty))
        return ty

    def const(self, ty: ScalarType, value: bool | int | float) -> int:
        """The id of a constant of type `ty`."""
        return self.module.constant(ty, value)

    def local_indices(self, array: ArrayAccess, indices: tuple[int, ...]) -> tuple[int, ...]:
        """The indices to access `array` with: `hidden_zero` added to the first one where it
        is set and `array` is a `pk.local` array."""
        if self.hidden_zero is None or not array.private:
            return indices
        return (self.fn.i_add(I32, indices[0], self.hidden_zero), *indices[1:])

    def for_function(self, fn: FunctionBuilder) -> LoweringContext:
        """The context for emitting another function of the same kernel."""
        return replace(self, fn=fn, locals={})
