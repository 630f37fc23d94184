"""Identifiers of the generated source and the state shared while generating it.

Every name that comes from the kernel gets a prefix that says what it is (`v_` local, `p_`
scalar parameter, `a_` array, `f_` device function, `off_`/`len_`/`shapeK_`/`strideK_` the
geometry of an array parameter), so no user name can collide with another or with the
generator's own names, which all start with an underscore (helpers, temporaries `_t3`,
constants `_k0`, ids `_gid0`).

User text never reaches the source as it is. A name that is not a plain identifier (the IR can
be built by hand, and a function's `__name__` can be set to anything) is spelt by the hex of its
UTF-8 bytes (`vu_6120` for the local `a `); the `u` keeps such spellings apart from those of
plain names. Other text (the kernel's name and file in the header) goes in as a `repr`, through
`comment`; assert messages and access sites stay out of the source, in side tables the error
reporters read.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field

from pykern import ir
from pykern.lang.coop import CoopType
from pykern.lang.dtypes import DType


def identifier(kind: str, name: str) -> str:
    """`kind_name` for a plain identifier, else `kindu_HEX`: always a valid identifier, and one
    that no other name of that kind is given."""
    if name.isidentifier() and unicodedata.is_normalized("NFKC", name):
        return f"{kind}_{name}"  # Python reads identifiers NFKC-normalised: only those as-is
    return f"{kind}u_{name.encode('utf-8', 'surrogatepass').hex()}"


def comment(text: object) -> str:
    """`text` as it may appear in a comment of the source: one line, every control or
    line-breaking character escaped."""
    return repr(str(text))


def local(name: str) -> str:
    return identifier("v", name)


def scalar(name: str) -> str:
    return identifier("p", name)


def buffer(array: str) -> str:
    return identifier("a", array)


def function(name: str) -> str:
    return identifier("f", name)


def offset(array: str) -> str:
    return identifier("off", array)


def length(array: str) -> str:
    """The number of elements of the array's buffer."""
    return identifier("len", array)


def shape(array: str, axis: int) -> str:
    return identifier(f"shape{int(axis)}", array)


def stride(array: str, axis: int) -> str:
    return identifier(f"stride{int(axis)}", array)


# builtins of one invocation (arguments of `invocation`) and of the launch (bound by `bind`)
GLOBAL_IDS = ("_gid0", "_gid1", "_gid2")
LOCAL_IDS = ("_lid0", "_lid1", "_lid2")
GROUP_IDS = ("_grp0", "_grp1", "_grp2")
GRID = ("_grid0", "_grid1", "_grid2")
NUM_GROUPS = ("_ngroups0", "_ngroups1", "_ngroups2")
SUBGROUP_SIZE = "_sgsize"
OUT_OF_BOUNDS = "_oob"  # bound per launch: raises KernelIndexError for an access site
ASSERT_FAILED = "_assert_failed"  # bound per launch: raises KernelAssertionError
# an invocation's progress through synchronising loops and calls (see the runner), a list
PATH = "_path"
INVOCATION = "(_gid0, _gid1, _gid2)"  # what error reports say the failing invocation is


# ---------------------------------------------------------------- array geometry


@dataclass(frozen=True)
class Geometry:
    """Python text for where an array's elements are: its buffer, offset, strides, shape and
    buffer length. Parameters have launch-time values (names bound by `bind`); `pk.shared` and
    `pk.local` arrays are row-major with a constant shape (literals)."""

    buffer: str
    offset: str | None  # None: zero
    strides: tuple[str, ...]
    shape: tuple[str, ...]
    length: str

    @staticmethod
    def of_param(name: str, ndim: int) -> Geometry:
        return Geometry(buffer(name), offset(name),
                        tuple(stride(name, k) for k in range(ndim)),
                        tuple(shape(name, k) for k in range(ndim)), length(name))

    @staticmethod
    def of_decl(decl: ir.ArrayDecl) -> Geometry:
        shape = tuple(int(n) for n in decl.shape)
        return Geometry(buffer(decl.name), None,
                        tuple(str(s) for s in row_major_strides(shape)),
                        tuple(str(n) for n in shape), str(math.prod(shape)))


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


# ---------------------------------------------------------------- what generation collects


@dataclass(frozen=True)
class AccessSite:
    """One array access of the kernel, for the out-of-bounds message."""

    array: str
    loc: ir.Loc


@dataclass(frozen=True)
class AssertSite:
    message: str
    loc: ir.Loc


@dataclass(frozen=True)
class SubgroupSite:
    """One exchanging subgroup operation: an invocation that reaches it yields
    `(site index, *argument values)` and is resumed with the result. `op` None is a tile load
    or store (`type` the tile's): the subgroup meets there and exchanges nothing (see
    `tile_codegen`)."""

    op: ir.SubgroupOp | None
    type: DType | CoopType
    loc: ir.Loc


@dataclass
class CodegenState:
    """What expression and statement generation share: module-level definitions (float
    constants as numpy scalars of their type, atomic update functions), the sites errors and
    subgroup operations refer to, and temporaries."""

    constants: dict[tuple[str, str], str] = field(default_factory=dict)
    definitions: dict[object, tuple[str, str]] = field(default_factory=dict)  # key: (name, def)
    sites: list[AccessSite] = field(default_factory=list)
    asserts: list[AssertSite] = field(default_factory=list)
    subgroups: list[SubgroupSite] = field(default_factory=list)
    temps: int = 0
    positions: int = 0

    def temp(self) -> str:
        self.temps += 1
        return f"_t{self.temps}"

    def position(self) -> int:
        """The next position in program order: synchronising loops, calls and subgroup sites
        are numbered as code is generated, in the order Python runs them within a body."""
        self.positions += 1
        return self.positions

    def progress(self) -> str:
        """The progress key a subgroup site yields: the invocation's path, then the site."""
        return f"(*{PATH}, {self.position()})"

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

    def define(self, key: object, name: str, text: str) -> str:
        """A module-level definition (`text` defines `name`), made once per `key`."""
        if key not in self.definitions:
            self.definitions[key] = (name, text)
        return self.definitions[key][0]

    def module_lines(self) -> list[str]:
        lines = [f"{name} = np.{_NUMPY_SCALAR[dtype]}({literal})"
                 for (literal, dtype), name in self.constants.items()]
        return lines + [text for _, text in self.definitions.values()]


_NUMPY_SCALAR = {"f16": "float16", "f32": "float32", "f64": "float64"}


def float_literal(value: float) -> str:
    """Python source for exactly `value` (repr round-trips; inf and nan have no literal)."""
    if math.isnan(value):
        return "float('nan')"
    if math.isinf(value):
        return "float('inf')" if value > 0 else "float('-inf')"
    return repr(value)
