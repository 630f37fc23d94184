"""Elementwise operations: three generic `@pk.kernel`s (unary, binary, ternary) run by the
entries of the op tables (`unary_ops.UNARY`, `binary_ops.BINARY`).

Each kernel takes the element function `F` (a `@pk.func` of the table entry) and the compute dtype
`CT` (the type the operands are converted to before the op; f16 computes in f32, f64 in f64 — where
the device has no 64-bit transcendental functions, `pykern.passes.decompose` supplies them) as
constexpr arguments, so each compiled variant contains only its op. `nd` (constexpr 1, 2 or 4) picks
flat indexing (nd=1) — the fast path for contiguous operands, which `strided.plan` reduces to 1-D,
and on a Vulkan device several elements per invocation, all loaded before any is stored (the spread
pass, as for every kernel whose body allows it), which is what keeps a GPU's memory bus full — or
4-D strided indexing, where broadcast operands have stride 0: one flat index unravelled per element
(nd=4), or on the host device a 2-D grid of rows (nd=2: x walks the last dimension, y the rows,
unravelled once per row, so the invocation loop is a plain strided loop that LLVM vectorises instead
of three divisions per element). Python scalars become one-element constant tensors broadcast with
stride 0, so `t + 2.0` runs the same variant as `t + u`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import pykern as pk

from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.autograd import inplace
from pykern.autograd.graph import needs_grad
from pykern.autograd.mode import no_grad
from pykern.autograd.graph import record
from pykern.autograd.records import record_binary, record_cast, record_unary
from pykern.ops.choice import device_info, on_host
from pykern.ops.public import declare, internal, torch_names
from pykern.autograd.version import bump
from pykern.jit.strict_float import STRICT_BLOCK
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.scalar_constants import constant, scalar_constant
from pykern.tensor.core.fast_methods import replay_unary
from pykern.tensor.core.tensor import Tensor, asarray, empty
from pykern.tensor.complex import complex_copy as cc
from pykern.tensor.complex import complex_elementwise
from pykern.tensor.complex.complex_views import view_as_complex, view_as_real
from pykern.tensor.core import promotion as pr
from pykern.tensor.core import strided
from pykern.tensor.core.fuse_traced import Traced, traced_operand
from pykern.ops.registry import Impl, always, bind
from pykern.tensor.elementwise.binary_ops import (
    ADD, BINARY, GELU_GRAD, MAXIMUM, MINIMUM, POW, RELU_GRAD, SILU_GRAD, SUBTRACT, BinaryOp,
    beyond_range)
from pykern.tensor.elementwise.unary_ops import GELU_TANH, UNARY, UnaryOp, copy_f

__all__ = ["BINARY", "UNARY"]  # the tables, for numpy's ufuncs and the tests

# ---------------------------------------------------------------- the generic kernels


@pk.kernel
def unary_kernel(x: pk.Array, out: pk.Array, F: pk.constexpr, CT: pk.constexpr,  # noqa: N803
                 nd: pk.constexpr, UX: pk.constexpr = False):  # noqa: N803
    """out = F(CT(x)) elementwise (F an element @pk.func, CT the compute dtype; UX: x is
    one element broadcast, all its strides 0, read at index 0)."""
    i = pk.global_id(0)
    ix = i
    if UX:
        ix = 0
    if nd == 1:
        out[i] = F(CT(x[ix]))
    elif nd == 2:
        r0, r1, r2 = pk.unravel(pk.global_id(1), (out.shape[0], out.shape[1], out.shape[2]))
        out[r0, r1, r2, i] = F(CT(x[r0, r1, r2, ix]))
    else:
        idx = pk.unravel(i, out.shape)
        out[idx] = F(CT(x[idx]))


@pk.kernel
def binary_kernel(a: pk.Array, b: pk.Array, out: pk.Array, F: pk.constexpr,  # noqa: N803
                  CT: pk.constexpr, nd: pk.constexpr, UA: pk.constexpr = False,  # noqa: N803
                  UB: pk.constexpr = False):  # noqa: N803
    """out = F(CT(a), CT(b)) elementwise (UA, UB: that operand is one element broadcast)."""
    i = pk.global_id(0)
    ia = i
    if UA:
        ia = 0
    ib = i
    if UB:
        ib = 0
    if nd == 1:
        out[i] = F(CT(a[ia]), CT(b[ib]))
    elif nd == 2:
        r0, r1, r2 = pk.unravel(pk.global_id(1), (out.shape[0], out.shape[1], out.shape[2]))
        out[r0, r1, r2, i] = F(CT(a[r0, r1, r2, ia]), CT(b[r0, r1, r2, ib]))
    else:
        idx = pk.unravel(i, out.shape)
        out[idx] = F(CT(a[idx]), CT(b[idx]))


@pk.func
def where_f(c, x, y):
    return pk.select(c, x, y)


@pk.func
def clip_f(x, lo, hi):
    return pk.clamp(x, lo, hi)  # numpy's minimum(maximum(x, lo), hi)


@pk.kernel
def ternary_kernel(a: pk.Array, b: pk.Array, c: pk.Array, out: pk.Array,
                   F: pk.constexpr, FIRST: pk.constexpr, CT: pk.constexpr,  # noqa: N803
                   nd: pk.constexpr, UA: pk.constexpr = False, UB: pk.constexpr = False,  # noqa: N803
                   UC: pk.constexpr = False):  # noqa: N803
    """out = F(FIRST(a), CT(b), CT(c)) elementwise (FIRST is bool_ for where's condition;
    UA, UB, UC: that operand is one element broadcast)."""
    i = pk.global_id(0)
    ia = i
    if UA:
        ia = 0
    ib = i
    if UB:
        ib = 0
    ic = i
    if UC:
        ic = 0
    if nd == 1:
        out[i] = F(FIRST(a[ia]), CT(b[ib]), CT(c[ic]))
    elif nd == 2:
        r0, r1, r2 = pk.unravel(pk.global_id(1), (out.shape[0], out.shape[1], out.shape[2]))
        out[r0, r1, r2, i] = F(FIRST(a[r0, r1, r2, ia]), CT(b[r0, r1, r2, ib]),
                               CT(c[r0, r1, r2, ic]))
    else:
        idx = pk.unravel(i, out.shape)
        out[idx] = F(FIRST(a[idx]), CT(b[idx]), CT(c[idx]))


# How an elementwise kernel (these three, and @pk.fuse's) indexes its strided operands; the
# implementation's `kernel` is `strided.plan`'s `rows`. The host vectorises its invocation loop
# over one element each; on a GPU the flat form runs several elements per invocation, as every
# kernel whose body allows it does (the spread pass, pykern.passes.spread).
ELEMENTWISE = internal(
    "elementwise", "unary", "The launch of an elementwise kernel over strided operands.",
    Impl("rows", on_host, "4-D views over a 2-D grid: each row unravelled once, the loop along "
         "it a strided loop LLVM vectorises", kernel=True),
    Impl("flat", always, "one flat index per invocation (unravelled where the views are not "
         "contiguous); several per invocation on a GPU (the spread pass)", kernel=False))


def row_form() -> bool:
    """Whether the elementwise kernels run in rows (`strided.plan`'s `rows`) on this device."""
    return ELEMENTWISE.choose(device_info("elementwise")).kernel


def launch(kernel: pk.Kernel, inputs: list[Tensor], out: Tensor, *constants: object) -> None:
    """Runs one of the generic kernels over `inputs` (views of exactly `out.shape`, broadcast
    ones with stride 0) into `out`; `constants` go before `nd`."""
    for i, t in enumerate(inputs):
        if strided.may_overlap(out, t) and not strided.same_elements(out, t):
            inputs[i] = t.copy()  # out overwrites what a later invocation would read
    for job in strided.plan(out.shape, [*inputs, out], rows=row_form()):
        # an input that is one element broadcast (a scalar operand) is read at index 0: with
        # a stride of 0 LLVM's loop would not vectorise (it assumes strides of 1)
        uniform = [job.n > 1 and not any(v.strides) for v in job.views[:-1]]
        kernel[job.grid](*job.views, *constants, job.nd, *uniform)


# ---------------------------------------------------------------- operands


def as_tensor(x: object, what: str | None = None) -> Tensor:
    """A tensor operand from a tensor, numpy array/scalar, (nested) list or Python scalar (a
    0-d tensor of pykern's default dtype for it: bool_, i32, f32). `what` names the operand in
    the TypeError for anything else."""
    if isinstance(x, Tensor):
        return x
    if pr.is_python_scalar(x) or isinstance(x, (complex, np.ndarray, np.generic, list, tuple)) \
            or hasattr(x, "__array__") or hasattr(x, "__dlpack__"):
        return asarray(x)
    if what is not None:
        raise TypeError(f"{what} must be a pk.Tensor, array or number, not {type(x).__name__}")
    raise TypeError(f"expected a pk.Tensor, array or number, got {type(x).__name__}")


def _dtype_name(x: object) -> str:
    d = pr.operand_dtype(x)
    return d.name if d is not None else f"Python {type(x).__name__}"


# ---------------------------------------------------------------- unary ops


def unary(op: UnaryOp | str, x: object, out: Tensor | None = None) -> Tensor:
    """Runs the unary op `op` (an entry of UNARY, or its name) on `x`; records its backward
    (`pykern.autograd`) when `x` requires grad."""
    if isinstance(op, str):
        op = UNARY[op]
    if isinstance(x, Traced):  # pk.fuse is tracing: record the op, run nothing
        return x.fuse_unary(op, out)
    x = as_tensor(x)
    if x.dtype.is_complex:
        return complex_elementwise.unary(op.name, x, out)
    if out is not None:
        return _unary_into(op, x, out)
    result = dispatch((op, STRICT_BLOCK.get()), (x,), lambda: _unary(op, x, None))
    return record_unary(op.name, result, x, op.backward) if needs_grad(x) else result


def _unary_into(op: UnaryOp, x: Tensor, out: Tensor) -> Tensor:
    """`op(x, out=out)`: the write recorded (`pykern.autograd.inplace`) when `x` or `out`'s
    memory takes part in the graph."""
    if isinstance(out, Tensor) and inplace.records_write(out, x):
        def value() -> Tensor:
            result = unary(op, _unaliased(x, out))
            _output(out, result.shape, result.dtype, op.name)  # the same checks as below
            return result
        return inplace.write(op.name + "_", out, value, from_target=out is x)
    if type(out) is Tensor:
        result = dispatch((op, "out", STRICT_BLOCK.get()), (x, out), lambda: _unary(op, x, out))
    else:
        result = _unary(op, x, out)  # (raises the TypeError naming it)
    bump(out)
    return result


def _unary(op: UnaryOp, x: Tensor, out: Tensor | None) -> Tensor:
    plan = op.plan(x.dtype)
    out = _output(out, x.shape, plan.result, op.name)
    if plan.fn is None:
        assign(out, plan.constant)  # the dtype alone decides the answer
    else:
        launch(unary_kernel, [x], out, plan.fn, plan.compute)
    return out


def _output(out: Tensor | None, shape: tuple[int, ...], dtype: DType, name: str) -> Tensor:
    if out is None:
        return empty(shape, dtype)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}: out must be a pk.Tensor, not {type(out).__name__}")
    if out.shape != shape:
        raise ValueError(f"{name}: the result has shape {shape}, out has {out.shape}")
    if not pr.same_kind(dtype, out.dtype):
        raise TypeError(f"{name}: cannot store a {dtype.name} result into a {out.dtype.name} "
                        "tensor (numpy's same_kind casting rule)")
    if strided.has_internal_overlap(out):
        raise ValueError(f"{name}: cannot write into a broadcast view (several indices share "
                         "one element); make it contiguous() first")
    return out


