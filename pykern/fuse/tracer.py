"""The symbolic tensors a `@pk.fuse` function is called with while it is traced.

A `Tracer` stands for a tensor of known dtype and shape. Operators, the op library's
elementwise functions (through the hook in `pykern.tensor.core.fuse_traced`), `astype` and the
reduction methods record `nodes` instead of running kernels. Each op decides its dtypes with
the op tables' own plans (`UnaryOp.plan`, `BinaryOp.plan`) and the eager promotion rules,
including the eager ops' special cases (`x ** 2` squares, an int scalar beyond an integer
dtype's range compares as a constant), so a fused result has the eager result's dtype and
values. Whatever needs a concrete value (`bool(t)`, indexing, a matmul) is refused with a
located `FuseError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pykern.fuse.nodes import Apply, Constant, Input, Node, Reduce
from pykern.fuse.refusal import refuse
from pykern.lang import dtypes as dt
from pykern.lang.bf16_rounding import bf16_value
from pykern.lang.dtypes import DType
from pykern.tensor.elementwise import binary_ops as bo
from pykern.tensor.core import promotion as pr
from pykern.tensor.reduce import reduction
from pykern.tensor.core import strided
from pykern.tensor.core.fuse_traced import Traced
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.elementwise.unary_ops import UNARY, UnaryOp, copy_f
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.elementwise.functions import where_f
from pykern.tensor.elementwise.functions import clip_f
from pykern.tensor.api.numpy_ufuncs import array_ufunc


class Tracer(Traced):
    """A traced tensor: `node` says how its value is computed."""

    __slots__ = ("node",)
    requires_grad = False  # the fused function runs eagerly where grads are needed
    __array_priority__ = 1000  # numpy defers its operators to ours

    def __init__(self, node: Node):
        self.node = node

    @property
    def dtype(self) -> DType:
        return self.node.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.node.shape

    @property
    def ndim(self) -> int:
        return len(self.node.shape)

    @property
    def size(self) -> int:
        return strided.prod(self.node.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<traced tensor {self.dtype.name}{list(self.shape)}>"

    # ------------------------------------------------------------ the op library's hooks

    def fuse_unary(self, op: UnaryOp, out: object) -> Tracer:
        _no_out(op.name, out)
        x = operand_node(self)
        plan = op.plan(x.dtype)
        if plan.fn is None:
            return _apply(op.name, None, (), (), plan.result, x.shape, plan.constant)
        return _apply(op.name, plan.fn, (x,), (plan.compute,), plan.result, x.shape)

    def fuse_binary(self, op: bo.BinaryOp, a: object, b: object, out: object) -> Tracer:
        _no_out(op.name, out)
        a, b = _strong_or_scalar(a), _strong_or_scalar(b)
        p = pr.result_type(a, b)  # at least one of them is traced: never two scalars
        special = _pow_shortcut(a, b, p) if op is bo.POW else None
        if special is None and op.beyond_range is not None and p.is_int:
            special = _out_of_range_comparison(op, a, b, p)
        if special is not None:
            return special
        plan = op.plan(p)
        na, nb = operand_node(a, p), operand_node(b, p)
        shape = strided.broadcast_shapes(na.shape, nb.shape, op=op.name)
        return _apply(op.name, plan.fn, (na, nb), (plan.compute, plan.compute), plan.result,
                      shape)

    def fuse_where(self, condition: object, x1: object, x2: object) -> Tracer:
        c = operand_node(_strong(condition))
        x1, x2 = _strong_or_scalar(x1), _strong_or_scalar(x2)
        p = pr.result_type(x1, x2)
        n1, n2 = operand_node(x1, p), operand_node(x2, p)
        shape = strided.broadcast_shapes(c.shape, n1.shape, n2.shape, op="where")
        ct = pr.compute_dtype(p)
        return _apply("where", where_f, (c, n1, n2), (dt.bool_, ct, ct), p, shape)

    def fuse_clip(self, x: object, lo: object, hi: object) -> Tracer:
        x = _strong(x)
        if lo is None and hi is None:
            return Tracer(operand_node(x)).fuse_astype(x.dtype, True)  # type: ignore[attr-defined]
        if lo is None:
            return self.fuse_binary(bo.MINIMUM, x, hi, None)
        if hi is None:
            return self.fuse_binary(bo.MAXIMUM, x, lo, None)
        lo, hi = _strong_or_scalar(lo), _strong_or_scalar(hi)
        p = pr.result_type(x, lo, hi)
        if p == dt.bool_:
            raise TypeError("clip is not supported for bool tensors")
        nx, nlo, nhi = operand_node(x, p), operand_node(lo, p), operand_node(hi, p)
        shape = strided.broadcast_shapes(nx.shape, nlo.shape, nhi.shape, op="clip")
        ct = pr.compute_dtype(p)
        return _apply("clip", clip_f, (nx, nlo, nhi), (ct, ct, ct), p, shape)

    def fuse_astype(self, dtype: object, copy: bool = True) -> Tracer:
        d = dt.as_dtype(dtype)
        x = operand_node(self)
        if d == x.dtype and not copy:
            return self
        return _apply("astype", copy_f, (x,), (d,), d, x.shape)

    astype = fuse_astype

    # ------------------------------------------------------------ reductions (results only)

    def sum(self, axis: Any = None, keepdims: bool = False, dtype: object = None) -> Tracer:
        return self._reduce("sum", axis, keepdims, dtype)

    def prod(self, axis: Any = None, keepdims: bool = False, dtype: object = None) -> Tracer:
        return self._reduce("prod", axis, keepdims, dtype)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("mean", axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("max", axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return self._reduce("min", axis, keepdims)

    def _reduce(self, op: str, axis: Any, keepdims: bool, sum_dtype: object = None) -> Tracer:
        x = operand_node(self)
        axes = reduction.normalize_axes(axis, len(x.shape))
        if keepdims:
            shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
        else:
            shape = tuple(s for d, s in enumerate(x.shape) if d not in axes)
        return Tracer(Reduce(_reduced_dtype(op, x.dtype, sum_dtype), shape, op, x, axis,
                             keepdims, sum_dtype))

    # ------------------------------------------------------------ operators

    def _op(self, name: str, other: object, reflected: bool = False) -> Any:
        if not _is_operand(other):
            return NotImplemented
        op = bo.BINARY[name]
        return self.fuse_binary(op, other, self, None) if reflected else \
            self.fuse_binary(op, self, other, None)

    def __add__(self, o: object) -> Any: return self._op("add", o)
    def __radd__(self, o: object) -> Any: return self._op("add", o, True)
    def __sub__(self, o: object) -> Any: return self._op("subtract", o)
    def __rsub__(self, o: object) -> Any: return self._op("subtract", o, True)
    def __mul__(self, o: object) -> Any: return self._op("multiply", o)
    def __rmul__(self, o: object) -> Any: return self._op("multiply", o, True)
    def __truediv__(self, o: object) -> Any: return self._op("divide", o)
    def __rtruediv__(self, o: object) -> Any: return self._op("divide", o, True)
    def __floordiv__(self, o: object) -> Any: return self._op("floor_divide", o)
    def __rfloordiv__(self, o: object) -> Any: return self._op("floor_divide", o, True)
    def __mod__(self, o: object) -> Any: return self._op("remainder", o)
    def __rmod__(self, o: object) -> Any: return self._op("remainder", o, True)
    def __pow__(self, o: object) -> Any: return self._op("pow", o)
    def __rpow__(self, o: object) -> Any: return self._op("pow", o, True)
    def __and__(self, o: object) -> Any: return self._op("bitwise_and", o)
    def __rand__(self, o: object) -> Any: return self._op("bitwise_and", o, True)
    def __or__(self, o: object) -> Any: return self._op("bitwise_or", o)
    def __ror__(self, o: object) -> Any: return self._op("bitwise_or", o, True)
    def __xor__(self, o: object) -> Any: return self._op("bitwise_xor", o)
    def __rxor__(self, o: object) -> Any: return self._op("bitwise_xor", o, True)
    def __lshift__(self, o: object) -> Any: return self._op("bitwise_left_shift", o)
    def __rlshift__(self, o: object) -> Any: return self._op("bitwise_left_shift", o, True)
    def __rshift__(self, o: object) -> Any: return self._op("bitwise_right_shift", o)
    def __rrshift__(self, o: object) -> Any: return self._op("bitwise_right_shift", o, True)
    def __eq__(self, o: object) -> Any: return self._op("equal", o)  # type: ignore[override]
    def __ne__(self, o: object) -> Any: return self._op("not_equal", o)  # type: ignore[override]
    def __lt__(self, o: object) -> Any: return self._op("less", o)
    def __le__(self, o: object) -> Any: return self._op("less_equal", o)
    def __gt__(self, o: object) -> Any: return self._op("greater", o)
    def __ge__(self, o: object) -> Any: return self._op("greater_equal", o)

    __hash__ = object.__hash__

    def __neg__(self) -> Tracer: return self.fuse_unary(UNARY["negative"], None)
    def __pos__(self) -> Tracer: return self.fuse_unary(UNARY["positive"], None)
    def __abs__(self) -> Tracer: return self.fuse_unary(UNARY["abs"], None)
    def __invert__(self) -> Tracer: return self.fuse_unary(UNARY["bitwise_invert"], None)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy's ufuncs and operators on traced values: the op library's, traced."""
        return array_ufunc(ufunc, method, inputs, kwargs)

    # ------------------------------------------------------------ what needs a value

    def __bool__(self) -> bool:
        raise refuse("Python control flow on a tensor's value (bool() of a traced tensor)",
                     "use pk.where for a choice per element")

    def __index__(self) -> int:
        raise refuse("a tensor used as a Python integer")

    def __int__(self) -> int:
        raise refuse("int() of a traced tensor")

    def __float__(self) -> float:
        raise refuse("float() of a traced tensor")

    def __iter__(self) -> Any:
        raise refuse("iterating over a traced tensor")

    def __getitem__(self, key: object) -> Any:
        raise refuse("indexing a traced tensor (t[...])")

    def __setitem__(self, key: object, value: object) -> None:
        raise refuse("an assignment into a traced tensor (t[...] = v)")

    def __matmul__(self, o: object) -> Any:
        raise refuse("a matmul (@)")

    __rmatmul__ = __matmul__

    def __array__(self, *args: object, **kwargs: object) -> Any:
        raise refuse("an operation that needs a traced tensor's value (a numpy function or a "
                     "pykern function that is not elementwise)",
                     "reductions fuse as methods (x.sum(), x.max(axis=-1))")

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__") and hasattr(Tensor, name):
            raise refuse(f"the tensor method or attribute .{name}")
        raise AttributeError(f"a traced tensor has no attribute {name!r}")


