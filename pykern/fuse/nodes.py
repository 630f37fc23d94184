"""The expression graph a `@pk.fuse` trace records: what each traced value is computed from.

Every node has the dtype and shape the eager op would give its result. An `Apply` node is
one element function of the op tables run the way the eager kernels run it: each operand
converted to its compute dtype, the result stored in the node's dtype (so f16 chains round
to f16 between ops, exactly as eager ops that write f16 tensors do).
"""

from __future__ import annotations

from dataclasses import dataclass

from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.core.tensor import Tensor


@dataclass(frozen=True, eq=False)
class Node:
    """A value of the traced function: `dtype` and `shape` as the eager result's."""

    dtype: DType
    shape: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Input(Node):
    """A tensor read by the kernel: argument `index` of the call, or (with `captured`) a
    tensor the function reached by other means (a global, a closure, an array operand)."""

    index: int
    captured: Tensor | None = None


@dataclass(frozen=True, eq=False)
class Constant(Node):
    """A Python scalar (an argument or a literal of the function) in `dtype`, the dtype the
    eager op converts it to; passed to the kernel as an argument, not compiled in."""

    value: bool | int | float


@dataclass(frozen=True, eq=False)
class Apply(Node):
    """`fn(*operands)` with operand k converted to `converts[k]` first; `fn` None means the
    dtype alone decides the value (`fill`, as eager `isnan` of integers). `name` is the op's,
    for the generated source's comments."""

    name: str
    fn: Func | None
    operands: tuple[Node, ...]
    converts: tuple[DType, ...]
    fill: bool | int | float = 0


@dataclass(frozen=True, eq=False)
class Reduce(Node):
    """A reduction of `x` (`op`: sum, prod, mean, max or min) over `axis` with `keepdims`;
    `dtype` is sum and prod's `dtype=` argument. It may only be a result of the function."""

    op: str
    x: Node
    axis: object
    keepdims: bool
    sum_dtype: object = None