# ---------------------------------------------------------------- binary ops


def binary(op: BinaryOp | str, a: object, b: object, out: Tensor | None = None) -> Tensor:
    """Runs the binary op `op` (an entry of BINARY, or its name) on `a` and `b` with
    broadcasting and type promotion; with `out`, writes there (in-place operators pass the
    left operand)."""
    if isinstance(op, str):
        op = BINARY[op]
    if type(a) is Tensor and type(b) is Tensor and out is None \
            and a.dtype.kind != "c" and b.dtype.kind != "c":
        # the common case first (two real tensors, a new result): no other test applies
        result = dispatch((op, STRICT_BLOCK.get()), (a, b), lambda: _binary(op, a, b, None))
        if a.requires_grad or b.requires_grad:
            if needs_grad(a, b):
                return record_binary(op.name, result, a, b, op.backward)
        return result
    if isinstance(a, Traced) or isinstance(b, Traced):  # pk.fuse is tracing
        return traced_operand(a, b).fuse_binary(op, a, b, out)  # type: ignore[union-attr]
    if pr.is_complex_operand(a) or pr.is_complex_operand(b) or \
            pr.is_complex_operand(out):
        return complex_elementwise.binary(op.name, a, b, out)
    if out is not None:
        return _binary_into(op, a, b, out)
    ta, tb = type(a), type(b)
    if ta is Tensor and tb is Tensor:  # the dtypes decide the promotion
        result = dispatch((op, STRICT_BLOCK.get()), (a, b), lambda: _binary(op, a, b, None))
    elif ta is Tensor and (tb is float or tb is int) and a.dtype.is_float and op is not POW:
        result = _with_constant(op, a, scalar_constant(b, a.dtype), a.dtype)  # t * 2.0
    elif tb is Tensor and (ta is float or ta is int) and b.dtype.is_float and op is not POW:
        result = _with_constant(op, scalar_constant(a, b.dtype), b, b.dtype)  # 2.0 * t
    else:
        result = _binary_with_scalars(op, a, b)
    return record_binary(op.name, result, a, b, op.backward) if needs_grad(a, b) \
        else result