def _in_place(symbol: str) -> Any:
    def method(self: Tracer, other: object) -> Any:
        raise refuse(f"the in-place operator {symbol}", "write x = x ... instead")
    return method


for _name, _symbol in (("iadd", "+="), ("isub", "-="), ("imul", "*="), ("itruediv", "/="),
                       ("ifloordiv", "//="), ("imod", "%="), ("ipow", "**="), ("iand", "&="),
                       ("ior", "|="), ("ixor", "^="), ("ilshift", "<<="), ("irshift", ">>="),
                       ("imatmul", "@=")):
    setattr(Tracer, f"__{_name}__", _in_place(_symbol))


# ---------------------------------------------------------------- operands


def _is_operand(x: object) -> bool:
    return isinstance(x, (Tracer, Tensor, np.ndarray, np.generic, list, tuple)) or \
        pr.is_python_scalar(x)


def _strong(x: object) -> Tracer | Tensor:
    """A traced value, or the tensor eager ops make of anything else (arrays, numbers)."""
    if isinstance(x, (Tracer, Tensor)):
        return x
    return as_tensor(x)


def _strong_or_scalar(x: object) -> object:
    """Python scalars stay weak numbers (their dtype comes from the other operand)."""
    return x if pr.is_python_scalar(x) else _strong(x)


