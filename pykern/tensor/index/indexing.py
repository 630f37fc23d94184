"""Indexing ops: `concat`, `stack`, `take`, `take_along_axis`, `scatter_add`.

All of them read their operands through strides (views, transposes and broadcasts work in
place) and write a new row-major result. Index arrays may have any integer dtype. Indices that
live on the host (numpy arrays, lists) are range-checked before anything is uploaded and raise
IndexError as numpy does; a device tensor's indices are not read back (that would wait for the
device), so out-of-range values there are clipped (`take`, `take_along_axis`) or skipped
(`scatter_add`), as documented per op.
"""

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import pykern as pk

from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad
from pykern.ops.public import declare, torch_names
from pykern.tensor.index import gather_backward
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.core.checks import check_dtype_in
from pykern.tensor.complex import complex_layout
from pykern.tensor.core.device_limits import loop_budget
from pykern.tensor.elementwise.functions import as_tensor, assign
from pykern.tensor.core.promotion import INTS as INDEX_DTYPES, accumulator, promote
from pykern.tensor.core.strided import (batch_pieces, broadcast_shapes, broadcast_strides, collapse,
                                   prod, view)
from pykern.tensor.core.tensor import normalize_axis
from pykern.tensor.core.tensor import asarray

ATOMIC_ADD_DTYPES = (dt.i32, dt.u32, dt.i64, dt.u64, dt.f32)


# ---------------------------------------------------------------- concat and stack

def _tensor_list(tensors: object, op: str) -> list[Tensor]:
    if isinstance(tensors, (Tensor, np.ndarray)) or not isinstance(tensors, Sequence):
        raise TypeError(f"{op}: expected a sequence of tensors, got {type(tensors).__name__}")
    if len(tensors) == 0:
        raise ValueError(f"{op}: needs at least one tensor")
    return [as_tensor(t, f"{op}: tensors[{i}]") for i, t in enumerate(tensors)]


def concat(tensors: Sequence[object], axis: int | None = 0) -> Tensor:
    """Joins tensors along an existing axis (numpy's `concatenate`, the array API's `concat`).
    Shapes must match except along `axis`; `axis=None` flattens every tensor first. The result
    has the promoted dtype of all inputs. Every dtype.

        pk.concat([a, b], axis=1)
    """
    op = "concat"
    if complex_layout.any_complex(*tensors):  # real ops on part views (they differentiate)
        return complex_layout.concat(_tensor_list(tensors, op), axis)
    ts = _tensor_list(tensors, op)
    out_dtype = promote(*(t.dtype for t in ts))
    if axis is None:
        out = empty((sum(t.size for t in ts),), out_dtype)
        start = 0
        for t in ts:
            if t.size:
                dst = view(out, t.shape, _row_major(t.shape), out.offset + start)
                assign(dst, t)
            start += t.size
        return out
    first = ts[0]
    if first.ndim == 0:
        raise ValueError(f"{op}: 0-d tensors cannot be concatenated (use stack)")
    axis = normalize_axis(axis, first.ndim, op=op)
    for i, t in enumerate(ts):
        if t.ndim != first.ndim:
            raise ValueError(f"{op}: all tensors must have the same number of dimensions; "
                             f"tensors[0] has {first.ndim}, tensors[{i}] has {t.ndim}")
        if t.shape[:axis] + t.shape[axis + 1:] != first.shape[:axis] + first.shape[axis + 1:]:
            raise ValueError(f"{op}: shapes must match except along axis {axis}; tensors[0] is "
                             f"{first.shape}, tensors[{i}] is {t.shape}")
    total = sum(t.shape[axis] for t in ts)
    out = empty(first.shape[:axis] + (total,) + first.shape[axis + 1:], out_dtype)
    start = 0
    st = out.element_strides
    for t in ts:
        if t.size:
            assign(view(out, t.shape, st, out.offset + start * st[axis]), t)
        start += t.shape[axis]
    return out


