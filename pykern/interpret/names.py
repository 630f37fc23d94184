"""Identifiers of the generated source and the state shared while generating it.

Every name that comes from the kernel gets a prefix that says what it is (`v_` local, `p_`
scalar parameter, `a_` array buffer, `off_`/`len_`/`shapeK_`/`strideK_` array geometry), so
no user name can collide with another or with the generator's own names, which all start with
an underscore (helpers, temporaries `_t3`, constants `_k0`, ids `_gid0`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .. import ir
from ..dtypes import DType


def local(name: str) -> str:
    return f"v_{name}"


def scalar(name: str) -> str:
    return f"p_{name}"


def buffer(array: str) -> str:
    return f"a_{array}"


def offset(array: str) -> str:
    return f"off_{array}"


def length(array: str) -> str:
    """The number of elements of the array's buffer."""
    return f"len_{array}"


def shape(array: str, axis: int) -> str:
    return f"shape{axis}_{array}"


def stride(array: str, axis: int) -> str:
    return f"stride{axis}_{array}"


# builtins of one invocation (arguments of `invocation`) and of the launch (bound by `bind`)
GLOBAL_IDS = ("_gid0", "_gid1", "_gid2")
LOCAL_IDS = ("_lid0", "_lid1", "_lid2")
GROUP_IDS = ("_grp0", "_grp1", "_grp2")
GRID = ("_grid0", "_grid1", "_grid2")
NUM_GROUPS = ("_ngroups0", "_ngroups1", "_ngroups2")
OUT_OF_BOUNDS = "_oob"  # bound per launch: raises KernelIndexError for an access site


@dataclass(frozen=True)
class AccessSite:
    """One array access of the kernel, for the out-of-bounds message."""

    array: str
    loc: ir.Loc


@dataclass
class CodegenState:
    """What expression and statement generation share: float constants (defined once at the top
    of the module, as numpy scalars of their type), access sites and temporaries."""

    constants: dict[tuple[str, str], str] = field(default_factory=dict)
    sites: list[AccessSite] = field(default_factory=list)
    temps: int = 0

    def temp(self) -> str:
        self.temps += 1
        return f"_t{self.temps}"

    def site(self, array: str, loc: ir.Loc) -> int:
        self.sites.append(AccessSite(array, loc))
        return len(self.sites) - 1

    def float_constant(self, value: float, dtype: DType) -> str:
        """The name of a module-level constant holding `value` as a `dtype` numpy scalar."""
        literal = float_literal(float(value))
        key = (literal, dtype.name)
        if key not in self.constants:
            self.constants[key] = f"_k{len(self.constants)}"
        return self.constants[key]

    def constant_lines(self) -> list[str]:
        return [f"{name} = np.{_NUMPY_SCALAR[dtype]}({literal})"
                for (literal, dtype), name in self.constants.items()]


_NUMPY_SCALAR = {"f16": "float16", "f32": "float32", "f64": "float64"}


def float_literal(value: float) -> str:
    """Python source for exactly `value` (repr round-trips; inf and nan have no literal)."""
    if math.isnan(value):
        return "float('nan')"
    if math.isinf(value):
        return "float('inf')" if value > 0 else "float('-inf')"
    return repr(value)