def _binary_into(op: BinaryOp, a: object, b: object, out: Tensor) -> Tensor:
    """`op(a, b, out=out)` and the in-place operators (out is `a`): recorded as `_unary_into`."""
    if isinstance(out, Tensor) and inplace.records_write(out, a, b):
        def value() -> Tensor:
            if op in (ADD, SUBTRACT):  # their backward keeps no operand
                result = binary(op, a, b)
            else:
                result = binary(op, _unaliased(a, out), _unaliased(b, out))
            _output(out, result.shape, result.dtype, op.name)
            return result
        return inplace.write(op.name + "_", out, value, from_target=out is a or out is b)
    ta, tb = type(a), type(b)
    if ta is Tensor and tb is Tensor and type(out) is Tensor:  # `a += b`, out=
        result = dispatch((op, "out", STRICT_BLOCK.get()), (a, b, out),
                          lambda: _binary(op, a, b, out))
    elif ta is Tensor and (tb is float or tb is int) and a.dtype.is_float and op is not POW \
            and type(out) is Tensor:  # `a *= 0.9`
        c = scalar_constant(b, a.dtype)
        result = dispatch((op, "out", a.dtype, STRICT_BLOCK.get()), (a, c, out),
                          lambda: _binary_promoted(op, a, c, a.dtype, out))
    else:
        result = _binary(op, a, b, out)
    bump(out)
    return result