def stack(tensors: Sequence[object], axis: int = 0) -> Tensor:
    """Joins tensors of one shape along a new axis (numpy's `stack`); `axis` may be -(ndim+1)
    to ndim. The result has the promoted dtype of all inputs. Every dtype.

        pk.stack([a, b, c], axis=-1)
    """
    op = "stack"
    if complex_layout.any_complex(*tensors):  # real ops on part views (they differentiate)
        return complex_layout.stack(_tensor_list(tensors, op), axis)
    ts = _tensor_list(tensors, op)
    shape = ts[0].shape
    for i, t in enumerate(ts):
        if t.shape != shape:
            raise ValueError(f"{op}: all tensors must have the same shape; tensors[0] is "
                             f"{shape}, tensors[{i}] is {t.shape}")
    axis = normalize_axis(axis, len(shape) + 1, op=op)
    out_dtype = promote(*(t.dtype for t in ts))
    out = empty(shape[:axis] + (len(ts),) + shape[axis:], out_dtype)
    st = out.element_strides
    sub = st[:axis] + st[axis + 1:]
    for i, t in enumerate(ts):
        assign(view(out, shape, sub, out.offset + i * st[axis]), t)
    return out


def _concat_backward(forward: Callable[..., Tensor], tensors: Sequence[object],
                     axis: int | None = 0) -> Tensor:
    """concat recorded: g cut back into the inputs' pieces along the axis."""
    if complex_layout.any_complex(*tensors):  # real ops on part views (they differentiate)
        return forward(tensors, axis)
    if axis is None:
        return _concat_backward(forward, [as_tensor(t).reshape(-1) for t in tensors], 0)
    ts = [as_tensor(t) for t in tensors]
    with no_grad():
        out = forward(ts, axis)
    ax = axis + out.ndim if axis < 0 else axis

    def back(g: Any) -> tuple[Any, ...]:
        grads, start = [], 0
        for t in ts:
            key = (slice(None),) * ax + (slice(start, start + t.shape[ax]),)
            grads.append(g[key])
            start += t.shape[ax]
        return tuple(grads)

    return record("concat", out, ts, back)


def _stack_composite(forward: Callable[..., Tensor], tensors: Sequence[object],
                     axis: int = 0) -> Tensor:
    """stack differentiated as the concat of the tensors each with a new axis."""
    if complex_layout.any_complex(*tensors):  # real ops on part views (they differentiate)
        return forward(tensors, axis)
    return concat([as_tensor(t).unsqueeze(axis) for t in tensors], axis)


concat = declare(concat, "index", grad="rule", backward=_concat_backward, complex_grad=True,
                 samples={"shapes": ((2, 3), (4, 3)), "sequence": True,
                          "calls": ({"axis": 0}, {"axis": None})},
                 exports=("pk", "array_api"), aliases=torch_names(
                     "cat", "aten::cat", numpy=("concatenate", "concat"), array_api="concat"))
stack = declare(stack, "index", grad="composite", backward=_stack_composite, complex_grad=True,
                samples={"shapes": ((2, 3), (2, 3)), "sequence": True,
                         "calls": ({"axis": 0}, {"axis": 2})},
                exports=("pk", "array_api"), aliases=torch_names(
                    "stack", "aten::stack", numpy="stack", array_api="stack"))


def _row_major(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


# ---------------------------------------------------------------- take

def _index_tensor(indices: object, op: str, bound: int | None, what: str = "indices",
                  negative_ok: bool = True) -> Tensor:
    """Indices as a tensor; host data is range-checked against `bound` (IndexError)."""
    if isinstance(indices, Tensor):
        check_dtype_in(indices, INDEX_DTYPES, op, what)
        return indices
    arr = np.asarray(indices)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int32)
        else:
            raise TypeError(f"{op}: {what} must be integers, got dtype {arr.dtype}")
    if bound is not None and arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if hi >= bound or lo < (-bound if negative_ok else 0):
            bad = hi if hi >= bound else lo
            raise IndexError(f"{op}: index {bad} is out of bounds for an axis of size {bound}")
    if arr.dtype == np.int64 and arr.size and arr.min() >= -2**31 and arr.max() < 2**31:
        arr = arr.astype(np.int32)
    t = asarray(arr)
    return t if t.shape == arr.shape else view(t, arr.shape, _row_major(arr.shape))


