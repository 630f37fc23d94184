"""The typed IR: what the frontend produces and every backend (SPIR-V, interpreter) consumes.

Contract (checked by `pykern.frontend.verify`):
- Every node is a frozen dataclass with a `loc`; every expression has a `type` (a `DType`).
- Types are already resolved: a `BinOp`'s operands have the same type as each other (except
  shifts, whose count has the same type too), the frontend inserted every `Cast`. Backends never
  infer or convert types on their own.
- Semantics are Python's where Python defines them: `FLOORDIV` and `MOD` floor (also for negative
  operands and floats), integer arithmetic wraps in two's complement at the type's width, `AND`/
  `OR` short-circuit, `IfExp` evaluates only the chosen branch.
- Variables are declared once in `Kernel.locals` with one type; `Assign` stores to them.
- Arrays are referred to by parameter name. An element's address is
  `offset + sum(index[k] * stride[k])` in elements; shape, strides and offset of each array are
  launch arguments (see `pykern.spirv.layout`), not compile-time constants.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .dtypes import ArrayType, DType


@dataclass(frozen=True)
class Loc:
    """A source location in the user's file: 1-based line and 1-based column (as compilers print
    them; the frontend adds 1 to `ast`'s 0-based col_offset)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN_LOC = Loc("<unknown>", 0, 0)


class BinOpKind(enum.Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"  # float operands only (the frontend casts ints to f32 first)
    FLOORDIV = "//"  # Python floor division, ints or floats
    MOD = "%"  # Python modulo: result has the sign of the divisor
    POW = "**"  # floats: Python's pow; ints: exponent >= 0 (negative gives 0 unless base is +-1)
    BIT_AND = "&"  # ints and bools
    BIT_OR = "|"
    BIT_XOR = "^"
    LSHIFT = "<<"
    RSHIFT = ">>"  # arithmetic for signed, logical for unsigned
    MIN = "min"
    MAX = "max"
    EQ = "=="  # comparisons: operands of one type, result bool_
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="

    @property
    def is_comparison(self) -> bool:
        return self in _COMPARISONS


_COMPARISONS = frozenset(
    {BinOpKind.EQ, BinOpKind.NE, BinOpKind.LT, BinOpKind.LE, BinOpKind.GT, BinOpKind.GE}
)


class UnaryOpKind(enum.Enum):
    NEG = "-"
    NOT = "not"  # bool_ operand
    INVERT = "~"  # ints: bitwise not
    ABS = "abs"


class LogicalKind(enum.Enum):
    AND = "and"
    OR = "or"


class MathFn(enum.Enum):
    """Float math functions; each takes and returns the operand float type.

    `arity` tells how many arguments. All map to GLSL.std.450 except where noted in the backend.
    """

    SQRT = ("sqrt", 1)
    EXP = ("exp", 1)
    LOG = ("log", 1)
    SIN = ("sin", 1)
    COS = ("cos", 1)
    TANH = ("tanh", 1)
    FLOOR = ("floor", 1)
    CEIL = ("ceil", 1)
    POW = ("pow", 2)  # same semantics as BinOpKind.POW on floats

    @property
    def arity(self) -> int:
        return self.value[1]

    @property
    def py_name(self) -> str:
        return self.value[0]


class BuiltinKind(enum.Enum):
    GLOBAL_ID = "global_id"  # includes the split-dispatch base offset
    LOCAL_ID = "local_id"
    GROUP_ID = "group_id"  # includes the base offset divided by the workgroup size
    GROUP_SIZE = "group_size"
    NUM_GROUPS = "num_groups"  # of the whole logical launch: ceil(grid / group_size)
    GRID = "grid"  # the launch's logical size, the `grid` of kernel[grid]


class Access(enum.Flag):
    """How a kernel uses an array parameter, inferred from its body."""

    NONE = 0
    READ = enum.auto()
    WRITE = enum.auto()
    READ_WRITE = READ | WRITE


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, kw_only=True)
class Node:
    loc: Loc = field(compare=False, default=UNKNOWN_LOC)