def _unaliased(operand: object, out: Tensor) -> object:
    """`operand`, or a (recorded) copy of it where it shares `out`'s memory, for a recorded
    write into `out` computed from it (`y *= w`): the op's backward may keep the operand (w's
    gradient reads the old y), which the write then replaces; PyTorch keeps the original
    likewise."""
    if isinstance(operand, Tensor) and operand.buffer is out.buffer:
        return operand.clone()
    return operand


def _binary(op: BinaryOp, a: object, b: object, out: Tensor | None) -> Tensor:
    a, b, p = _promoted_operands(a, b)
    special = _special_case(op, a, b, p, out)
    if special is not None:
        return special
    return _binary_promoted(op, _operand(a, p, op.name), _operand(b, p, op.name), p, out)


def _binary_with_scalars(op: BinaryOp, a: object, b: object) -> Tensor:
    """`_binary` of operands that are not both tensors, through the plan of the tensors they
    become: a Python scalar is a constant tensor of the promoted dtype, so `t * 2.0` and
    `t * 3.0` share a plan (their values are operands, not part of the signature)."""
    a, b, p = _promoted_operands(a, b)
    special = _special_case(op, a, b, p, None)
    if special is not None:
        return special
    return _with_constant(op, _operand(a, p, op.name), _operand(b, p, op.name), p)


def _with_constant(op: BinaryOp, ta: Tensor, tb: Tensor, p: DType) -> Tensor:
    return dispatch((op, p, STRICT_BLOCK.get()), (ta, tb),
                    lambda: _binary_promoted(op, ta, tb, p, None))


def _special_case(op: BinaryOp, a: object, b: object, p: DType, out: Tensor | None
                  ) -> Tensor | None:
    """The result where a scalar operand's value decides it (numpy's shortcuts), else None."""
    special = _scalar_shortcut(op, a, b, p, out) if op is POW else None
    if special is None and op.beyond_range is not None and p.is_int:
        special = _out_of_range_comparison(op, a, b, p, out)
    return special