def take(x: object, indices: object, axis: int | None = None) -> Tensor:
    """Elements of `x` at `indices` along `axis` (numpy's `take`; `axis=None` indexes the
    flattened tensor). The result has shape x.shape[:axis] + indices.shape +
    x.shape[axis+1:] and x's dtype. Negative indices count from the end. Host indices out of
    range raise IndexError; a device tensor's out-of-range indices are clipped to the axis.
    Every dtype for x, every integer dtype for indices.

        rows = pk.take(table, ids, axis=0)
    """
    op = "take"
    x = as_tensor(x, f"{op}: x")
    if x.dtype.is_complex:  # a real take of the part view (it differentiates)
        return complex_layout.take(x, indices, axis)
    if type(indices) is Tensor and type(axis) in (int, type(None)):  # device indices: a plan
        return dispatch((op, axis), (x, indices), lambda: _take_run(x, indices, axis))
    return _take_run(x, indices, axis)


def _take_run(x: Tensor, indices: object, axis: int | None) -> Tensor:
    op = "take"
    x, axis = _gather_source(x, axis, op)
    n = x.shape[axis]
    ind = _index_tensor(indices, op, n)
    pre, post = x.shape[:axis], x.shape[axis + 1:]
    out = empty(pre + ind.shape + post, x.dtype)
    if out.size == 0:
        return out
    if n == 0:
        raise IndexError(f"{op}: cannot take from an empty axis")
    ishape, (istr,) = collapse(ind.shape, [ind.element_strides])
    if len(ishape) > 1:
        ind = ind.contiguous()
        istr = (1,)
    nidx = ind.size
    iv = view(ind, (nidx,), istr[-1:] if istr else (1,))
    ost = out.element_strides
    o_pre, o_post = ost[:axis], ost[axis + ind.ndim:]
    o_idx = ost[axis + ind.ndim - 1] if ind.ndim else 1  # out is row-major: one stride
    x_pre, x_post = x.element_strides[:axis], x.element_strides[axis + 1:]
    host = pk.get_device().info.kind == "host"
    kern = _take_kernel(x.dtype, ind.dtype, host)
    one = [(0,), (0,)]
    for dp, spre, (xp, opre) in batch_pieces(pre or (1,), [x_pre, o_pre] if pre else one, 1):
        for dq, spost, (xq, opost) in batch_pieces(post or (1,), [x_post, o_post] if post
                                                   else one, 1):
            xv = view(x, spre + (n,) + spost, xp + (x.element_strides[axis],) + xq,
                      x.offset + dp[0] + dq[0])
            ov = view(out, spre + (nidx,) + spost, opre + (o_idx,) + opost,
                      out.offset + dp[1] + dq[1])
            kern[(nidx, spre[0]) if host else (spost[0], nidx, spre[0])](xv, iv, ov)
    return out


def _gather_source(x: Tensor, axis: int | None, op: str) -> tuple[Tensor, int]:
    """The tensor a gather along `axis` reads and that axis: for None, `x` flattened (a
    contiguous 1-D view) and 0."""
    if axis is None:
        return view(x.contiguous(), (x.size,), (1,)), 0
    if x.ndim == 0:
        raise ValueError(f"{op}: x is 0-d; use axis=None")
    return x, normalize_axis(axis, x.ndim, op=op)


def _take_backward(forward: Callable[..., Tensor], x: object, indices: object,
                   axis: int | None = None) -> Tensor:
    """take recorded: its gradient adds `g` back at the indices taken (scatter_add), so
    repeated indices accumulate."""
    return gather_backward.record_gather("take", forward, as_tensor(x, "take: x"), indices,
                                         axis, _take_gradient)


def _take_gradient(x: Tensor, idx: Tensor, ax: int) -> Callable[[Any], tuple[Any, None]]:
    def back(g: Any) -> tuple[Any, None]:
        # g has x's shape with axis `ax` replaced by idx's shape: gather it as one axis
        g2 = g.reshape(g.shape[:ax] + (idx.size,) + g.shape[ax + idx.ndim:])
        shape = [1] * g2.ndim
        shape[ax] = idx.size
        index = gather_backward.forward_index(idx.reshape(-1), x.shape[ax])
        index = index.reshape(tuple(shape)).broadcast_to(g2.shape)
        return pk.scatter_add(pk.zeros(x.shape, g.dtype), ax, index, g2), None

    return back