@dataclass(frozen=True, kw_only=True)
class Expr(Node):
    type: DType


@dataclass(frozen=True, kw_only=True)
class Const(Expr):
    """A literal: `value` is a Python bool, int or float already representable in `type`."""

    value: bool | int | float


@dataclass(frozen=True, kw_only=True)
class LocalRef(Expr):
    """Read of a local variable declared in `Kernel.locals`."""

    name: str


@dataclass(frozen=True, kw_only=True)
class ScalarParam(Expr):
    """Read of a scalar kernel parameter (a launch argument)."""

    name: str


@dataclass(frozen=True, kw_only=True)
class ArrayLoad(Expr):
    """`array[indices]`: one i32 index per dimension of the array parameter."""

    array: str
    indices: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class ArrayDim(Expr):
    """`array.shape[axis]` (and `len(array)` for axis 0); type i32."""

    array: str
    axis: int


@dataclass(frozen=True, kw_only=True)
class BinOp(Expr):
    op: BinOpKind
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, kw_only=True)
class UnaryOp(Expr):
    op: UnaryOpKind
    operand: Expr


@dataclass(frozen=True, kw_only=True)
class Logical(Expr):
    """Short-circuit `and`/`or` of two bool_ operands; `rhs` runs only when needed."""

    op: LogicalKind
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, kw_only=True)
class IfExp(Expr):
    """`then if cond else orelse`: only the chosen branch is evaluated."""

    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True, kw_only=True)
class Cast(Expr):
    """Conversion of `value` to `type`: float->int truncates toward zero, int->bool is `!= 0`,
    bool->number gives 0/1, int->int wraps or sign-extends."""

    value: Expr


@dataclass(frozen=True, kw_only=True)
class MathCall(Expr):
    fn: MathFn
    args: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class Builtin(Expr):
    """`pk.global_id(dim)` and friends; type i32, dim in 0..2."""

    kind: BuiltinKind
    dim: int


# ---------------------------------------------------------------- statements


@dataclass(frozen=True, kw_only=True)
class Stmt(Node):
    pass


@dataclass(frozen=True, kw_only=True)
class Assign(Stmt):
    name: str
    value: Expr


@dataclass(frozen=True, kw_only=True)
class Store(Stmt):
    """`array[indices] = value`; value has the array's dtype."""

    array: str
    indices: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True, kw_only=True)
class If(Stmt):
    cond: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ForRange(Stmt):
    """`for var in range(start, stop, step)`: all four of one integer type.

    Python semantics: bounds evaluated once before the loop, the loop counts on a hidden counter
    so assigning to `var` in the body does not change the iteration, and `step` may be negative
    (a zero step is undefined). After the loop `var` holds the last value taken, as in Python.
    """

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, kw_only=True)
class While(Stmt):
    cond: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, kw_only=True)
class Break(Stmt):
    pass


@dataclass(frozen=True, kw_only=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True, kw_only=True)
class Return(Stmt):
    """Ends this invocation (kernels return no value)."""


# ---------------------------------------------------------------- the kernel


@dataclass(frozen=True, kw_only=True)
class Param(Node):
    """A kernel parameter. For arrays, `access` says how the body uses it."""

    name: str
    type: DType | ArrayType
    access: Access = Access.NONE

    @property
    def is_array(self) -> bool:
        return isinstance(self.type, ArrayType)


@dataclass(frozen=True, kw_only=True)
class Local(Node):
    """A local variable; `loc` is where it got its type (its first assignment)."""

    name: str
    type: DType


@dataclass(frozen=True, kw_only=True)
class Kernel(Node):
    """One compiled variant of a `@pk.kernel`.

    The frontend puts the grid mask (`if global_id(d) >= grid(d): return` for d in 0..2) at the
    start of `body`, so backends run `body` as it is for every invocation they launch.
    """

    name: str
    params: tuple[Param, ...]
    locals: tuple[Local, ...]
    body: tuple[Stmt, ...]
    workgroup: tuple[int, int, int]

    def __str__(self) -> str:
        from .ir_format import format_kernel  # the printer depends on this module, not back

        return format_kernel(self)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)
