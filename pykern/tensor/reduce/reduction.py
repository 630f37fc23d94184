"""Reductions: `sum prod mean var std max min argmax argmin any all`, over any axes.

One generic `@pk.kernel` (made per accumulator dtype) does them all. The reduced axes are
moved innermost by a transposed view, so the problem is `n_out` outputs of `n_red` elements,
element `r` of output `o` being flat element `o * n_red + r` of that view (read through its
strides: flat, 2-D [n_out, n_red] when kept and reduced dimensions each merge into one, else
4-D). In "group" mode a workgroup (of 64 invocations by default: `config("reduce")`) reduces
a chunk of up to 256 elements per invocation of one output (each invocation a strided share,
then a tree in shared memory); when an output spans several chunks, the per-chunk partials are
reduced again by the same kernel (reading partial values, and partial indices for
argmax/argmin). In "thread" mode, for short reductions over many outputs and for reduced axes
that are strided in memory (column sums), each invocation reduces a chunk of 64 to 2,048
elements of one output alone (sized so that a launch has about 131,072 invocations),
neighbouring invocations taking neighbouring outputs so that their reads coalesce. var/std take
two passes (the mean, then the squared deviations from it).

Result dtypes (the array API's): sum/prod of bool and signed ints accumulate and return the
default integer dtype i32 (i64 stays i64), of unsigned ints u32 (u64 stays u64), of floats their
own dtype (f16 accumulates in f32); `dtype=` overrides. Integer means sum exactly in 64 bits.
mean/var/std return the float dtype, f32 for integer and bool input. max/min keep the dtype;
argmax/argmin return i64; any/all bool.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pykern as pk
from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad
from pykern.lang import builtins as bi
from pykern.ops.public import declare, torch_names
from pykern.tensor.reduce import reduction_backward
from pykern.tensor.reduce.reduction_backward import (record_reduction, reduced_axes,
                                                    with_reduced_axes)

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.tensor import Tensor, empty, normalize_axis
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.complex import complex_reduction
from pykern.tensor.complex.complex_elementwise import not_defined
from pykern.tensor.core import promotion as pr
from pykern.tensor.reduce import reduction_host
from pykern.tensor.core import strided
from pykern.tensor.create.creation import fill
from pykern.ops.choice import config, device_info, on_host, tune
from pykern.ops.public import internal
from pykern.ops.registry import Impl, always

# The kernels of one reduction stage, in the order tried: the host's (`reduction_host`, whose
# `mode_for` says which of its two fits the stage), else the portable kernel of this module
# (`kernel` None), which plans its own mode (`_plan`).
REDUCE = internal(
    "reduce", "reduction", "One stage of a reduction: outputs of a chunk of elements each.",
    Impl("host rows", lambda info, op, x, layout: on_host(info)
         and reduction_host.mode_for(op, x, layout) == "rows",
         "the host: lanes of partial results along a contiguous reduced axis, for LLVM's "
         "vectorisers", kernel="rows"),
    Impl("host columns", lambda info, op, x, layout: on_host(info)
         and reduction_host.mode_for(op, x, layout) == "columns",
         "the host: a lane per output along a strided reduced axis (column sums)",
         kernel="columns"),
    Impl("portable", always, "a workgroup per chunk of one output with a tree in shared "
         "memory, or an invocation per chunk for many short or strided outputs"))


def _reduce_config(info: object) -> dict[str, int]:
    """The portable kernel's sizes: `wg` invocations per workgroup in group mode, each
    reducing `group_share` elements at most; in thread mode `thread_chunk` elements per
    invocation at most, and `thread_target` invocations a launch aims for (enough to fill a
    large GPU). The host kernels' are `reduction_host.sizes`."""
    return {"wg": 64, "group_share": 256, "thread_chunk": 2048, "thread_target": 1 << 17,
            **reduction_host.sizes(info)}


tune("reduce", _reduce_config)

Axis = int | Sequence[int] | None


@pk.func
def load(x, o, r, base, layout):
    """Element r of output o: x[base + r] of a flat view, x[o, r] of a 2-D one, or flat element
    base + r (row-major) of a 4-D one."""
    if layout == "flat":
        return x[base + r]
    elif layout == "2d":
        return x[o, r]
    else:
        return x[pk.unravel(base + r, x.shape)]


