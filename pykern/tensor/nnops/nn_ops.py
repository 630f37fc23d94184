"""Neural-network ops: `softmax`, `log_softmax`, `layer_norm`, `attention`, `one_hot`
(the convolutions are in conv.py).

Row ops (softmax family, layer_norm) give each row to one workgroup: every invocation walks the
row with a stride of the workgroup size keeping running statistics (online max and sum of
exponentials; Welford's mean and M2), the workgroup combines them in shared memory with a tree
of barriers, and a second walk writes the result. Short rows go one row per invocation, and
so do all rows on the host device, with loops LLVM vectorises (`pykern.tensor.nnops.nn_host`).
Arithmetic runs in f32 for f16 and f32 inputs and in f64 for f64 (where the device has no f64
exp/log, `pykern.passes.decompose` supplies them).

attention runs on cooperative-matrix tiles where the device and the operands allow
(`pykern.tensor.nnops.attention_coop`), else one fused flash-style kernel for head dimensions up to
64 on GPUs, else matmul → fused scale/mask/softmax → matmul, the scores made for as many batch
matrices at a time as a storage buffer holds. Under grad, where one of the first two runs, it
also saves each row's log-sum-exp and records the fused backward of
`pykern.tensor.nnops.attention_backward`; elsewhere attention is recorded as a composition of ops.
"""

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

import pykern as pk

from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad
from pykern.ops.public import declare, torch_names
from pykern.tensor.nnops import layer_norm_backward
from pykern.tensor.core.stand_in import stand_in
from pykern.tensor.core.autocast import low_precision
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.gemm import matmul as linalg
from pykern.tensor.nnops import nn_host
from pykern.tensor.nnops.attention_backward import attention_grads, fits_loop_budget, lse_like
from pykern.tensor.nnops.attention_coop import coop_attention
from pykern.tensor.nnops.attention_stage import row_stager
from pykern.tensor.core.checks import check_dtype_in, check_int
from pykern.tensor.create.creation import fill
from pykern.tensor.core.device_limits import is_cpu_device, loop_budget
from pykern.ops.choice import config, device_info, on_cpu, on_host, tune
from pykern.ops.registry import Impl, always, get
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.promotion import (FLOATS, INTS as INDEX_DTYPES, compute_float, promote)
from pykern.tensor.core.strided import (batch_pieces, broadcast_shapes, broadcast_strides, cdiv,
                                   collapse, prod, view)
from pykern.tensor.core.tensor import normalize_axis
from pykern.tensor.core.workgroup import merge_halving


def _rows_config(info: object) -> dict[str, Any]:
    """How the row ops (softmax, log_softmax, layer_norm) size their work: rows up to
    `short_row` elements go one per invocation; longer ones get a workgroup of the first
    `row_workgroups` entry (up to length, invocations) that takes them, a few thousand elements
    per invocation at most, and on CPU devices few invocations, as barriers cost more there
    than they share; the host's kernels keep `host_lanes` partial results per row."""
    workgroups = ((64 * 4096, 64), (None, 1024)) if on_cpu(info) else \
        ((1024, 32), (256 * 64, 256), (None, 1024))
    return {"short_row": 16, "row_workgroups": workgroups, "host_lanes": 256}


tune("softmax", _rows_config)
# layer_norm's backward kernel (layer_norm_backward) takes a workgroup of `backward_workgroup`
tune("layer_norm", lambda info: {**_rows_config(info), "backward_workgroup": 64})


def _short(info: object, length: int, causal: bool = False) -> bool:
    return length <= config("softmax", info).short_row and not causal


def _host_rows(info: object, length: int, causal: bool = False) -> bool:
    return on_host(info) and not causal


# softmax's and log_softmax's kernels (also those of attention's composed path, masked): the
# `kernel` of the first two makes a one-row-per-invocation kernel, the last is the workgroup's
SOFTMAX_ROWS = (
    Impl("one row per invocation", _short, "short rows: three walks of the row, no barrier",
         kernel=lambda x_dt, o_dt, log, info: _softmax_short_kernel(x_dt, o_dt, log)),
    Impl("host rows", _host_rows, "the host: a row per invocation, loops LLVM vectorises "
         "(nn_host)", kernel=lambda x_dt, o_dt, log, info: nn_host.softmax_kernel(
             x_dt, o_dt, log, config("softmax", info).host_lanes)),
    Impl("a workgroup per row", always, "online max and sum per invocation, combined by a tree "
         "of barriers in shared memory"))
# layer_norm's: the host's kernel for rows past the short ones, else the portable kernel with
# one invocation (short rows) or a workgroup per row
LAYER_NORM_ROWS = (
    Impl("host rows", lambda info, length: on_host(info) and not _short(info, length),
         "the host: a row per invocation, loops LLVM vectorises (nn_host)"),
    Impl("one row per invocation", _short, "short rows: Welford's update, no barrier"),
    Impl("a workgroup per row", always, "Welford's update per invocation, combined by a tree of "
         "barriers in shared memory"))