def operand_node(x: object, p: DType | None = None) -> Node:
    """The node for an operand: a traced value's own, an Input for a tensor the function
    reached itself, a Constant in `p` for a Python scalar (checked as the eager ops check it)."""
    if isinstance(x, Tracer):
        if isinstance(x.node, Reduce):
            raise refuse(f"an operation on the result of .{x.node.op}()",
                         "a reduction can only be a result of the fused function")
        return x.node
    if isinstance(x, Tensor):
        return Input(x.dtype, x.shape, -1, captured=x)
    assert p is not None and pr.is_python_scalar(x), x
    pr.check_number(x)
    if isinstance(x, int) and not isinstance(x, bool) and p.is_int:
        pr.check_scalar_fits(x, p)
    if p == dt.bf16:  # rounded as kernels round it, not by ml_dtypes
        return Constant(p, (), bf16_value(x))
    return Constant(p, (), np.asarray(x).astype(p.numpy).item())


def _apply(name: str, fn: Any, operands: tuple[Node, ...], converts: tuple[DType, ...],
           result: DType, shape: tuple[int, ...], fill: bool | int | float = 0) -> Tracer:
    return Tracer(Apply(result, tuple(shape), name, fn, operands, converts, fill))


def _no_out(name: str, out: object) -> None:
    if out is not None:
        raise refuse(f"{name}(..., out=...)", "return the result instead")