take = declare(take, "index", grad="rule", backward=_take_backward, complex_grad=True,
               exports=("pk", "array_api"),
               samples={"shapes": ((4, 5),), "calls": (
                   {"indices": [3, 0, 3, -1], "axis": 1}, {"indices": [[1, 2], [0, 0]], "axis": 0},
                   {"indices": [7, 2]})},
               aliases=torch_names("take", "aten::index_select", numpy="take", array_api="take"))


def _signed_index(d: DType) -> DType:
    """A signed type holding every index value of dtype `d` (for the negative-index wrap)."""
    return dt.i64 if d in (dt.u32, dt.i64, dt.u64) else dt.i32


@pk.func
def wrapped_index(k, n):
    """Index `k` of an axis of length `n`, a negative one counted from the end, clamped into
    the axis (a bad index reads an edge element, never outside the array)."""
    if k < 0:
        k += n
    return min(max(k, 0), n - 1)


@functools.lru_cache(maxsize=None)
def _take_kernel(x_dt: DType, i_dt: DType, host: bool = False) -> pk.Kernel:
    """out[p, j, q] = x[p, ind[j], q] (a negative index counts from the end): for a GPU an
    invocation per element; for the host device (`host`) one per row (p, j), its index read
    once and the row copied by a loop LLVM vectorises."""
    IT = _signed_index(i_dt)  # noqa: N806

    @pk.kernel
    def take3_rows(x: x_dt[:, :, :], ind: i_dt[:], out: x_dt[:, :, :]):
        j = pk.global_id(0)
        p = pk.global_id(1)
        k = wrapped_index(IT(ind[j]), x.shape[1])
        for q in range(out.shape[2]):
            out[p, j, q] = x[p, k, q]

    if host:
        return take3_rows

    @pk.kernel(workgroup=(16, 4, 1))
    def take3(x: x_dt[:, :, :], ind: i_dt[:], out: x_dt[:, :, :]):
        q = pk.global_id(0)
        j = pk.global_id(1)
        p = pk.global_id(2)
        k = wrapped_index(IT(ind[j]), x.shape[1])
        out[p, j, q] = x[p, k, q]

    return take3


def take_along_axis(x: object, indices: object, axis: int | None = -1) -> Tensor:
    """numpy's `take_along_axis`: out[..., j, ...] = x[..., indices[..., j, ...], ...] along
    `axis`; `indices` has x's number of dimensions and broadcasts with x in the others.
    `axis=None` works on the flattened x with 1-d indices. Negative indices count from the end;
    host indices out of range raise IndexError, a device tensor's are clipped. Every dtype for
    x, every integer dtype for indices. Pairs with `argsort`/`topk` indices.
    """
    op = "take_along_axis"
    x = as_tensor(x, f"{op}: x")
    if x.dtype.is_complex:  # a real gather of the part view (it differentiates)
        return complex_layout.take_along_axis(x, indices, axis)
    flat = axis is None
    x, axis = _gather_source(x, axis, op)
    ind = _index_tensor(indices, op, x.shape[axis])
    if flat and ind.ndim != 1:
        raise ValueError(f"{op}: with axis=None, indices must be 1-d, got shape {ind.shape}")
    if ind.ndim != x.ndim:
        raise ValueError(f"{op}: indices must have as many dimensions as x ({x.ndim}), got "
                         f"shape {ind.shape}")
    n = x.shape[axis]
    rest_x = x.shape[:axis] + x.shape[axis + 1:]
    rest_i = ind.shape[:axis] + ind.shape[axis + 1:]
    rest = broadcast_shapes(rest_x, rest_i, op=op)
    m = ind.shape[axis]
    out_shape = rest[:axis] + (m,) + rest[axis:]
    out = empty(out_shape, x.dtype)
    if out.size == 0:
        return out
    if n == 0:
        raise IndexError(f"{op}: cannot take from an empty axis")
    xs = broadcast_strides(rest, rest_x, x.element_strides[:axis] + x.element_strides[axis + 1:])
    is_ = broadcast_strides(rest, rest_i, ind.element_strides[:axis]
                            + ind.element_strides[axis + 1:])
    ost = out.element_strides
    os_ = ost[:axis] + ost[axis + 1:]
    kern = _along_kernel(x.dtype, ind.dtype)
    for deltas, shape, (sx, si, so) in batch_pieces(rest or (1,), [xs, is_, os_] if rest else
                                                    [(0,), (0,), (0,)], 3):
        xv = view(x, shape + (n,), sx + (x.element_strides[axis],), x.offset + deltas[0])
        iv = view(ind, shape + (m,), si + (ind.element_strides[axis],), ind.offset + deltas[1])
        ov = view(out, shape + (m,), so + (ost[axis],), out.offset + deltas[2])
        kern[m, prod(shape)](xv, iv, ov)
    return out