@pk.func
def combine(a, b, op):
    """Two partial results of `op` merged."""
    if op == "sum" or op == "sqdev":
        return a + b
    elif op == "prod":
        return a * b
    elif op == "max":
        return pk.select(a != a, a, pk.select(a >= b, a, b))
    elif op == "min":
        return pk.select(a != a, a, pk.select(a <= b, a, b))
    elif op == "any":
        return a | b
    else:  # "all"
        return a & b


@pk.func
def takes_over(b, bi, a, ai, op):
    """For argmax/argmin: whether (b, bi) replaces (a, ai): a better value, or an equal one
    at a lower index; nan counts as the best (numpy returns the first nan)."""
    b_nan = b != b
    a_nan = a != a
    if op == "argmax":
        better = b > a
    else:
        better = b < a
    tie = (b == a) or (b_nan and a_nan)
    return (b_nan and not a_nan) or (not a_nan and better) or (tie and bi < ai)


@functools.cache
def chunk_functions(wg: int, chunk: int) -> tuple[pk.Func, pk.Func]:
    """The portable kernel's split of the work and its merge in shared memory, for workgroups
    of `wg` invocations and chunks of `chunk` elements in group mode.

    `chunk_of(n_red, n_chunks, t_chunk, mode)`: (o, start, stop, t, step), this invocation's
    output o, its chunk [start, stop) of the reduced elements, its first element start + t and
    its stride. `merge_tree(vals, idxs, t, op)`: the workgroup's partial results (and argmax's
    or argmin's indices) in shared memory merged into vals[0] (idxs[0]), halving each step."""
    WG, CHUNK = wg, chunk  # noqa: N806

    @pk.func
    def chunk_of(n_red, n_chunks, t_chunk, mode):
        if mode == "thread":
            # invocation g: output o = g % n_out, chunk c = g // n_out — neighbours take
            # neighbouring outputs, so reading along a strided reduced axis stays coalesced
            g = pk.global_id(0)
            n_out = pk.grid(0) // n_chunks
            o = g % n_out
            start = (g // n_out) * t_chunk
            stop = pk.select(start + t_chunk < n_red, start + t_chunk, n_red)
            t = 0
            step = 1
        else:
            g = pk.group_id(0)
            o = g // n_chunks
            start = (g % n_chunks) * CHUNK
            stop = pk.select(start + CHUNK < n_red, start + CHUNK, n_red)
            t = pk.local_id(0)
            step = WG
        return o, start, stop, t, step

    @pk.func
    def merge_tree(vals, idxs, t, op):
        pk.barrier()
        s = WG // 2
        while s > 0:
            if t < s:
                if op == "argmax" or op == "argmin":
                    if takes_over(vals[t + s], idxs[t + s], vals[t], idxs[t], op):
                        vals[t] = vals[t + s]
                        idxs[t] = idxs[t + s]
                else:
                    vals[t] = combine(vals[t], vals[t + s], op)
            pk.barrier()
            s //= 2

    return chunk_of, merge_tree


@functools.cache
def reduce_kernel(acc: DType, wg: int, chunk: int) -> pk.Kernel:
    """The portable reduction kernel for the accumulator `acc`: in group mode workgroups of
    `wg` invocations, each reducing a chunk of at most `chunk` elements."""
    ACC = acc  # noqa: N806
    WG = wg  # noqa: N806

    @pk.func
    def element(x, m, o, r, base, layout, op):
        """Element r of output o as `op` reduces it: its squared deviation from the mean
        m[o] for "sqdev", 0 or 1 for any/all, else itself (in the accumulator's type)."""
        if op == "any" or op == "all":
            return ACC(pk.bool_(load(x, o, r, base, layout)))
        v = ACC(load(x, o, r, base, layout))
        if op == "sqdev":
            v = v - m[o]
            v = v * v
        return v

    chunk_of, merge_tree = chunk_functions(wg, chunk)

    @pk.kernel(workgroup=(WG,))
    def reduce(x: pk.Array, xi: pk.Array, m: pk.Array, out: pk.Array, outi: pk.Array,
               n_red: int, n_chunks: int, t_chunk: int, den: ACC, op: pk.constexpr,
               layout: pk.constexpr,
               mode: pk.constexpr, src: pk.constexpr, fin: pk.constexpr):
        # element r of output o is load(x, o, r, o * n_red, layout); partial stages read their
        # indices from xi
        o, start, stop, t, step = chunk_of(n_red, n_chunks, t_chunk, mode)
        base = o * n_red
        # every lane starts from the chunk's first element (harmless for max/min/arg*:
        # they are idempotent), or from the op's identity
        first = element(x, m, o, start, base, layout, op)
        if src == "partial":
            best_i = xi[base + start]
        else:
            best_i = start
        if op == "prod" or op == "all":
            acc_v = ACC(1)
        elif op == "sum" or op == "sqdev" or op == "any":
            acc_v = ACC(0)
        else:
            acc_v = first
        r = start + t
        while r < stop:
            v = element(x, m, o, r, base, layout, op)
            if op == "argmax" or op == "argmin":
                if src == "partial":
                    vi = xi[base + r]
                else:
                    vi = r
                if takes_over(v, vi, acc_v, best_i, op):
                    acc_v = v
                    best_i = vi
            else:
                acc_v = combine(acc_v, v, op)
            r += step
        if mode == "group":
            vals = pk.shared(ACC, (WG,))
            idxs = pk.shared(pk.i32, (WG,))
            vals[t] = acc_v
            idxs[t] = best_i
            merge_tree(vals, idxs, t, op)
            acc_v = vals[0]
            best_i = idxs[0]
        if t == 0:
            if mode == "group":
                slot = pk.group_id(0)
            else:
                slot = o * n_chunks + (pk.global_id(0) // (pk.grid(0) // n_chunks))
            if fin == "mean" or fin == "var":
                out[slot] = acc_v / den
            elif fin == "std":
                out[slot] = pk.sqrt(acc_v / den)
            else:
                out[slot] = acc_v
            if op == "argmax" or op == "argmin":
                outi[slot] = best_i

    return reduce


# ---------------------------------------------------------------- planning


@dataclass(frozen=True)
class Problem:
    """`x` viewed so that output o is elements [o * n_red, (o + 1) * n_red) in row-major
    order; `out_shape` is the result's shape."""

    view: Tensor
    n_kept: int  # the view's leading dimensions are the kept ones, the rest reduced
    n_out: int
    n_red: int
    out_shape: tuple[int, ...]


def normalize_axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if hasattr(axis, "__index__"):
        axes: tuple = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise TypeError(f"axis must be an int, a tuple of ints or None, not "
                        f"{type(axis).__name__}")
    norm = tuple(normalize_axis(a, ndim) for a in axes)
    if len(set(norm)) != len(norm):
        raise ValueError(f"repeated axis in {axis!r}")
    return tuple(sorted(norm))


def problem(x: Tensor, axis: Axis, keepdims: bool) -> Problem:
    axes = normalize_axes(axis, x.ndim)
    kept = [d for d in range(x.ndim) if d not in axes]
    view = x.permute(*kept, *axes) if x.ndim else x
    n_out = strided.prod([x.shape[d] for d in kept])
    n_red = strided.prod([x.shape[d] for d in axes])
    if keepdims:
        out_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
    else:
        out_shape = tuple(x.shape[d] for d in kept)
    return Problem(view, len(kept), n_out, n_red, out_shape)


def _layout(prob: Problem) -> tuple[Tensor, str]:
    """The view as the kernel's `x`: 1-D when all its elements collapse to one stride; 2-D
    [n_out, n_red] when the kept and the reduced dimensions each collapse to one (no index
    arithmetic per element); else 4-D (a copy first when more than four dimensions remain)."""
    view = prob.view
    shape, (strides,) = strided.collapse(view.shape, [view.element_strides])
    if len(shape) <= 1:
        n = shape[0] if shape else 1
        return Tensor(view.buffer, (n,), view.dtype, (strides[0] if strides else 0,),
                      view.offset), "flat"
    k = prob.n_kept
    kept, (kept_st,) = strided.collapse(view.shape[:k], [view.element_strides[:k]])
    red, (red_st,) = strided.collapse(view.shape[k:], [view.element_strides[k:]])
    if len(kept) <= 1 and len(red) <= 1:
        return Tensor(view.buffer, (prob.n_out, prob.n_red), view.dtype,
                      (kept_st[0] if kept_st else 0, red_st[0] if red_st else 0),
                      view.offset), "2d"
    if len(shape) > 4:
        contiguous = Problem(view.contiguous(), k, prob.n_out, prob.n_red, prob.out_shape)
        return _layout(contiguous)
    pad = 4 - len(shape)
    return Tensor(view.buffer, (1,) * pad + shape, view.dtype, (0,) * pad + strides,
                  view.offset), "4d"


def _dummy() -> Tensor:
    return ew.constant(0, dt.i32).reshape(1)


def run(op: str, prob: Problem, acc: DType, out: Tensor, fin: str = "none",
        den: float = 1, mean: Tensor | None = None, indices: Tensor | None = None) -> None:
    """Reduces `prob` with `op` into the 1-D `out` (n_out elements; `indices` receives the
    positions for argmax/argmin), chunking long reductions into partial passes."""
    x, layout = _layout(prob)
    info = device_info("reduce")
    cfg = config("reduce", info)
    kernel = reduce_kernel(acc, cfg.wg, cfg.wg * cfg.group_share)
    m = mean if mean is not None else _dummy()
    xi = _dummy()
    src = "input"
    n_red, n_out = prob.n_red, prob.n_out
    arg = op in ("argmax", "argmin")
    while True:
        host_mode = REDUCE.choose(info, op, x, layout).kernel
        if host_mode is not None:
            n_chunks = reduction_host.chunks(host_mode, n_red, cfg)
        else:
            mode, n_chunks, grid, t_chunk = _plan(x, n_out, n_red, cfg)
        last = n_chunks == 1
        if last:
            dst, dsti, stage_fin = out, (indices if arg else _dummy()), fin
        else:
            dst = empty((n_out * n_chunks,), acc)
            dsti = empty((n_out * n_chunks,), dt.i32) if arg else _dummy()
            stage_fin = "none"
        if host_mode is not None:
            reduction_host.stage(host_mode, combine, op, acc, x, layout, m, dst, n_out, n_red,
                                 den, stage_fin, cfg)
        else:
            kernel[grid](x, xi, m, dst, dsti, n_red, n_chunks, t_chunk, den, op, layout, mode,
                         src, stage_fin)
        if last:
            return
        # the partials become the input of the next stage: values, and indices for arg ops
        x, layout, xi, src = dst, "flat", (dsti if arg else xi), ("partial" if arg else src)
        if op == "sqdev":
            op = "sum"
        n_red = n_chunks


def _plan(x: Tensor, n_out: int, n_red: int, cfg: Any) -> tuple[str, int, int, int]:
    """(mode, chunks per output, grid, elements per invocation in thread mode) of one stage of
    `reduce_kernel`: one invocation per (output, chunk) when the reduction is short or its
    elements are strided (a column sum), one workgroup per (output, chunk) otherwise."""
    strided_rows = x.element_strides[-1] != 1
    t_chunk = _thread_chunk(n_out, n_red, cfg)
    if n_red <= 16 or (n_out >= 4096 and n_red <= t_chunk) or \
            (strided_rows and n_out >= 256):
        n_chunks = -(-n_red // t_chunk)
        return "thread", n_chunks, n_out * n_chunks, t_chunk
    n_chunks = -(-n_red // (cfg.wg * cfg.group_share))
    return "group", n_chunks, n_out * n_chunks * cfg.wg, t_chunk


def _thread_chunk(n_out: int, n_red: int, cfg: Any) -> int:
    """Elements per invocation in thread mode: enough invocations to fill a large GPU, at
    least 64 and at most `thread_chunk` elements each (a power of two)."""
    want = -(-n_out * n_red // cfg.thread_target)
    chunk = 64
    while chunk < want and chunk < cfg.thread_chunk:
        chunk *= 2
    return chunk


# ---------------------------------------------------------------- the public functions


def sum_dtype(dtype: DType) -> DType:
    """sum/prod/cumsum's result dtype for input `dtype` without `dtype=`, by the array API
    (2023.12): signed integers give the default integer dtype, unsigned ones the unsigned dtype
    of its width, unless they are wider already (i64, u64 stay); floats their own dtype. bool,
    where the standard says nothing, counts as a small signed integer."""
    default = pr.DEFAULT_INT
    if dtype == dt.bool_ or dtype.kind == dt.INT:
        return dtype if dtype.bits > default.bits else default
    if dtype.kind == dt.UINT:
        return dtype if dtype.bits > default.bits else dt.from_numpy(f"uint{default.bits}")
    return dtype


def _exact_sum_dtype(dtype: DType) -> DType:
    """The 64-bit integer type that sums integers of `dtype` exactly (for means)."""
    return dt.u64 if dtype.kind == dt.UINT else dt.i64


def _sum_like(op: str, x: object, axis: Axis, keepdims: bool, dtype: object) -> Tensor:
    x = ew.as_tensor(x)
    if x.dtype.is_complex or (dtype is not None and dt.as_dtype(dtype).is_complex):
        return getattr(complex_reduction, op)(x, axis, keepdims, dtype)
    return dispatch((op, axis_key(axis), keepdims, dtype), (x,),
                    lambda: _sum_like_run(op, x, axis, keepdims, dtype))


def axis_key(axis: Axis) -> object:
    """`axis` as a part of a dispatch key (a list is not hashable)."""
    return tuple(axis) if isinstance(axis, list) else axis


def _sum_like_run(op: str, x: Tensor, axis: Axis, keepdims: bool, dtype: object) -> Tensor:
    prob = problem(x, axis, keepdims)
    rdtype = dt.as_dtype(dtype) if dtype is not None else sum_dtype(x.dtype)
    if rdtype == dt.bool_:
        rdtype = dt.i64
    out = empty(prob.out_shape, rdtype)
    if prob.n_out == 0:
        return out
    if prob.n_red == 0:
        return fill(out, 0 if op == "sum" else 1)
    run(op, prob, pr.accumulator(rdtype), out.reshape(-1))
    return out


def sum(x: object, /, axis: Axis = None, *, keepdims: bool = False,  # noqa: A001
        dtype: object = None) -> Tensor:
    """Sum over `axis` (None: all; an int or a tuple, negative counts from the end). bool and
    signed ints give i32 (i64 stays i64), unsigned u32 (u64 stays u64), floats their own dtype
    (`sum_dtype`); integer sums wrap; the sum of nothing is 0."""
    return _sum_like("sum", x, axis, keepdims, dtype)


def _sum_backward(forward: Callable[..., Tensor], x: Any, axis: Axis = None, *,
                  keepdims: bool = False, dtype: object = None) -> Tensor:
    """sum recorded: the gradient broadcast back over the reduced axes."""
    return record_reduction("sum", forward(x, axis, keepdims=keepdims, dtype=dtype), x, axis,
                            keepdims, 1.0)


sum = declare(sum, "reduction", grad="rule", backward=_sum_backward,  # noqa: A001
              complex_grad=True, builtin=None, exports=("pk", "array_api"),
              aliases=torch_names("sum", "aten::sum", "aten::sum.dim_IntList", numpy="sum",
                                  array_api="sum"))


def prod(x: object, /, axis: Axis = None, *, keepdims: bool = False,
         dtype: object = None) -> Tensor:
    """Product over `axis`; dtypes as `sum`; the product of nothing is 1."""
    return _sum_like("prod", x, axis, keepdims, dtype)


def _prod_backward(forward: Callable[..., Tensor], x: Any, axis: Axis = None, *,
                   keepdims: bool = False, dtype: object = None) -> Tensor:
    """prod recorded (complex too: the conjugate share, `reduction_backward`)."""
    return reduction_backward.prod(lambda t: forward(t, axis, keepdims=keepdims, dtype=dtype), x,
                              axis, keepdims)


prod = declare(prod, "reduction", grad="rule", backward=_prod_backward, complex_grad=True,
               exports=("pk", "array_api"),
               aliases=torch_names("prod", "aten::prod", "aten::prod.dim_int", numpy="prod",
                                   array_api="prod"))


def _float_result(dtype: DType) -> DType:
    return dtype if dtype.is_float else dt.f32


def mean(x: object, /, axis: Axis = None, *, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over `axis`: the float dtype (f32 for ints and bool); nan when there
    is nothing to average."""
    x = ew.as_tensor(x)
    if x.dtype.is_complex:
        return complex_reduction.mean(x, axis, keepdims)
    return _mean(x, axis, keepdims)


def _mean_backward(forward: Callable[..., Tensor], x: Any, axis: Axis = None, *,
                   keepdims: bool = False) -> Tensor:
    """mean recorded: the gradient broadcast back, divided by the count."""
    x = ew.as_tensor(x)
    out = forward(x, axis, keepdims=keepdims)
    if x.dtype.is_complex or not out.size:  # (complex: the parts' means record themselves)
        return out
    return record_reduction("mean", out, x, axis, keepdims, out.size / builtins.max(x.size, 1))


mean = declare(mean, "reduction", grad="rule", backward=_mean_backward, complex_grad=True,
               exports=("pk", "array_api"),
               aliases=torch_names("mean", "aten::mean", "aten::mean.dim", numpy="mean",
                                   array_api="mean"))


def _mean(x: Tensor, axis: Axis, keepdims: bool) -> Tensor:
    return dispatch(("mean", axis_key(axis), keepdims), (x,),
                    lambda: _mean_run(x, axis, keepdims))


def _mean_run(x: Tensor, axis: Axis, keepdims: bool) -> Tensor:
    prob = problem(x, axis, keepdims)
    rdtype = _float_result(x.dtype)
    out = empty(prob.out_shape, rdtype)
    if prob.n_out == 0:
        return out
    if prob.n_red == 0:
        return fill(out, float("nan"))
    if x.dtype in (dt.i64, dt.u64):
        _mean_64(x, axis, keepdims, prob.n_red, out)
        return out
    if not x.dtype.is_float:
        # integers sum exactly in 64 bits, then divide
        total = empty(prob.out_shape, _exact_sum_dtype(x.dtype))
        run("sum", prob, total.dtype, total.reshape(-1))
        ew.divide(total.astype(dt.f32), float(prob.n_red), out=out)
        return out
    run("sum", prob, pr.compute_float(x.dtype), out.reshape(-1), fin="mean", den=prob.n_red)
    return out


def _mean_64(x: Tensor, axis: Axis, keepdims: bool, n: int, out: Tensor) -> None:
    """The mean of i64 or u64 values into `out` (f32), exact up to its last rounding. A 64-bit
    sum of the values can wrap (the mean of [2**62] * 3), so each is split as x = q*n + r
    (floor division, 0 <= r < n): the sum of the q's plus floor(sum(r) / n) is
    floor(sum(x) / n), which lies between the smallest and the largest value, so wrapping
    arithmetic gives it exactly; sum(r) < n**2 does not wrap."""
    q = ew.floor_divide(x, n)
    r = ew.remainder(x, n)
    whole = _sum_like("sum", q, axis, keepdims, x.dtype)
    rest = _sum_like("sum", r, axis, keepdims, x.dtype)
    whole = ew.add(whole, ew.floor_divide(rest, n))
    rest = ew.remainder(rest, n)
    if x.dtype == dt.i64:  # a negative whole part: (whole + 1) - (n - rest) / n, one sign
        borrow = ew.logical_and(ew.less(whole, 0), ew.greater(rest, 0)).astype(dt.i64)
        whole = ew.add(whole, borrow)
        rest = ew.subtract(rest, ew.multiply(borrow, n))
    ew.add(whole.astype(dt.f32), ew.divide(rest.astype(dt.f32), float(n)), out=out)


def _var(x: object, axis: Axis, keepdims: bool, correction: float, ddof: float | None,
         fin: str) -> Tensor:
    if ddof is not None:
        correction = ddof
    x = ew.as_tensor(x)
    if x.dtype.is_complex:
        return complex_reduction.var(x, axis, keepdims, correction, fin == "std")
    prob = problem(x, axis, keepdims)
    rdtype = _float_result(x.dtype)
    acc = pr.compute_float(x.dtype)
    out = empty(prob.out_shape, rdtype)
    if prob.n_out == 0:
        return out
    if prob.n_red == 0:
        return fill(out, float("nan"))
    means = empty((prob.n_out,), acc)
    run("sum", prob, acc, means, fin="mean", den=prob.n_red)
    den = builtins.max(prob.n_red - correction, 0)
    run("sqdev", prob, acc, out.reshape(-1), fin=fin, den=den, mean=means)
    return out


def var(x: object, /, axis: Axis = None, *, correction: float = 0.0, keepdims: bool = False,
        ddof: float | None = None) -> Tensor:
    """Variance over `axis`: the mean squared deviation, divided by n - correction (numpy's
    `ddof` is accepted as an alias). Two passes (mean, then squared deviations), so it stays
    accurate for data far from 0."""
    return _var(x, axis, keepdims, correction, ddof, "var")


def std(x: object, /, axis: Axis = None, *, correction: float = 0.0, keepdims: bool = False,
        ddof: float | None = None) -> Tensor:
    """Standard deviation over `axis`: sqrt(var)."""
    return _var(x, axis, keepdims, correction, ddof, "std")


def _var_composite(x: Any, axis: Axis, correction: float, keepdims: bool) -> Any:
    """The variance as a composition of differentiable ops (mean, subtract, sum)."""
    n = math.prod(x.shape[a] for a in reduced_axes(axis, x.ndim))
    d = x - pk.mean(x, axis=axis, keepdims=True)
    dof = n - correction
    total = pk.sum(d * d, axis=axis, keepdims=keepdims)
    return total / dof if dof > 0 else total * math.nan


def _var_backward(forward: Callable[..., Tensor], x: Any, axis: Axis = None, *,
                  correction: float = 0.0, keepdims: bool = False,
                  ddof: float | None = None) -> Tensor:
    """var differentiated as its composition (complex: the parts' ops record themselves)."""
    if pr.is_complex_operand(x):
        return forward(x, axis, correction=correction, keepdims=keepdims, ddof=ddof)
    return _var_composite(x, axis, correction if ddof is None else ddof, keepdims)


def _std_backward(forward: Callable[..., Tensor], x: Any, axis: Axis = None, *,
                  correction: float = 0.0, keepdims: bool = False,
                  ddof: float | None = None) -> Tensor:
    """std differentiated as sqrt of var's composition."""
    if pr.is_complex_operand(x):
        return forward(x, axis, correction=correction, keepdims=keepdims, ddof=ddof)
    return pk.sqrt(_var_composite(x, axis, correction if ddof is None else ddof, keepdims))


var = declare(var, "reduction", grad="composite", backward=_var_backward, complex_grad=True,
              exports=("pk", "array_api"),
              aliases=torch_names("var", "aten::var.correction", numpy="var", array_api="var"))
std = declare(std, "reduction", grad="composite", backward=_std_backward, complex_grad=True,
              exports=("pk", "array_api"),
              aliases=torch_names("std", "aten::std.correction", numpy="std", array_api="std"))


def _extremum(op: str, x: object, axis: Axis, keepdims: bool) -> Tensor:
    x = ew.as_tensor(x)
    if x.dtype.is_complex:
        raise not_defined(op, x.dtype)
    return dispatch((op, axis_key(axis), keepdims), (x,),
                    lambda: _extremum_run(op, x, axis, keepdims))


def _extremum_run(op: str, x: Tensor, axis: Axis, keepdims: bool) -> Tensor:
    prob = problem(x, axis, keepdims)
    if prob.n_red == 0:
        raise ValueError(f"{op}() of an empty selection has no identity: the reduced axes "
                         f"of shape {x.shape} hold no element")
    if x.dtype == dt.bool_:
        return _logical("any" if op == "max" else "all", x, axis, keepdims)
    out = empty(prob.out_shape, x.dtype)
    if prob.n_out == 0:
        return out
    run(op, prob, pr.compute_dtype(x.dtype), out.reshape(-1))
    return out


def max(x: object, /, axis: Axis = None, *, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Largest element over `axis` (nan if any is nan). ValueError when reducing nothing."""
    return _extremum("max", x, axis, keepdims)


def min(x: object, /, axis: Axis = None, *, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Smallest element over `axis` (nan if any is nan). ValueError when reducing nothing."""
    return _extremum("min", x, axis, keepdims)


def _extremum_backward(forward: Callable[..., Tensor], x: Any, axis: Axis = None, *,
                       keepdims: bool = False) -> Tensor:
    """max/min over `axis` recorded: the gradient goes to the elements equal to the result,
    shared equally among ties. Not for complex tensors (TypeError from the forward) or
    non-float ones (nothing to differentiate)."""
    x = ew.as_tensor(x)
    if not x.dtype.is_float:
        return forward(x, axis, keepdims=keepdims)
    with no_grad():
        out = forward(x, axis, keepdims=keepdims)

    def back(g: Any) -> tuple[Any]:
        m = out if keepdims else with_reduced_axes(out, axis, x.ndim)
        gk = g if keepdims else with_reduced_axes(g, axis, x.ndim)
        hit = (x == m).astype(x.dtype)
        return (gk * hit / pk.sum(hit, axis=axis, keepdims=True),)

    return record(forward.__name__, out, (x,), back)


max = declare(max, "reduction", grad="rule", backward=_extremum_backward,  # noqa: A001
              complex_grad=True, builtin=bi.max, exports=("pk", "array_api"),
              aliases=torch_names("amax", "aten::amax", "aten::max", numpy=("max", "amax"),
                                  array_api="max"))
min = declare(min, "reduction", grad="rule", backward=_extremum_backward,  # noqa: A001
              complex_grad=True, builtin=bi.min, exports=("pk", "array_api"),
              aliases=torch_names("amin", "aten::amin", "aten::min", numpy=("min", "amin"),
                                  array_api="min"))


def _arg(op: str, x: object, axis: int | None, keepdims: bool) -> Tensor:
    x = ew.as_tensor(x)
    if x.dtype.is_complex:
        raise not_defined(op, x.dtype)
    if axis is not None and not hasattr(axis, "__index__"):
        raise TypeError(f"{op}: axis must be an int or None, got {axis!r}")
    prob = problem(x, axis, keepdims)
    if prob.n_red == 0:
        raise ValueError(f"{op}() of an empty sequence: the reduced axis of shape {x.shape} "
                         "holds no element")
    out = empty(prob.out_shape, dt.i64)
    if prob.n_out == 0:
        return out
    acc = dt.i32 if x.dtype == dt.bool_ else pr.compute_dtype(x.dtype)
    values = empty((prob.n_out,), acc)
    run(op, prob, acc, values, indices=out.reshape(-1))
    return out


def argmax(x: object, /, axis: int | None = None, *, keepdims: bool = False) -> Tensor:
    """Index (i64) of the largest element along `axis` (None: of the flattened tensor); the
    first one on ties, the first nan if any."""
    return _arg("argmax", x, axis, keepdims)


def argmin(x: object, /, axis: int | None = None, *, keepdims: bool = False) -> Tensor:
    """Index (i64) of the smallest element along `axis`; the first on ties or nan."""
    return _arg("argmin", x, axis, keepdims)


def _logical(op: str, x: object, axis: Axis, keepdims: bool) -> Tensor:
    x = ew.as_tensor(x)
    if x.dtype.is_complex:
        return complex_reduction.truth(op, x, axis, keepdims)
    prob = problem(x, axis, keepdims)
    out = empty(prob.out_shape, dt.bool_)
    if prob.n_out == 0:
        return out
    if prob.n_red == 0:
        return fill(out, op == "all")
    run(op, prob, dt.u32, out.reshape(-1))
    return out


def any(x: object, /, axis: Axis = None, *, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Whether any element over `axis` is nonzero (bool); False for nothing."""
    return _logical("any", x, axis, keepdims)


def all(x: object, /, axis: Axis = None, *, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Whether every element over `axis` is nonzero (bool); True for nothing."""
    return _logical("all", x, axis, keepdims)


# argmax and argmin take one axis (or none)
ARG_SAMPLES = {"shapes": ((3, 5),), "calls": ({}, {"axis": 1}, {"axis": 0, "keepdims": True})}
argmax = declare(argmax, "reduction", exports=("pk", "array_api"), samples=ARG_SAMPLES,
                 aliases=torch_names(
    "argmax", "aten::argmax", numpy="argmax", array_api="argmax"))
argmin = declare(argmin, "reduction", exports=("pk", "array_api"), samples=ARG_SAMPLES,
                 aliases=torch_names(
    "argmin", "aten::argmin", numpy="argmin", array_api="argmin"))
any = declare(any, "reduction", exports=("pk", "array_api"), aliases=torch_names(  # noqa: A001
    "any", "aten::any", "aten::any.dim", numpy="any", array_api="any"))
all = declare(all, "reduction", exports=("pk", "array_api"), aliases=torch_names(  # noqa: A001
    "all", "aten::all", "aten::all.dim", numpy="all", array_api="all"))
