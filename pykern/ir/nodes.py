"""The typed IR: what the frontend produces and every backend (SPIR-V, interpreter) consumes.

Contract (checked by `pykern.ir.verify`):
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
  launch arguments (see `pykern.spirv.binding_plan`), not compile-time constants.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from pykern.lang.dtypes import ArrayType, DType


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
    RSQRT = ("rsqrt", 1)
    EXP2 = ("exp2", 1)
    LOG2 = ("log2", 1)
    TAN = ("tan", 1)
    ASIN = ("asin", 1)
    ACOS = ("acos", 1)
    ATAN = ("atan", 1)
    ATAN2 = ("atan2", 2)  # atan2(y, x), Python's argument order
    SINH = ("sinh", 1)
    COSH = ("cosh", 1)
    ERF = ("erf", 1)  # not in GLSL.std.450: the backend writes it
    TRUNC = ("trunc", 1)
    ROUND = ("round", 1)  # Python's round(): halves to even
    FMA = ("fma", 3)  # a * b + c, fused where the device fuses
    COPYSIGN = ("copysign", 2)
    ISNAN = ("isnan", 1)  # result type bool_
    ISINF = ("isinf", 1)  # result type bool_

    @property
    def arity(self) -> int:
        return self.value[1]

    @property
    def is_predicate(self) -> bool:
        """ISNAN and ISINF return bool_; every other function returns its operand type."""
        return self in (MathFn.ISNAN, MathFn.ISINF)

    @property
    def py_name(self) -> str:
        return self.value[0]


class ComplexFn(enum.Enum):
    """The functions of complex values (`ComplexCall`), before `pykern.passes.complex` lowers
    them to real arithmetic: the parts, the constructor, and numpy's functions of one complex
    argument (each returns the operand's complex type unless noted)."""

    REAL = "real"  # the real part, of the part type
    IMAG = "imag"  # the imaginary part, of the part type
    MAKE = "complex"  # complex(re, im) from two values of the part type
    CONJ = "conj"
    ABS = "abs"  # the part type: hypot(re, im) without overflow
    ANGLE = "angle"  # the part type: atan2(im, re)
    EXP = "exp"
    LOG = "log"
    LOG2 = "log2"
    LOG10 = "log10"
    LOG1P = "log1p"
    EXPM1 = "expm1"
    SQRT = "sqrt"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    SINH = "sinh"
    COSH = "cosh"
    TANH = "tanh"
    ASIN = "asin"
    ACOS = "acos"
    ATAN = "atan"
    ASINH = "asinh"
    ACOSH = "acosh"
    ATANH = "atanh"
    SQUARE = "square"

    @property
    def real_result(self) -> bool:
        """Whether the result is of the part type (the parts, abs, angle)."""
        return self in (ComplexFn.REAL, ComplexFn.IMAG, ComplexFn.ABS, ComplexFn.ANGLE)


class BuiltinKind(enum.Enum):
    GLOBAL_ID = "global_id"  # includes the split-dispatch base offset
    LOCAL_ID = "local_id"
    GROUP_ID = "group_id"  # includes the base offset divided by the workgroup size
    GROUP_SIZE = "group_size"
    NUM_GROUPS = "num_groups"  # of the whole logical launch: ceil(grid / group_size)
    GRID = "grid"  # the launch's logical size, the `grid` of kernel[grid]
    # in a kernel that runs several logical invocations per invocation (`Kernel.items`, made
    # by `pykern.passes.spread`; dim 0 only): the global id of the first one, and how far
    # apart the others follow (the invocations of the dispatch)
    SPREAD_BASE = "spread_base"
    SPREAD_STRIDE = "spread_stride"


class AtomicOp(enum.Enum):
    """Atomic read-modify-write on one array element; every one returns the old value."""

    ADD = "add"  # ints; f32 (natively where the device has float atomics, else a CAS loop)
    SUB = "sub"
    MIN = "min"
    MAX = "max"
    AND = "and"
    OR = "or"
    XOR = "xor"
    EXCHANGE = "exchange"
    CAS = "cas"  # compare-and-swap: stores `value` if the element equals `comparator`


class SubgroupOp(enum.Enum):
    """Operations across the invocations of a subgroup (all active invocations take part)."""

    SIZE = "subgroup_size"  # no args, i32
    LANE = "subgroup_lane"  # no args, i32: this invocation's index in its subgroup
    ADD = "subgroup_add"  # (x) sum over the subgroup, x's type
    MIN = "subgroup_min"
    MAX = "subgroup_max"
    ANY = "subgroup_any"  # (bool_) -> bool_
    ALL = "subgroup_all"
    BROADCAST = "subgroup_broadcast"  # (x, lane) lane is a constant i32: x of that lane
    SHUFFLE = "subgroup_shuffle"  # (x, lane) lane any i32 expression
    SHUFFLE_XOR = "subgroup_shuffle_xor"  # (x, mask) x of lane (this lane ^ mask)
    PREFIX_ADD = "subgroup_prefix_add"  # (x) exclusive prefix sum over lower lanes


class MemorySpace(enum.Enum):
    GLOBAL = "global"  # a kernel parameter: a storage buffer with launch-time shape/strides
    SHARED = "shared"  # pk.shared: one per workgroup, constant shape, row-major
    LOCAL = "local"  # pk.local: one per invocation, constant shape, row-major


class Access(enum.Flag):
    """How a kernel uses an array parameter, inferred from its body."""

    NONE = 0
    READ = enum.auto()
    WRITE = enum.auto()
    READ_WRITE = READ | WRITE
    # also read or written as cooperative-matrix tiles: the launch checks that its last
    # dimension is contiguous and its rows aligned (see `pykern.jit.arguments.check_tiles`)
    TILES = enum.auto()


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, kw_only=True)
class Node:
    loc: Loc = field(compare=False, default=UNKNOWN_LOC)