def _binary_promoted(op: BinaryOp, ta: Tensor, tb: Tensor, p: DType, out: Tensor | None
                     ) -> Tensor:
    """`op` on tensor operands whose values are converted to `p` before it."""
    plan = op.plan(p)
    shape = strided.broadcast_shapes(ta.shape, tb.shape)
    out = _output(out, shape, plan.result, op.name)
    launch(binary_kernel, [ta.broadcast_to(shape), tb.broadcast_to(shape)], out, plan.fn,
           plan.compute)
    return out


def _promoted_operands(a: object, b: object) -> tuple[object, object, DType]:
    """Both operands as tensors, except Python scalars (weak: they stay numbers until their
    dtype is known), and the dtype they promote to."""
    if pr.is_python_scalar(a) and pr.is_python_scalar(b):
        a = asarray(a)  # two Python scalars: the first at its default dtype
    a_scalar, b_scalar = pr.is_python_scalar(a), pr.is_python_scalar(b)
    if not a_scalar:
        a = as_tensor(a)
    if not b_scalar:
        b = as_tensor(b)
    if a_scalar:
        return a, b, pr.dtype_with_scalar(b.dtype, a)  # type: ignore[union-attr]
    if b_scalar:
        return a, b, pr.dtype_with_scalar(a.dtype, b)  # type: ignore[union-attr]
    return a, b, pr.promote_types(a.dtype, b.dtype)  # type: ignore[union-attr]