# ---------------------------------------------------------------- the eager special cases


def _pow_shortcut(a: object, b: object, p: DType) -> Tracer | None:
    """`x ** scalar` as the eager op runs it (exact forms for 2, 1, 0.5, -1 and 0)."""
    if not pr.is_python_scalar(b) or pr.is_python_scalar(a) or p == dt.bool_:
        return None
    if p.is_int and isinstance(b, int) and b < 0:
        raise ValueError("integers to negative integer powers are not allowed")
    x = Tracer(operand_node(a))
    if x.dtype != p:
        x = x.fuse_astype(p)
    if b == 2:
        return x.fuse_unary(UNARY["square"], None)
    if b == 1:
        return x.fuse_unary(UNARY["positive"], None)
    if p.is_float and b == 0.5:
        return x.fuse_unary(UNARY["sqrt"], None)
    if p.is_float and b == -1:
        return x.fuse_unary(UNARY["reciprocal"], None)
    if b == 0:
        return _apply("pow", None, (), (), p, x.shape, 1)
    return None


def _out_of_range_comparison(op: bo.BinaryOp, a: object, b: object, p: DType
                             ) -> Tracer | None:
    """`i8_t < 1000`: an int scalar beyond the dtype's range compares the same with every
    element, as in eager ops (a constant result; `binary_ops.beyond_range` decides)."""
    decided = bo.beyond_range(op, a, b, p)
    if decided is None:
        return None
    tensor, truth = decided
    return _apply(op.name, None, (), (), dt.bool_, operand_node(tensor).shape, truth)


def _reduced_dtype(op: str, d: DType, sum_dtype: object) -> DType:
    """The dtype the library's reduction `op` gives for input dtype `d`."""
    if op in ("sum", "prod"):
        r = dt.as_dtype(sum_dtype) if sum_dtype is not None else reduction.sum_dtype(d)
        return dt.i64 if r == dt.bool_ else r
    if op == "mean":
        return d if d.is_float else dt.f32
    return d