@dataclass(frozen=True, kw_only=True)
class Expr(Node):
    # a DType for numbers; a CoopType for a cooperative-matrix tile (the Coop* nodes, LocalRef
    # of a tile local, and BinOp/UnaryOp/Cast on tiles: see "tiles" below)
    type: DType


@dataclass(frozen=True, kw_only=True)
class Const(Expr):
    """A literal: `value` is a Python bool, int or float already representable in `type` (a
    Python complex for the complex types)."""

    value: bool | int | float | complex


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
class Bitcast(Expr):
    """The bits of `value` read as `type`, a number type of the same width (f32 <-> u32):
    made by `pk.bitcast` and by passes that work on a float's bits (`pykern.passes.bf16`)."""

    value: Expr


@dataclass(frozen=True, kw_only=True)
class MathCall(Expr):
    """A float math function; arguments share one float type, the result is that type (bool_
    for the predicates ISNAN/ISINF)."""

    fn: MathFn
    args: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class ComplexCall(Expr):
    """A function of complex values (`ComplexFn`): MAKE takes the two parts, every other one
    complex argument. Only the frontend makes these, and `pykern.passes.complex` removes them
    with every other complex value before a backend sees the kernel."""

    fn: ComplexFn
    args: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class Builtin(Expr):
    """`pk.global_id(dim)` and friends; type i32, dim in 0..2."""

    kind: BuiltinKind
    dim: int


@dataclass(frozen=True, kw_only=True)
class Select(Expr):
    """`pk.select(cond, a, b)`: both sides are evaluated (branch-free), then one is chosen."""

    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True, kw_only=True)
class Atomic(Expr):
    """`pk.atomic_<op>(array, index, value)`, and `pk.atomic_cas(array, index, comparator,
    value)`: on a global or shared array; `type` is the array's dtype (the old value)."""

    op: AtomicOp
    array: str
    indices: tuple[Expr, ...]
    value: Expr
    comparator: Expr | None = None