def _operand(x: object, p: DType, name: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    pr.check_number(x)
    if isinstance(x, int) and not isinstance(x, bool) and p.is_int:
        pr.check_scalar_fits(x, p)
    return scalar_constant(x, p) if type(x) is float or type(x) is int else constant(x, p)


_SQUARE, _POSITIVE, _SQRT, _RECIPROCAL = (UNARY[n] for n in ("square", "positive", "sqrt",
                                                             "reciprocal"))


def _scalar_shortcut(op: BinaryOp, a: object, b: object, p: DType, out: Tensor | None
                     ) -> Tensor | None:
    """numpy's fast paths for `x ** scalar` (exact in every float type):
    ** 2 squares, ** 0.5 is sqrt, ** 1 copies, ** -1 is the reciprocal, ** 0 gives ones.
    Integers to negative integer powers raise ValueError, as in numpy."""
    if not pr.is_python_scalar(b) or not isinstance(a, Tensor) or p == dt.bool_:
        return None
    if p.is_int and isinstance(b, int) and b < 0:
        raise ValueError("integers to negative integer powers are not allowed")
    x = a if a.dtype == p else astype(a, p)
    if b == 2:
        return unary(_SQUARE, x, out)
    if b == 1:
        return unary(_POSITIVE, x, out)
    if p.is_float and b == 0.5:
        return unary(_SQRT, x, out)
    if p.is_float and b == -1:
        return unary(_RECIPROCAL, x, out)
    if b == 0:
        res = _output(out, x.shape, p, op.name)
        assign(res, 1)
        return res
    return None


def _out_of_range_comparison(op: BinaryOp, a: object, b: object, p: DType, out: Tensor | None
                             ) -> Tensor | None:
    """`i8_tensor < 1000`: an int scalar beyond the integer dtype's range compares the same
    with every element (`binary_ops.beyond_range`), so the result is a fill."""
    decided = beyond_range(op, a, b, p)
    if decided is None:
        return None
    tensor, truth = decided
    res = _output(out, tensor.shape, dt.bool_, op.name)  # type: ignore[union-attr]
    assign(res, truth)
    return res


# ---------------------------------------------------------------- ternary ops


def where(condition: object, x1: object, x2: object) -> Tensor:
    """Elements of `x1` where `condition` is true, else of `x2` (broadcast together; the result
    dtype promotes `x1` and `x2`)."""
    if (traced := traced_operand(condition, x1, x2)) is not None:  # pk.fuse is tracing
        return traced.fuse_where(condition, x1, x2)
    c = as_tensor(condition)
    p = pr.result_type(*(v for v in (x1, x2)))
    if p.is_complex:  # both parts chosen by the same condition
        z1, z2 = (complex_elementwise.complex_tensor(v, p) for v in (x1, x2))
        shape = strided.broadcast_shapes(c.shape, z1.shape, z2.shape)
        parts = [view_as_real(z.broadcast_to(shape)) for z in (z1, z2)]
        return view_as_complex(where(c.broadcast_to(shape)[..., None], *parts))
    t1, t2 = _operand(as_strong(x1), p, "where"), _operand(as_strong(x2), p, "where")
    # through the plan of the three tensors, as a binary op goes: a scalar is a constant
    # operand, so where(c, x, 0.0) and where(c, x, 1.0) share one
    return dispatch((where_f, p, STRICT_BLOCK.get()), (c, t1, t2),
                    lambda: _where(c, t1, t2, p))


def _where(c: Tensor, t1: Tensor, t2: Tensor, p: DType) -> Tensor:
    shape = strided.broadcast_shapes(c.shape, t1.shape, t2.shape)
    out = empty(shape, p)
    launch(ternary_kernel, [c.broadcast_to(shape), t1.broadcast_to(shape),
                            t2.broadcast_to(shape)], out, where_f, dt.bool_, pr.compute_dtype(p))
    return out


def _where_backward(forward: Callable[..., Tensor], condition: object, x1: object,
                    x2: object) -> Tensor:
    """where recorded: g goes to x1 where the condition holds, to x2 elsewhere (any dtype: g
    is chosen as the values are)."""
    if not needs_grad(x1, x2, complex_ok=True) or \
            traced_operand(condition, x1, x2) is not None:
        return forward(condition, x1, x2)
    c, a, b = condition, x1, x2
    with no_grad():
        out = forward(c, a, b)
    return record("where", out, (c, a, b),
                  lambda g: (None, where(c, g, 0.0), where(c, 0.0, g)))


where = declare(where, "ternary", grad="rule", backward=_where_backward, complex_grad=True,
                builtin=bi.select, exports=("pk", "array_api"),
                aliases=torch_names("where", "aten::where.self", numpy="where",
                                    array_api="where"))


def as_strong(x: object) -> object:
    return x if pr.is_python_scalar(x) else as_tensor(x)


def _bounds_in_range(d: dt.DType, lo: object, hi: object) -> tuple[object, object]:
    """Python int bounds of an integer x that lie beyond its dtype on their own side clip
    nothing (None), as numpy takes them; on the other side they stay (an OverflowError)."""
    if d.is_int:
        info = np.iinfo(d.numpy)
        least, most = int(info.min), int(info.max)
        if type(lo) is int and lo < least:
            lo = None
        if type(hi) is int and hi > most:
            hi = None
    return lo, hi


def clip(x: object, min: object = None, max: object = None) -> Tensor:  # noqa: A002
    """`x` limited to [min, max] (either may be None; tensors broadcast). nan stays nan; where
    min > max the result is max, as numpy."""
    if (traced := traced_operand(x, min, max)) is not None:  # pk.fuse is tracing
        return traced.fuse_clip(x, min, max)
    x = as_tensor(x)
    if any(pr.is_complex_operand(v) for v in (x, min, max)):
        raise complex_elementwise.not_defined("clip", x.dtype if x.dtype.is_complex
                                              else dt.c64)
    min, max = _bounds_in_range(x.dtype, min, max)  # noqa: A001
    if min is None and max is None:
        return x.copy()
    if min is None:
        return binary(MINIMUM, x, max)
    if max is None:
        return binary(MAXIMUM, x, min)
    p = pr.result_type(x, min, max)
    if p == dt.bool_:
        raise TypeError("clip is not supported for bool tensors")
    lo = _operand(as_strong(min), p, "clip")
    hi = _operand(as_strong(max), p, "clip")
    shape = strided.broadcast_shapes(x.shape, lo.shape, hi.shape)
    ct = pr.compute_dtype(p)
    out = empty(shape, p)
    launch(ternary_kernel, [x.broadcast_to(shape), lo.broadcast_to(shape),
                            hi.broadcast_to(shape)], out, clip_f, ct, ct)
    return out


def _clip_composite(forward: Callable[..., Tensor], x: object, min: object = None,  # noqa: A002
                    max: object = None) -> Tensor:  # noqa: A002
    """clip differentiated as maximum and minimum."""
    if traced_operand(x, min, max) is not None:
        return forward(x, min, max)
    out = x
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out  # type: ignore[return-value]


clip = declare(clip, "ternary", grad="composite", backward=_clip_composite, builtin=bi.clamp,
               exports=("pk", "array_api"),
               samples={"shapes": ((3, 4),), "calls": ({"min": -0.5, "max": 0.5}, {"max": 1.0})},
               aliases=torch_names(
                   "clamp", "aten::clamp", "aten::clamp.Tensor", numpy="clip", array_api="clip"))


# ---------------------------------------------------------------- copies and assignment


def astype(x: object, dtype: object, copy: bool = True) -> Tensor:
    """`x` converted to `dtype` in a new row-major tensor (`copy=False`: `x` itself when the
    dtype already matches). Float to int truncates toward 0 (out-of-range values saturate,
    nan gives 0); to bool is `x != 0`."""
    if isinstance(x, Traced):  # pk.fuse is tracing
        return x.fuse_astype(dtype, copy)
    x = as_tensor(x)
    d = dt.as_dtype(dtype)
    if d == x.dtype and not copy:
        return x
    if d.is_complex or x.dtype.is_complex:  # copies of the parts
        if needs_grad(x, complex_ok=True):
            with no_grad():
                out = astype(x, d)
            return record_cast(out, x)
        return cc.to_complex(x, d, assign) if d.is_complex else cc.complex_to_real(x, d)
    out = dispatch(("astype", d, STRICT_BLOCK.get()), (x,), lambda: _astype(x, d))
    return record_cast(out, x) if x.requires_grad else out


def _astype(x: Tensor, d: DType) -> Tensor:
    out = empty(x.shape, d)
    launch(unary_kernel, [x], out, copy_f, d)
    return out


astype = declare(astype, "cast", grad="linear", exports=("pk",),
                 aliases=torch_names("Tensor.to", "aten::_to_copy", numpy="astype"))


def assign(target: Tensor, value: object) -> None:
    """`target[...] = value`: a scalar or a tensor broadcast to `target`'s shape, converted to
    its dtype (numpy's unsafe casting, as numpy's setitem)."""
    if strided.has_internal_overlap(target):
        raise ValueError("cannot assign into a broadcast view (several indices share one "
                         "element)")
    if target.dtype.is_complex:
        cc.assign_complex(target, value, assign)
        bump(target)
        return
    if pr.is_complex_operand(value):
        cc.assign_real_from_complex(target, value, assign)
        return
    if pr.is_python_scalar(value):
        pr.check_number(value)
        if target.dtype.is_int and isinstance(value, int):
            pr.check_scalar_fits(value, target.dtype)
        src = constant(value, target.dtype)
    else:
        src = as_tensor(value)
    try:
        src = src.broadcast_to(target.shape)
    except ValueError:
        raise ValueError(f"could not broadcast a value of shape {src.shape} into the indexed "
                         f"shape {target.shape}") from None
    launch(unary_kernel, [src], target, copy_f, target.dtype)
    bump(target)


def copy_into(dst: Tensor, src: Tensor) -> bool:
    """`dst[...] = src` for tensors of one shape and dtype on one device, queued like a launch:
    a plain buffer copy where both are contiguous (True; the caller bumps `dst`'s version
    where autograd should see the write), else the assignment, without grad (False)."""
    if dst.is_contiguous and src.is_contiguous:
        size = dst.dtype.itemsize
        src.device.copy_buffer(src.buffer, src.offset * size, dst.buffer,  # type: ignore
                               dst.offset * size, dst.nbytes)
        return True
    with no_grad():
        dst[...] = src
    return False


# ---------------------------------------------------------------- the public functions


def _unary_function(op: UnaryOp) -> Callable[..., Tensor]:
    def fn(x: object, /, *, out: Tensor | None = None) -> Tensor:
        if out is None:  # the methods' fast path (`x.exp()`), where its plan exists
            result = replay_unary(Tensor, x, op)
            if result is not None:
                return result
        return unary(op, x, out)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise {op.doc} (a new tensor, or `out`)."
    return bind(op.name, fn)


def _binary_function(op: BinaryOp) -> Callable[..., Tensor]:
    def fn(x1: object, x2: object, /, *, out: Tensor | None = None) -> Tensor:
        return binary(op, x1, x2, out)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = op.doc
    return bind(op.name, fn)


negative = _unary_function(UNARY["negative"])
positive = _unary_function(UNARY["positive"])
abs = _unary_function(UNARY["abs"])  # noqa: A001
square = _unary_function(UNARY["square"])
sign = _unary_function(UNARY["sign"])
relu = _unary_function(UNARY["relu"])
reciprocal = _unary_function(UNARY["reciprocal"])
sqrt = _unary_function(UNARY["sqrt"])
rsqrt = _unary_function(UNARY["rsqrt"])
exp = _unary_function(UNARY["exp"])
exp2 = _unary_function(UNARY["exp2"])
expm1 = _unary_function(UNARY["expm1"])
log = _unary_function(UNARY["log"])
log2 = _unary_function(UNARY["log2"])
log10 = _unary_function(UNARY["log10"])
log1p = _unary_function(UNARY["log1p"])
sin = _unary_function(UNARY["sin"])
cos = _unary_function(UNARY["cos"])
tan = _unary_function(UNARY["tan"])
asin = _unary_function(UNARY["asin"])
acos = _unary_function(UNARY["acos"])
atan = _unary_function(UNARY["atan"])
sinh = _unary_function(UNARY["sinh"])
cosh = _unary_function(UNARY["cosh"])
tanh = _unary_function(UNARY["tanh"])
asinh = _unary_function(UNARY["asinh"])
acosh = _unary_function(UNARY["acosh"])
atanh = _unary_function(UNARY["atanh"])
erf = _unary_function(UNARY["erf"])
sigmoid = _unary_function(UNARY["sigmoid"])
silu = _unary_function(UNARY["silu"])
floor = _unary_function(UNARY["floor"])
ceil = _unary_function(UNARY["ceil"])
trunc = _unary_function(UNARY["trunc"])
round = _unary_function(UNARY["round"])  # noqa: A001
isnan = _unary_function(UNARY["isnan"])
isinf = _unary_function(UNARY["isinf"])
isfinite = _unary_function(UNARY["isfinite"])
signbit = _unary_function(UNARY["signbit"])
bitwise_invert = _unary_function(UNARY["bitwise_invert"])
logical_not = _unary_function(UNARY["logical_not"])


def gelu(x: object, /, *, approximate: str = "none", out: Tensor | None = None) -> Tensor:
    """GELU: x * Phi(x) with the exact erf form, or approximate='tanh' for
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    return unary(UNARY["gelu"] if approximate == "none" else GELU_TANH, x, out)


bind("gelu", gelu)


add = _binary_function(BINARY["add"])
subtract = _binary_function(BINARY["subtract"])
multiply = _binary_function(BINARY["multiply"])
divide = _binary_function(BINARY["divide"])
floor_divide = _binary_function(BINARY["floor_divide"])
remainder = _binary_function(BINARY["remainder"])
pow = _binary_function(BINARY["pow"])  # noqa: A001
maximum = _binary_function(BINARY["maximum"])
minimum = _binary_function(BINARY["minimum"])
equal = _binary_function(BINARY["equal"])
not_equal = _binary_function(BINARY["not_equal"])
less = _binary_function(BINARY["less"])
less_equal = _binary_function(BINARY["less_equal"])
greater = _binary_function(BINARY["greater"])
greater_equal = _binary_function(BINARY["greater_equal"])
bitwise_and = _binary_function(BINARY["bitwise_and"])
bitwise_or = _binary_function(BINARY["bitwise_or"])
bitwise_xor = _binary_function(BINARY["bitwise_xor"])
bitwise_left_shift = _binary_function(BINARY["bitwise_left_shift"])
bitwise_right_shift = _binary_function(BINARY["bitwise_right_shift"])
atan2 = _binary_function(BINARY["atan2"])
hypot = _binary_function(BINARY["hypot"])
copysign = _binary_function(BINARY["copysign"])
nextafter = _binary_function(BINARY["nextafter"])
logaddexp = _binary_function(BINARY["logaddexp"])
logical_and = _binary_function(BINARY["logical_and"])
logical_or = _binary_function(BINARY["logical_or"])
gelu_backward = _binary_function(GELU_GRAD)
silu_backward = _binary_function(SILU_GRAD)
relu_backward = _binary_function(RELU_GRAD)
logical_xor = _binary_function(BINARY["logical_xor"])