take_along_axis = declare(
    take_along_axis, "index", grad="rule", backward=gather_backward.take_along_axis,
    complex_grad=True, exports=("pk", "array_api"),
    samples={"shapes": ((3, 4),), "calls": (
        {"indices": np.array([[0, 3], [1, 1], [2, 0]]), "axis": 1},
        {"indices": np.array([[2, 0, 1, 1]]), "axis": 0})},
    aliases=torch_names(
        "take_along_dim", "aten::gather", numpy="take_along_axis",
        array_api="take_along_axis"))


@functools.lru_cache(maxsize=None)
def _along_kernel(x_dt: DType, i_dt: DType) -> pk.Kernel:
    IT = _signed_index(i_dt)  # noqa: N806
    @pk.kernel(workgroup=(16, 4, 1))
    def take_along4(x: x_dt[:, :, :, :], ind: i_dt[:, :, :, :], out: x_dt[:, :, :, :]):
        j = pk.global_id(0)
        r = pk.global_id(1)
        i0, i1, i2 = pk.unravel(r, out.shape[:3])
        n = x.shape[3]
        k: IT = ind[i0, i1, i2, j]
        if k < 0:
            k += n
        k = min(max(k, 0), n - 1)
        out[i0, i1, i2, j] = x[i0, i1, i2, k]

    return take_along4


# ---------------------------------------------------------------- scatter_add