@dataclass(frozen=True, kw_only=True)
class Subgroup(Expr):
    op: SubgroupOp
    args: tuple[Expr, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Call(Expr):
    """A call of a device function (`Kernel.functions`) with scalar arguments, one per
    `Function.params`. `type` is its return type; a function that returns nothing has type
    `dtypes.void` and is only called from `Eval`."""

    function: str
    args: tuple[Expr, ...]


# ---------------------------------------------------------------- tiles
#
# A tile (`CoopType`) is held by the whole subgroup. Besides the nodes below, tiles appear in
# `BinOp` (ADD/SUB/MUL/DIV of two tiles of one type, elementwise), `UnaryOp` (NEG) and `Cast`
# (a tile of the same shape and use with another dtype); `LocalRef`/`Assign` of tile locals.
# Every invocation of a subgroup must execute the same tile operations with the same operands.


@dataclass(frozen=True, kw_only=True)
class CoopFill(Expr):
    """A tile of `type` with every element `value` (a scalar of the tile's dtype)."""

    value: Expr


@dataclass(frozen=True, kw_only=True)
class CoopLoad(Expr):
    """The tile of `type` whose first element is `array[indices]` (one index per dimension of
    the array; the tile spans its last two). Element (i, j) is `array[..., r + i, c + j]`, or
    with `transpose` `array[..., r + j, c + i]`. The array's last dimension has unit stride
    (checked at launch for parameters)."""

    array: str
    indices: tuple[Expr, ...]
    transpose: bool = False


@dataclass(frozen=True, kw_only=True)
class CoopMma(Expr):
    """`a @ b + c`: a is MATRIX_A (M x K), b MATRIX_B (K x N), c and the result ACCUMULATOR
    (M x N); integer tiles multiply as signed or unsigned by their dtypes."""

    a: Expr
    b: Expr
    c: Expr


@dataclass(frozen=True, kw_only=True)
class CoopScale(Expr):
    """Every element of the tile `matrix` times the scalar `scalar` (of the tile's dtype)."""

    matrix: Expr
    scalar: Expr


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
    """Ends this invocation (in a kernel) or the function, returning `value` (in a device
    function with a return type; None elsewhere)."""

    value: Expr | None = None


@dataclass(frozen=True, kw_only=True)
class Eval(Stmt):
    """Evaluates an expression for its effect (an atomic or a call whose result is unused)."""

    value: Expr


@dataclass(frozen=True, kw_only=True)
class Barrier(Stmt):
    """`pk.barrier()`: waits for every invocation of the workgroup, and makes their shared- and
    global-memory writes visible to each other."""


@dataclass(frozen=True, kw_only=True)
class Assert(Stmt):
    """`assert cond, message`: only emitted in debug mode; a failure is reported to the host
    (KernelAssertionError with `message` and the location)."""

    cond: Expr
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class CoopStore(Stmt):
    """Stores the tile `value` with its first element at `array[indices]` (layout as
    `CoopLoad`'s)."""

    array: str
    indices: tuple[Expr, ...]
    value: Expr
    transpose: bool = False


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
    type: DType  # or a CoopType: a tile variable


@dataclass(frozen=True, kw_only=True)
class ArrayDecl(Node):
    """An array the kernel declares: `pk.shared(dtype, shape)` or `pk.local(dtype, shape)`.
    Row-major with a constant shape; `ArrayLoad`/`Store`/`Atomic` refer to it by `name` like
    to an array parameter. Its contents start undefined."""

    name: str
    dtype: DType
    shape: tuple[int, ...]
    space: MemorySpace

    @property
    def nbytes(self) -> int:
        """The bytes the array takes: its item size times its number of elements."""
        return self.dtype.itemsize * math.prod(self.shape)


@dataclass(frozen=True, kw_only=True)
class Function(Node):
    """A device function (`@pk.func`) specialised for one call signature. `params` are its
    scalar parameters (locals assigned from the call's arguments on entry); array arguments
    are not parameters: the body refers to the caller's arrays by name, so a function is
    specialised per array binding too. `return_type` is None for a function that returns
    nothing. Functions may call each other; never recursively. The IR has no tuples: a
    function that returns one in the source stores its elements into one-element `pk.local`
    arrays of the kernel (`ArrayDecl`s named `_pk_retN`) and returns nothing; the caller
    reads them after the call (see `pykern.frontend.tuples`)."""

    name: str
    params: tuple[Local, ...]
    locals: tuple[Local, ...]
    body: tuple[Stmt, ...]
    return_type: DType | None


@dataclass(frozen=True, kw_only=True)
class Kernel(Node):
    """One compiled variant of a `@pk.kernel`.

    When `masked`, the frontend put the grid mask (`if global_id(d) >= grid(d): return` for d
    in 0..2) at the start of `body`; a kernel with a `Barrier` (in its body or a function it
    calls) is not masked, since every invocation of a workgroup must reach each barrier: its
    body tests `grid(d)` itself. Either way backends run `body` as it is for every invocation
    they launch.

    `items` > 1 (`pykern.passes.spread`): each invocation runs `items` logical invocations
    along x, so a workgroup of `workgroup` invocations covers `workgroup[0] * items` of the
    grid (its `span`), and `SPREAD_BASE` and `SPREAD_STRIDE` number them.
    """

    name: str
    params: tuple[Param, ...]
    locals: tuple[Local, ...]
    body: tuple[Stmt, ...]
    workgroup: tuple[int, int, int]
    arrays: tuple[ArrayDecl, ...] = ()  # shared and local arrays
    functions: tuple[Function, ...] = ()  # callees come before their callers
    debug: bool = False  # bounds-check every array access and evaluate asserts
    masked: bool = True  # the body starts with the grid mask (false for kernels with barriers)
    items: int = 1  # logical invocations per invocation, along x

    @property
    def span(self) -> tuple[int, int, int]:
        """The logical invocations one workgroup covers per dimension."""
        return (self.workgroup[0] * self.items, self.workgroup[1], self.workgroup[2])

    def __str__(self) -> str:
        from pykern.ir.format import format_kernel  # the printer depends on this module, not back

        return format_kernel(self)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


def walk(node: Node) -> Iterator[Node]:
    """`node` and every node below it (through fields and tuples of nodes), depth first, each
    before its children and those in field order: the one traversal the frontend's checks and
    both backends' pre-passes share. Iterative, so any depth is fine."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = []
        for f in fields(current):
            value = getattr(current, f.name)
            for child in value if isinstance(value, tuple) else (value,):
                if isinstance(child, Node):
                    children.append(child)
        stack.extend(reversed(children))