# ---------------------------------------------------------------- softmax family

def softmax(x: object, axis: int = -1) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along `axis`, for f16, f32 and f64 tensors (same dtype
    out; computed in f32 for f16). Integer inputs raise TypeError.

        p = pk.softmax(logits, axis=-1)
    """
    return _softmax_op(x, axis, log=False, op="softmax")


def log_softmax(x: object, axis: int = -1) -> Tensor:
    """x - max - log(sum(exp(x - max))) along `axis` (f16, f32, f64), without forming
    softmax's quotient, so large negative values stay finite."""
    return _softmax_op(x, axis, log=True, op="log_softmax")


def _softmax_backward(forward: Callable[..., Tensor], x: Any, axis: int = -1) -> Tensor:
    """softmax's gradient, y ⊙ (g - Σ g ⊙ y) along the axis, from the forward's y."""
    with no_grad():
        out = forward(x, axis)
    return record("softmax", out, (x,),
                  lambda g: (out * (g - pk.sum(g * out, axis=axis, keepdims=True)),))


def _log_softmax_backward(forward: Callable[..., Tensor], x: Any, axis: int = -1) -> Tensor:
    """log_softmax's gradient, g - exp(y) Σ g along the axis, from the forward's y."""
    with no_grad():
        out = forward(x, axis)
    return record("log_softmax", out, (x,),
                  lambda g: (g - pk.exp(out) * pk.sum(g, axis=axis, keepdims=True),))