def scatter_add(x: object, axis: int, index: object, src: object) -> Tensor:
    """PyTorch's `x.scatter_add(axis, index, src)` as a new tensor (x is left unchanged): a copy
    of x where, for every position p of `index`, out[p with p[axis] = index[p]] += src[p].
    `index` and `src` have x's number of dimensions; index.shape[d] <= src.shape[d] for every
    d and <= x.shape[d] for d != axis. src is converted to x's dtype.

    Dtypes: every numeric dtype and bool (bool adds as logical or). i32, u32, i64, u64 and f32
    use atomic adds (the order of float additions is unspecified); the others gather each
    output's contributions in index order. Host indices out of range raise IndexError; a
    device tensor's out-of-range (or negative) indices are skipped.

        counts = pk.scatter_add(pk.zeros(10, pk.i32), 0, labels, pk.ones_like(labels))
    """
    op = "scatter_add"
    x = as_tensor(x, f"{op}: x")
    if x.dtype.is_complex:  # a real scatter of the part views (it differentiates)
        return complex_layout.scatter_add(x, axis, index, src)
    src = as_tensor(src, f"{op}: src")
    if x.ndim == 0:
        raise ValueError(f"{op}: x is 0-d")
    axis = normalize_axis(axis, x.ndim, op=op)
    ind = _index_tensor(index, op, x.shape[axis], "index", negative_ok=False)
    if not (ind.ndim == src.ndim == x.ndim):
        raise ValueError(f"{op}: x, index and src must have the same number of dimensions, got "
                         f"{x.shape}, {ind.shape}, {src.shape}")
    for d in range(x.ndim):
        if ind.shape[d] > src.shape[d] or (d != axis and ind.shape[d] > x.shape[d]):
            raise ValueError(f"{op}: index shape {ind.shape} must not exceed src {src.shape} in "
                             f"any dimension, nor x {x.shape} outside axis {axis}")
    out = empty(x.shape, x.dtype)
    if out.size == 0:
        return out
    assign(out, x)
    if ind.size == 0:
        return out
    n, m = x.shape[axis], ind.shape[axis]
    rest = ind.shape[:axis] + ind.shape[axis + 1:]

    def others(t: Tensor) -> tuple[int, ...]:
        return t.element_strides[:axis] + t.element_strides[axis + 1:]

    strides = [others(out), others(ind), others(src)] if rest else [(0,), (0,), (0,)]
    atomic = x.dtype in ATOMIC_ADD_DTYPES
    budget = loop_budget()
    chunk = m if atomic or budget is None else max(budget // 2, 1)
    for deltas, shape, (so, si, ss) in batch_pieces(rest or (1,), strides, 3):
        ov = view(out, shape + (n,), so + (out.element_strides[axis],), out.offset + deltas[0])
        rows = prod(shape)
        for j0 in range(0, m, chunk):
            mj = min(chunk, m - j0)
            iv = view(ind, shape + (mj,), si + (ind.element_strides[axis],), ind.offset
                      + deltas[1] + j0 * ind.element_strides[axis])
            sv = view(src, shape + (mj,), ss + (src.element_strides[axis],), src.offset
                      + deltas[2] + j0 * src.element_strides[axis])
            if atomic:
                _scatter_atomic_kernel(x.dtype, ind.dtype, src.dtype)[mj, rows](ov, iv, sv)
            else:
                _scatter_gather_kernel(x.dtype, ind.dtype, src.dtype)[n, rows](ov, iv, sv)
    return out


def _scatter_add_reference(x: np.ndarray, axis: int, index: np.ndarray,
                           src: np.ndarray) -> np.ndarray:
    """scatter_add in numpy (the test matrix's reference): src's elements within index's shape
    added to x at the index along `axis` (repeats accumulate)."""
    out = x.copy()
    where = list(np.indices(index.shape))
    where[axis] = index
    np.add.at(out, tuple(where), src[tuple(slice(0, n) for n in index.shape)])
    return out


scatter_add = declare(scatter_add, "index", grad="rule", backward=gather_backward.scatter_add,
                      complex_grad=True, reference=_scatter_add_reference,
                      samples={"shapes": ((3, 4), ("src", (2, 4))), "calls": (
                          {"axis": 0, "index": np.array([[0, 2, 2, 1], [1, 1, 0, 2]])},
                          {"axis": 1, "index": np.array([[3, 3], [0, 1]])})},
                      aliases=torch_names("scatter_add", "aten::scatter_add"))


@functools.lru_cache(maxsize=None)
def _scatter_atomic_kernel(o_dt: DType, i_dt: DType, s_dt: DType) -> pk.Kernel:
    @pk.kernel(workgroup=(16, 4, 1))
    def scatter_add_atomic(out: o_dt[:, :, :, :], ind: i_dt[:, :, :, :],
                           src: s_dt[:, :, :, :]):
        j = pk.global_id(0)
        r = pk.global_id(1)
        i0, i1, i2 = pk.unravel(r, ind.shape[:3])
        k = ind[i0, i1, i2, j]
        if k >= 0 and k < out.shape[3]:
            pk.atomic_add(out, (i0, i1, i2, k), o_dt(src[i0, i1, i2, j]))

    return scatter_add_atomic


@functools.lru_cache(maxsize=None)
def _scatter_gather_kernel(o_dt: DType, i_dt: DType, s_dt: DType) -> pk.Kernel:
    ACC = accumulator(o_dt)  # noqa: N806

    @pk.kernel(workgroup=(16, 4, 1))
    def scatter_add_gather(out: o_dt[:, :, :, :], ind: i_dt[:, :, :, :],
                           src: s_dt[:, :, :, :]):
        t = pk.global_id(0)  # the output position along the axis
        r = pk.global_id(1)
        i0, i1, i2 = pk.unravel(r, ind.shape[:3])
        acc: ACC = ACC(out[i0, i1, i2, t])
        hit = False
        for j in range(ind.shape[3]):
            if ind[i0, i1, i2, j] == t:
                acc += ACC(o_dt(src[i0, i1, i2, j]))
                hit = True
        if hit:
            out[i0, i1, i2, t] = acc

    return scatter_add_gather