def _log_softmax_reference(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log_softmax in numpy (the test matrix's reference)."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


ROW_SAMPLES = {"shapes": ((3, 5),), "calls": ({"axis": -1}, {"axis": 0})}
softmax = declare(softmax, "nn", grad="rule", backward=_softmax_backward,
                  implementations=SOFTMAX_ROWS, samples=ROW_SAMPLES,
                  reference=lambda x, axis=-1: np.exp(_log_softmax_reference(x, axis)),
                  aliases=torch_names("softmax", "aten::_softmax", "aten::softmax.int"))
log_softmax = declare(log_softmax, "nn", grad="rule", backward=_log_softmax_backward,
                      implementations=SOFTMAX_ROWS, samples=ROW_SAMPLES,
                      reference=_log_softmax_reference,
                      aliases=torch_names("log_softmax", "aten::_log_softmax",
                                          "aten::log_softmax.int"))
SOFTMAX = get("softmax")


def _softmax_op(x: object, axis: object, log: bool, op: str) -> Tensor:
    if type(x) is Tensor and type(axis) is int:
        return dispatch((op, axis), (x,), lambda: _softmax_run(x, axis, log, op))
    return _softmax_run(x, axis, log, op)


def _softmax_run(x: object, axis: object, log: bool, op: str) -> Tensor:
    x = as_tensor(x, f"{op}: x")
    check_dtype_in(x, FLOATS, op, "x")
    if x.ndim == 0:
        raise ValueError(f"{op}: x is 0-d; it needs an axis to normalise along")
    axis = normalize_axis(axis, x.ndim, op=op)
    out = empty(x.shape, x.dtype)
    if out.size == 0:
        return out
    _softmax_rows(x, out, axis, log=log, scale=1.0, causal_offset=None, op=op)
    return out


def _softmax_rows(x: Tensor, out: Tensor, axis: int, log: bool, scale: float,
                  causal_offset: int | None, op: str) -> None:
    """out = softmax(x * scale) along `axis`; with `causal_offset`, x is (..., Lq, Lk) and row i
    keeps only columns j <= i + causal_offset (the rest give 0); x must then be row-major."""
    length = x.shape[axis]
    rest = x.shape[:axis] + x.shape[axis + 1:]
    strides = [x.element_strides[:axis] + x.element_strides[axis + 1:],
               out.element_strides[:axis] + out.element_strides[axis + 1:]]
    xs, os_ = x.element_strides[axis], out.element_strides[axis]
    causal = causal_offset is not None
    info = device_info("softmax")
    impl = SOFTMAX.choose(info, length, causal)
    if impl.kernel is not None:
        kern, wg = impl.kernel(x.dtype, out.dtype, log, info), 1
    else:
        wg = _row_workgroup(config("softmax", info), length, passes=2, op=op)
        kern = _softmax_kernel(x.dtype, out.dtype, log, causal, wg)
    for deltas, shape, (sx, so) in batch_pieces(rest, strides, 3):
        xv = view(x, shape + (length,), sx + (xs,), x.offset + deltas[0])
        ov = view(out, shape + (length,), so + (os_,), out.offset + deltas[1])
        rows = prod(shape)
        if wg == 1:
            kern[rows](xv, ov, scale)
        else:
            kern[wg, rows](xv, ov, scale, causal_offset or 0, x.shape[-2] if causal else 1)


def _row_workgroup(cfg: Any, length: int, passes: int, op: str) -> int:
    """Invocations per row of `length` (the configuration's `row_workgroups`), checked
    against the loop budget."""
    wg = next(wg for most, wg in cfg.row_workgroups if most is None or length <= most)
    budget = loop_budget()
    if budget is not None and passes * cdiv(length, wg) > budget:
        raise ValueError(f"{op}: rows of {length} elements are longer than this device runs "
                         f"in one workgroup ({budget * wg // passes}); split the axis")
    return wg


@pk.func
def merge_max_sum(parts, i, j):
    """Folds column j of `parts` (a row max and the sum of exp(v - max) over the row's
    elements an invocation read) into column i."""
    m1 = parts[0, i]
    m2 = parts[0, j]
    s1 = parts[1, i]
    s2 = parts[1, j]
    mm = max(m1, m2)
    if m1 != mm:
        s1 = s1 * pk.exp(m1 - mm)
    if m2 != mm:
        s2 = s2 * pk.exp(m2 - mm)
    parts[0, i] = mm
    parts[1, i] = s1 + s2


@pk.func
def merge_welford(parts, i, j):
    """Folds column j of `parts` (a count, mean and sum of squared deviations) into column i:
    Chan et al.'s combination of two partial results."""
    na = parts[0, i]
    nb = parts[0, j]
    n = na + nb
    if nb > 0.0:
        delta = parts[1, j] - parts[1, i]
        parts[1, i] = parts[1, i] + delta * (nb / n)
        parts[2, i] = parts[2, i] + parts[2, j] + delta * delta * (na * nb / n)
        parts[0, i] = n


@functools.lru_cache(maxsize=None)
def _softmax_kernel(x_dt: DType, o_dt: DType, log: bool, causal: bool, wg: int) -> pk.Kernel:
    CF = compute_float(x_dt)  # noqa: N806
    LOG = log  # noqa: N806
    CAUSAL = causal  # noqa: N806
    WG = wg  # noqa: N806

    @pk.kernel(workgroup=(WG, 1, 1))
    def softmax_rows(x: x_dt[:, :, :, :], out: o_dt[:, :, :, :], scale: CF, offset: int,
                     lq: int):
        parts = pk.shared(CF, (2, WG))  # each invocation's max and sum
        t = pk.local_id(0)
        r = pk.global_id(1)
        i0, i1, i2 = pk.unravel(r, x.shape[:3])
        length = x.shape[3]
        lim = length
        if CAUSAL:
            lim = max(min(length, r % lq + offset + 1), 0)  # r % lq: the query's index
        # online max and sum of exponentials over this invocation's elements
        m: CF = -math.inf
        s: CF = 0.0
        for j in range(t, lim, WG):
            v = CF(x[i0, i1, i2, j]) * scale
            if v > m:
                s = s * pk.exp(m - v) + 1.0
                m = v
            elif v == m:
                s += 1.0  # also when both are -inf, where v - m would be NaN
            else:
                s += pk.exp(v - m)
        parts[0, t] = m
        parts[1, t] = s
        merge_halving(merge_max_sum, parts, t, WG)
        m = parts[0, 0]
        s = parts[1, 0]
        ls: CF = 0.0
        if LOG:
            ls = pk.log(s)
        for j in range(t, length, WG):
            v = CF(x[i0, i1, i2, j]) * scale
            if LOG:
                out[i0, i1, i2, j] = v - m - ls
            elif CAUSAL and j >= lim:
                out[i0, i1, i2, j] = 0.0
            else:
                out[i0, i1, i2, j] = pk.exp(v - m) / s

    return softmax_rows


@functools.lru_cache(maxsize=None)
def _softmax_short_kernel(x_dt: DType, o_dt: DType, log: bool) -> pk.Kernel:
    CF = compute_float(x_dt)  # noqa: N806
    LOG = log  # noqa: N806

    @pk.kernel
    def softmax_short(x: x_dt[:, :, :, :], out: o_dt[:, :, :, :], scale: CF):
        r = pk.global_id(0)
        i0, i1, i2 = pk.unravel(r, x.shape[:3])
        length = x.shape[3]
        m: CF = -math.inf
        for j in range(length):
            m = max(m, CF(x[i0, i1, i2, j]) * scale)
        s: CF = 0.0
        for j in range(length):
            v = CF(x[i0, i1, i2, j]) * scale
            if v != m:  # v == m gives 1 (also for -inf == -inf)
                s += pk.exp(v - m)
            else:
                s += 1.0
        if m != m:
            s = m  # a NaN anywhere: NaN everywhere, as numpy
        ls: CF = 0.0
        if LOG:
            ls = pk.log(s)
        for j in range(length):
            v = CF(x[i0, i1, i2, j]) * scale
            if LOG:
                out[i0, i1, i2, j] = v - m - ls
            else:
                out[i0, i1, i2, j] = pk.exp(v - m) / s

    return softmax_short


# ---------------------------------------------------------------- layer_norm

def layer_norm(x: object, normalized_shape: int | Sequence[int], weight: object = None,
               bias: object = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing `normalized_shape`
    dimensions (biased variance, as PyTorch's layer_norm). Floats only (f16, f32, f64; f16 is
    computed in f32); `weight`/`bias` have shape `normalized_shape` and any float dtype.
    The result has x's dtype.

        y = pk.layer_norm(x, x.shape[-1], gamma, beta)
    """
    params = (weight, bias)
    if type(x) is Tensor and all(p is None or type(p) is Tensor for p in params) and \
            type(eps) is float and type(normalized_shape) in (int, tuple):
        operands = (x, *(p for p in params if p is not None))
        return dispatch(("layer_norm", normalized_shape, eps, weight is None, bias is None),
                        operands, lambda: _layer_norm(x, normalized_shape, weight, bias, eps))
    return _layer_norm(x, normalized_shape, weight, bias, eps)


def _layer_norm_backward(forward: Callable[..., Tensor], x: Any,
                         normalized_shape: int | Sequence[int], weight: Any = None,
                         bias: Any = None, eps: float = 1e-5) -> Tensor:
    """layer_norm recorded with its own backward kernel (`layer_norm_backward`)."""
    shape = tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) \
        else (normalized_shape,)
    return layer_norm_backward.layer_norm(forward, x, shape, weight, bias, eps)


def _layer_norm_reference(x: np.ndarray, normalized_shape: Sequence[int],
                          weight: np.ndarray | None = None, bias: np.ndarray | None = None,
                          eps: float = 1e-5) -> np.ndarray:
    """layer_norm in numpy (the test matrix's reference)."""
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    return y * (1.0 if weight is None else weight) + (0.0 if bias is None else bias)


layer_norm = declare(layer_norm, "nn", grad="rule", backward=_layer_norm_backward,
                     implementations=LAYER_NORM_ROWS, reference=_layer_norm_reference,
                     samples={"shapes": ((3, 5), ("weight", (5,)), ("bias", (5,))),
                              "calls": ({"normalized_shape": (5,)},)},
                     aliases=torch_names("layer_norm", "aten::layer_norm",
                                         "aten::native_layer_norm"))
LAYER_NORM = get("layer_norm")


def _layer_norm(x: object, normalized_shape: int | Sequence[int], weight: object,
                bias: object, eps: float) -> Tensor:
    op = "layer_norm"
    x = as_tensor(x, f"{op}: x")
    check_dtype_in(x, FLOATS, op, "x")
    if isinstance(normalized_shape, (int,)) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    try:
        norm = tuple(check_int(s, op, "normalized_shape entries", 0) for s in normalized_shape)
    except TypeError:
        raise TypeError(f"{op}: normalized_shape must be an int or a sequence of ints, not "
                        f"{normalized_shape!r}") from None
    if not norm or len(norm) > x.ndim or x.shape[x.ndim - len(norm):] != norm:
        raise ValueError(f"{op}: normalized_shape {norm} must be the trailing dimensions of x's "
                         f"shape {x.shape}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps < 0:
        raise ValueError(f"{op}: eps must be a non-negative number, got {eps!r}")
    params = []
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            params.append(None)
            continue
        p = as_tensor(p, f"{op}: {name}")
        check_dtype_in(p, FLOATS, op, name)
        if p.shape != norm:
            raise ValueError(f"{op}: {name} has shape {p.shape}, expected normalized_shape "
                             f"{norm}")
        params.append(p)
    out = empty(x.shape, x.dtype)
    if out.size == 0:
        return out
    length = prod(norm)
    lead = x.shape[:x.ndim - len(norm)]
    xr = _as_rows(x, len(lead), length)
    orow = view(out, lead + (length,), out.element_strides[:len(lead)] + (1,))
    w, b = (_as_vector(p, length) if p is not None else stand_in(x.dtype) for p in params)
    kern, wg = _layer_norm_choice(x.dtype, w.dtype, b.dtype, params[0] is not None,
                                  params[1] is not None, length)
    strides = [xr.element_strides[:-1], orow.element_strides[:-1]]
    for deltas, shape, (sx, so) in batch_pieces(lead or (1,), strides if lead else [(0,), (0,)],
                                                3):
        xv = view(xr, shape + (length,), sx + xr.element_strides[-1:], xr.offset + deltas[0])
        ov = view(orow, shape + (length,), so + (1,), orow.offset + deltas[1])
        rows = prod(shape)
        grid = (rows,) if wg == 1 else (wg, rows)
        kern[grid](xv, w, b, ov, float(eps))
    return out


def _layer_norm_choice(x_dt: DType, w_dt: DType, b_dt: DType, has_w: bool, has_b: bool,
                       length: int) -> tuple[pk.Kernel, int]:
    """(kernel, invocations per row) for rows of `length` (LAYER_NORM_ROWS)."""
    info = device_info("layer_norm")
    cfg = config("layer_norm", info)
    impl = LAYER_NORM.choose(info, length)
    if impl is LAYER_NORM_ROWS[0]:
        kernel = nn_host.layer_norm_kernel(x_dt, w_dt, b_dt, has_w, has_b, cfg.host_lanes)
        return kernel, 1
    wg = 1 if impl is LAYER_NORM_ROWS[1] else \
        _row_workgroup(cfg, length, passes=2, op="layer_norm")
    return _layer_norm_kernel(x_dt, w_dt, b_dt, has_w, has_b, wg), wg


def _as_rows(x: Tensor, nlead: int, length: int) -> Tensor:
    """x as (lead..., length): its trailing dims merged, copied when their strides forbid."""
    shape, (strides,) = _merge_tail(x.shape[nlead:], x.element_strides[nlead:])
    if len(shape) > 1:
        x = x.contiguous()
        strides = (1,)
    return view(x, x.shape[:nlead] + (length,), x.element_strides[:nlead] + strides)


def _merge_tail(shape: tuple[int, ...], strides: tuple[int, ...]
                ) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    cshape, cstrides = collapse(shape, [strides])
    if not cshape:
        return (1,), [(1,)]
    return cshape, cstrides


def _as_vector(p: Tensor, length: int) -> Tensor:
    shape, (strides,) = _merge_tail(p.shape, p.element_strides)
    if len(shape) > 1:
        p = p.contiguous()
        strides = (1,)
    return view(p, (length,), strides)


@functools.lru_cache(maxsize=None)
def _layer_norm_kernel(x_dt: DType, w_dt: DType, b_dt: DType, has_w: bool, has_b: bool,
                       wg: int) -> pk.Kernel:
    CF = compute_float(x_dt)  # noqa: N806
    WG = wg  # noqa: N806
    SHORT = wg == 1  # noqa: N806
    normalize = nn_host.normalize_func(CF, has_w, has_b, WG)

    @pk.kernel(workgroup=(max(WG, 64) if SHORT else WG, 1, 1))
    def layer_norm_rows(x: x_dt[:, :, :, :], w: w_dt[:], b: b_dt[:], out: x_dt[:, :, :, :],
                        eps: CF):
        parts = pk.shared(CF, (3, WG))  # each invocation's count, mean and m2
        t = 0
        r = pk.global_id(0)
        if not SHORT:
            t = pk.local_id(0)
            r = pk.global_id(1)
        i0, i1, i2 = pk.unravel(r, x.shape[:3])
        length = x.shape[3]
        # Welford over this invocation's elements
        cnt: CF = 0.0
        mean: CF = 0.0
        m2: CF = 0.0
        for j in range(t, length, WG):
            v = CF(x[i0, i1, i2, j])
            cnt += 1.0
            d = v - mean
            mean += d / cnt
            m2 += d * (v - mean)
        if not SHORT:
            parts[0, t] = cnt
            parts[1, t] = mean
            parts[2, t] = m2
            merge_halving(merge_welford, parts, t, WG)
            mean = parts[1, 0]
            m2 = parts[2, 0]
        rstd = 1.0 / pk.sqrt(m2 / CF(length) + eps)
        normalize(x, w, b, out, i0, i1, i2, t, mean, rstd)

    return layer_norm_rows


# ---------------------------------------------------------------- attention

def attention(q: object, k: object, v: object, causal: bool = False,
              scale: float | None = None) -> Tensor:
    """Scaled dot-product attention: softmax(q @ kᵀ · scale, masked) @ v over the last two
    dimensions, q (..., Lq, D), k (..., Lk, D), v (..., Lk, Dv) with broadcasting batch
    dimensions; the result is (..., Lq, Dv). `scale` defaults to 1/sqrt(D). `causal=True`
    keeps, for query i, the keys j <= i (the top-left aligned lower triangle, as PyTorch's
    `is_causal`). Float dtypes (f16, f32, f64); scores and probabilities are kept in f32
    (f64 for f64 inputs); the result has the promoted dtype of q, k and v. With Lk == 0 the
    result is zeros.

        out = pk.attention(q, k, v, causal=True)
    """
    q, k, v, scale, batch = _attention_operands(q, k, v, causal, scale)
    causal = bool(causal)
    low = low_precision(q, k, v)
    if low is not None:  # pk.autocast: 16-bit operands and result
        q, k, v = low
    lq, dv = q.shape[-2], v.shape[-1]
    out = empty(batch + (lq, dv), promote(q.dtype, k.dtype, v.dtype))
    if out.size == 0:
        return out
    if k.shape[-2] == 0:
        fill(out, 0)
        return out
    if coop_attention(q, k, v, out, causal, scale):
        return out
    if _use_fused(q.shape[-1], dv):
        _attention_fused(q, k, v, out, batch, causal, scale)
        return out
    _attention_composed(q, k, v, out, batch, causal, scale)
    return out


def _attention_backward(forward: Callable[..., Tensor], q: object, k: object, v: object,
                        causal: bool = False, scale: float | None = None) -> Tensor:
    """attention recorded: the fused forward with the fused backward where one runs
    (`_attention_recorded`), else the composition of ops (`_attention_composite`)."""
    q, k, v, scale, batch = _attention_operands(q, k, v, causal, scale)
    causal = bool(causal)
    low = low_precision(q, k, v)
    if low is not None:  # pk.autocast: 16-bit operands and result (the casts are recorded)
        q, k, v = low
    recorded = _attention_recorded(q, k, v, batch, causal, scale)
    return _attention_composite(q, k, v, causal, scale) if recorded is None else recorded


def _attention_composite(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    """attention as a composition of differentiable ops, recorded as they run."""
    scores = (q @ k.mT) * scale
    if causal:
        lq, lk = q.shape[-2], k.shape[-2]
        keep = pk.asarray(np.tril(np.ones((lq, lk), bool)))
        scores = pk.where(keep, scores, -math.inf)
    return pk.softmax(scores, axis=-1) @ v


attention = declare(attention, "nn", grad="rule", backward=_attention_backward,
                    autocast="lower", aliases=torch_names(
                        "scaled_dot_product_attention",
                        "aten::scaled_dot_product_attention"))


def _attention_operands(q: object, k: object, v: object, causal: object, scale: object
                        ) -> tuple[Tensor, Tensor, Tensor, float, tuple[int, ...]]:
    """attention's operands checked: the tensors, the scale (its default resolved) and the
    broadcast batch shape."""
    op = "attention"
    q, k, v = (as_tensor(t, f"{op}: {n}") for t, n in ((q, "q"), (k, "k"), (v, "v")))
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_dtype_in(t, FLOATS, op, name)
        if t.ndim < 2:
            raise ValueError(f"{op}: {name} must have at least 2 dimensions (..., L, D), got "
                             f"shape {t.shape}")
    d = q.shape[-1]
    lk, dk = k.shape[-2:]
    if dk != d:
        raise ValueError(f"{op}: q and k must have the same last dimension, got {q.shape} and "
                         f"{k.shape}")
    if v.shape[-2] != lk:
        raise ValueError(f"{op}: k and v must have the same length (dimension -2), got "
                         f"{k.shape} and {v.shape}")
    if not isinstance(causal, (bool, int)):
        raise TypeError(f"{op}: causal must be a bool")
    if scale is None:
        scale = 1.0 / math.sqrt(d) if d > 0 else 1.0
    elif isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"{op}: scale must be a number or None, not {type(scale).__name__}")
    batch = broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2], op=op)
    return q, k, v, float(scale), batch


def _attention_recorded(q: Tensor, k: Tensor, v: Tensor, batch: tuple[int, ...], causal: bool,
                        scale: float) -> Tensor | None:
    """The fused forward, which also writes each row's log-sum-exp, recorded with the fused
    backward of `pykern.tensor.nnops.attention_backward`: neither materialises the scores. None
    (nothing recorded) where neither the tile kernel nor the portable fused kernel runs (on
    CPU devices by default, head dimensions past FUSED_MAX_DIM off the tile kernel), for
    empty operands, and where the device's loop cap would cut the backward short: there the
    caller records the composition of ops."""
    lq, d = q.shape[-2:]
    lk, dv = v.shape[-2:]
    if min(lq, lk, d, dv, prod(batch)) == 0 or not fits_loop_budget(lq, lk, d, dv):
        return None
    out = empty(batch + (lq, dv), promote(q.dtype, k.dtype, v.dtype))
    lse = lse_like(out)
    if not coop_attention(q, k, v, out, causal, scale, lse):
        if not _use_fused(d, dv):
            return None
        _attention_fused(q, k, v, out, batch, causal, scale, lse)
    return record("attention", out, (q, k, v),
                  lambda g: attention_grads(q, k, v, out, lse, g, causal, scale))


# tests set this to cap the bytes of the scores that the composed path materialises at once;
# None: the device's largest storage buffer
SCORES_MAX_BYTES: int | None = None


def _attention_composed(q: Tensor, k: Tensor, v: Tensor, out: Tensor, batch: tuple[int, ...],
                        causal: bool, scale: float) -> None:
    """matmul (q @ kᵀ into f32 scores, f64 for f64) → scale, mask and softmax in place →
    matmul with v. The scores of all the batch's matrices may not fit in one storage buffer
    (4 x 16 x 4096² f32 is 4 GiB), so they are made for as many matrices at a time as fit."""
    lq, d = q.shape[-2:]
    lk = k.shape[-2]
    sdt = dt.f64 if out.dtype == dt.f64 else dt.f32
    limit = SCORES_MAX_BYTES or out.device.info.limits.max_storage_buffer_range
    cap = max(1, limit // (lq * lk * sdt.itemsize))  # matrices per piece
    full = [view(t, batch + t.shape[-2:], broadcast_strides(batch, t.shape[:-2],
                                                           t.element_strides[:-2])
                 + t.element_strides[-2:], t.offset) for t in (q, k, v)] + [out]
    pieces = list(_batch_chunks(batch, cap))
    # one buffer for the first piece, the largest; a smaller last one takes its beginning
    scores = empty(_batch_piece(out, *pieces[0]).shape[:-1] + (lk,), sdt)
    for index, start, stop in pieces:
        qp, kp, vp, op_ = (_batch_piece(t, index, start, stop) for t in full)
        pbatch = op_.shape[:-2]
        sp = view(scores, pbatch + (lq, lk), scores.element_strides, 0)
        kt = view(kp, kp.shape[:-2] + (d, lk), kp.element_strides[:-2]
                  + (kp.element_strides[-1], kp.element_strides[-2]), kp.offset)
        if d == 0:
            fill(sp, 0)
        else:
            linalg._matmul_into(qp, kt, sp, pbatch)
        _softmax_rows(sp, sp, sp.ndim - 1, log=False, scale=scale,
                      causal_offset=0 if causal else None, op="attention")
        linalg._matmul_into(sp, vp, op_, pbatch)


def _batch_chunks(batch: tuple[int, ...], cap: int
                  ) -> Iterator[tuple[tuple[int, ...], int, int]]:
    """Cuts the batch into pieces of at most `cap` matrices: yields (index, start, stop), the
    piece being batch[index + (slice(start, stop),)] with the dimensions after it whole (for
    a 0-d batch, one piece: ((), 0, 1))."""
    if not batch:
        yield (), 0, 1
        return
    axis = next(a for a in range(len(batch)) if prod(batch[a + 1:]) <= cap)
    step = max(1, cap // prod(batch[axis + 1:]))
    for index in itertools.product(*(range(n) for n in batch[:axis])):
        for start in range(0, batch[axis], step):
            yield index, start, min(start + step, batch[axis])


def _batch_piece(t: Tensor, index: tuple[int, ...], start: int, stop: int) -> Tensor:
    """The view of `t` (batch..., L, D) at batch[index + (slice(start, stop),)]."""
    if t.ndim == 2:
        return t
    a = len(index)
    st = t.element_strides
    offset = t.offset + sum(i * s for i, s in zip(index, st)) + start * st[a]
    return view(t, (stop - start,) + t.shape[a + 1:], st[a:], offset)


# tests set this to force (True) or forbid (False) the fused kernel; None: by device and sizes
FUSED_ATTENTION: bool | None = None
FUSED_MAX_DIM = 64  # q·k and the output row live in registers: D + Dv + 16 values
ATT_QUERIES = 64  # queries per workgroup, one per invocation
ATT_KEYS = 16  # keys staged in shared memory per step


def _use_fused(d: int, dv: int) -> bool:
    if FUSED_ATTENTION is not None:
        return FUSED_ATTENTION and d >= 1
    return not is_cpu_device() and 1 <= d <= FUSED_MAX_DIM and dv <= FUSED_MAX_DIM


def _attention_fused(q: Tensor, k: Tensor, v: Tensor, out: Tensor, batch: tuple[int, ...],
                     causal: bool, scale: float, lse: Tensor | None = None) -> None:
    """Flash-attention style: one invocation per query keeps its scaled q row, running max,
    running sum and output row in registers; each step stages ATT_KEYS keys and values in
    shared memory, scores them, and rescales the partial output by exp(old max - new max).
    The scores never reach memory. With `lse` (batch + (Lq,), f32 or f64 for f64), each
    row's log-sum-exp of its scaled scores is written there too, for the backward."""
    lq, d = q.shape[-2:]
    lk, dv = v.shape[-2:]
    save = lse is not None
    if lse is None:  # the kernel's lse operand, never written
        lse = empty((1,) * (len(batch) + 1), compute_float(out.dtype))
    strides = [broadcast_strides(batch, t.shape[:-2], t.element_strides[:-2])
               for t in (q, k, v)] + [out.element_strides[:-2],
                                      broadcast_strides(batch, lse.shape[:-1],
                                                        lse.element_strides[:-1])]
    budget = loop_budget()
    if budget is not None and cdiv(lk, ATT_KEYS) > budget:
        raise ValueError(f"attention: {lk} keys are more than this device runs in one "
                         "invocation")
    kern = _attention_kernel(q.dtype, k.dtype, v.dtype, out.dtype, d, dv, causal, save)
    for deltas, bshape, bstrides in batch_pieces(batch or (1,), strides if batch else
                                                 [(0,)] * 5, 2):
        views = [view(t, bshape + t.shape[-2:], st + t.element_strides[-2:], t.offset + delta)
                 for t, st, delta in zip((q, k, v, out), bstrides, deltas)]
        lv = view(lse, bshape + lse.shape[-1:], bstrides[4] + lse.element_strides[-1:],
                  lse.offset + deltas[4])
        kern[cdiv(lq, ATT_QUERIES) * ATT_QUERIES, prod(bshape)](*views, lv, scale)


@functools.lru_cache(maxsize=None)
def _attention_kernel(q_dt: DType, k_dt: DType, v_dt: DType, o_dt: DType, d: int, dv: int,
                      causal: bool, save_lse: bool = False) -> pk.Kernel:
    CF = compute_float(o_dt)  # noqa: N806
    D, DV, CAUSAL, SAVE_LSE = d, dv, causal, save_lse  # noqa: N806
    BQ, BK = ATT_QUERIES, ATT_KEYS  # noqa: N806
    DVS = max(dv, 1)  # noqa: N806
    stage_k = row_stager(CF, d, BK, BQ)
    stage_v = row_stager(CF, DVS, BK, BQ, cols=dv)

    @pk.kernel(workgroup=(BQ, 1, 1))
    def attention_fused(q: q_dt[:, :, :, :], k: k_dt[:, :, :, :], v: v_dt[:, :, :, :],
                        out: o_dt[:, :, :, :], lse: CF[:, :, :], scale: CF):
        Ks = pk.shared(CF, (BK, D))
        Vs = pk.shared(CF, (BK, DVS))
        qr = pk.local(CF, D)
        o = pk.local(CF, DVS)
        sc = pk.local(CF, BK)
        t = pk.local_id(0)
        qi = pk.global_id(0)
        z = pk.global_id(1)
        z1, z2 = pk.unravel(z, out.shape[:2])
        lq = q.shape[2]
        lk = k.shape[2]
        row = min(qi, lq - 1)  # invocations past the last query compute, but do not store
        for c in range(D):
            qr[c] = CF(q[z1, z2, row, c]) * scale
        for c in range(DVS):
            o[c] = 0.0
        m: CF = -math.inf
        total: CF = 0.0
        kend = lk
        if CAUSAL:  # no key beyond this workgroup's last query is needed (uniform bound)
            kend = min(lk, (pk.group_id(0) + 1) * BQ)
        for k0 in range(0, kend, BK):
            stage_k(Ks, k, z1, z2, k0, lk, t)
            stage_v(Vs, v, z1, z2, k0, lk, t)
            pk.barrier()
            bm = m
            for j in range(BK):
                s: CF = 0.0
                for c in range(D):
                    s = pk.fma(qr[c], Ks[j, c], s)
                ok = k0 + j < lk
                if CAUSAL:
                    ok = ok and k0 + j <= qi
                if not ok:
                    s = -math.inf
                sc[j] = s
                bm = max(bm, s)
            if bm != -math.inf:
                alpha: CF = 1.0
                if m != bm:
                    alpha = pk.exp(m - bm)
                total = total * alpha
                for c in range(DVS):
                    o[c] = o[c] * alpha
                for j in range(BK):
                    p: CF = 0.0
                    if sc[j] != -math.inf:
                        p = pk.exp(sc[j] - bm)
                    total += p
                    for c in range(DVS):
                        o[c] = pk.fma(p, Vs[j, c], o[c])
                m = bm
            pk.barrier()
        if qi < lq:
            for c in range(DV):
                out[z1, z2, qi, c] = o[c] / total
            if SAVE_LSE:
                lse[z1, z2, qi] = m + pk.log(total)

    return attention_fused


# ---------------------------------------------------------------- one_hot

def one_hot(indices: object, num_classes: int, dtype: object = dt.f32) -> Tensor:
    """A tensor of shape indices.shape + (num_classes,) with 1 where the last index equals the
    value of `indices` and 0 elsewhere. `indices` of any integer dtype; `dtype` of the result
    any pykern dtype (default f32). Negative or too large indices give an all-zero row (a
    device tensor's values are not checked on the host).

        pk.one_hot(labels, 10)
    """
    op = "one_hot"
    ind = as_tensor(indices, f"{op}: indices")
    check_dtype_in(ind, INDEX_DTYPES, op, "indices")
    num_classes = check_int(num_classes, op, "num_classes", 0)
    d = dt.as_dtype(dtype)
    out = empty(ind.shape + (num_classes,), d)
    if out.size == 0:
        return out
    rest = ind.shape
    strides = [ind.element_strides, out.element_strides[:-1]]
    for deltas, shape, (si, so) in batch_pieces(rest or (1,), strides if rest else [(0,), (0,)],
                                                3):
        iv = view(ind, shape, si, ind.offset + deltas[0])
        ov = view(out, shape + (num_classes,), so + (1,), out.offset + deltas[1])
        _one_hot_kernel(ind.dtype, d)[num_classes, prod(shape)](iv, ov)
    return out


@functools.lru_cache(maxsize=None)
def _one_hot_kernel(i_dt: DType, o_dt: DType) -> pk.Kernel:
    @pk.kernel(workgroup=(16, 4, 1))
    def one_hot4(ind: i_dt[:, :, :], out: o_dt[:, :, :, :]):
        cls = pk.global_id(0)
        r = pk.global_id(1)
        i0, i1, i2 = pk.unravel(r, ind.shape)
        hit = ind[i0, i1, i2] == cls
        out[i0, i1, i2, cls] = 1 if hit else 0

    return one_hot4


one_hot = declare(one_hot, "nn", reference=lambda x, num_classes: np.eye(num_classes)[x],
                  samples={"shapes": ((2, 3),), "integers": (0, 4), "dtypes": ("i32", "i64"),
                           "calls": ({"num_classes": 4},)},
                  aliases=torch_names("nn.functional.one_hot",
                                                      "aten::one_hot"))
