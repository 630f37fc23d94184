"""The per-row losses of `nll_loss` and `cross_entropy` in one kernel each way.

`class_loss_rows(logp, target, ...)` gives each row's loss and the weight its mean divides by,
from (M, C) log-probabilities and M integer classes:

    loss_r   = (1 - ε)·(-w[t_r]·logp[r, t_r]) + (ε/C)·(-Σ_c w_c·logp[r, c])
    weight_r = w[t_r]

(0 and 0 for a row whose target is `ignore_index`; w is all ones without `weight`; ε is the
label smoothing, 0 for nll_loss). One invocation per row. A target outside [0, C) — possible
only on device data inside a `pk.compile` recording, as the losses check host-readable targets
first — picks nothing (its log-probability counts as 0) and takes the weight of the nearest
class, as the one-hot composition did.

Its gradient is one kernel over the (M, C) elements. With respect to the log-probabilities:

    d_rc = -g_r·((1 - ε)·w[t_r]·[c = t_r] + (ε/C)·w_c)

and where the rows came from `log_softmax(x)` (cross_entropy: `from_logits`), the softmax's
backward folds in, with p = exp(logp) and W = Σ_c w_c:

    dx_rc = g_r·(p_rc·((1 - ε)·w[t_r] + (ε/C)·W) - (1 - ε)·w[t_r]·[c = t_r] - (ε/C)·w_c)

So a cross-entropy costs one log_softmax and one row kernel forward and one elementwise kernel
backward, where the composition of where/one_hot/sum ops it replaces took a dozen launches each
way. The arithmetic runs in f32 for 16-bit inputs, f64 for f64.
"""


import functools
from typing import Any

import numpy as np

import pykern as pk
from pykern.autograd.graph import record
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.promotion import compute_float
from pykern.tensor.core.tensor import Tensor, empty


def class_loss_rows(logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
                    smoothing: float, source: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Each row's loss and the weight a mean divides by (module docstring), from `logp` (M, C)
    log-probabilities, `target` (M,) integer classes and `weight` (C,) of logp's dtype or
    None. The loss differentiates with respect to `source`, the logits logp is the
    log_softmax of (cross_entropy), or to logp itself when `source` is None (nll_loss). The
    weight does not differentiate (callers send a weight that requires grad elsewhere)."""
    rows, classes = logp.shape
    ignoring = _fits(ignore_index, target.dtype)
    ign = ignore_index if ignoring else 0
    operands = (logp, target) if weight is None else (logp, target, weight)
    loss, weights = dispatch(("class_loss_rows", ign, ignoring, smoothing), operands,
                             lambda: _losses(logp, target, weight, ign, ignoring, smoothing))
    w = weight if weight is not None else loss  # never read without a weight
    grad_of = logp if source is None else source
    total = None
    if weight is not None and smoothing != 0.0 and source is not None:
        with pk.no_grad():
            total = weight.sum().reshape(1)  # W, which the softmax's part of dx needs

    def backward(g: Any) -> tuple[Tensor]:
        dx = empty((rows, classes), logp.dtype)
        _grad_kernel(logp.dtype, target.dtype, weight is not None, smoothing != 0.0,
                     ignoring, source is not None)[classes, rows](
            logp, target, w, g, total if total is not None else g, dx, ign, smoothing)
        return (dx,)

    saved = (logp, target) if weight is None else (logp, target, weight)
    return record("cross_entropy" if source is not None else "nll_loss", loss, (grad_of,),
                  backward, saved=saved), weights


def _losses(logp: Tensor, target: Tensor, weight: Tensor | None, ign: int, ignoring: bool,
            smoothing: float) -> tuple[Tensor, Tensor]:
    """The forward kernel's launch (through the op plans: `dispatch`)."""
    rows = logp.shape[0]
    loss, weights = empty((rows,), logp.dtype), empty((rows,), logp.dtype)
    w = weight if weight is not None else loss  # never read without a weight
    _rows_kernel(logp.dtype, target.dtype, weight is not None, smoothing != 0.0, ignoring)[
        rows](logp, target, w, loss, weights, ign, smoothing)
    return loss, weights


def _fits(value: int, d: DType) -> bool:
    """Whether the integer `value` is one of `d`'s values (else no target can equal it)."""
    info = np.iinfo(d.numpy)
    return info.min <= value <= info.max


def _wide(i_dt: DType) -> DType:
    """The type a target is compared with the class count in: i32 for narrower integers, whose
    values it holds, else the target's own (which holds the count)."""
    return i_dt if i_dt.itemsize >= 4 else dt.i32


@pk.func
def clamped_class(tw, nw):
    """The class a target `tw` names, clamped into [0, nw) (both of the target's wide type,
    `_wide`): the weight an out-of-range target takes (a picked class only where it lies
    inside)."""
    k = 0
    if tw >= nw:
        k = pk.i32(nw) - 1
    elif tw > 0:
        k = pk.i32(tw)
    return k


@functools.lru_cache(maxsize=None)
def _rows_kernel(f_dt: DType, i_dt: DType, weighted: bool, smoothed: bool, ignoring: bool
                 ) -> pk.Kernel:
    CF, WT = compute_float(f_dt), _wide(i_dt)  # noqa: N806
    WEIGHTED, SMOOTHED, IGNORING = weighted, smoothed, ignoring  # noqa: N806

    @pk.kernel
    def class_loss_rows(logp: f_dt[:, :], t: i_dt[:], w: f_dt[:], loss: f_dt[:],
                        weights: f_dt[:], ign: i_dt, eps: CF):
        r = pk.global_id(0)
        n = logp.shape[1]
        tr = t[r]
        tw, nw = WT(tr), WT(n)
        inside = tw >= WT(0) and tw < nw
        k = clamped_class(tw, nw)
        wt: CF = 1.0
        if WEIGHTED:
            wt = CF(w[k])
        picked: CF = 0.0
        if inside:
            picked = CF(logp[r, k])
        value = -picked * wt
        if SMOOTHED:
            s: CF = 0.0
            for c in range(n):
                if WEIGHTED:
                    s += CF(w[c]) * CF(logp[r, c])
                else:
                    s += CF(logp[r, c])
            value = (1.0 - eps) * value - eps / CF(n) * s
        if IGNORING and tr == ign:
            loss[r] = 0.0
            weights[r] = 0.0
        else:
            loss[r] = value
            weights[r] = wt

    return class_loss_rows


@functools.lru_cache(maxsize=None)
def _grad_kernel(f_dt: DType, i_dt: DType, weighted: bool, smoothed: bool, ignoring: bool,
                 from_logits: bool) -> pk.Kernel:
    CF, WT = compute_float(f_dt), _wide(i_dt)  # noqa: N806
    WEIGHTED, SMOOTHED, IGNORING = weighted, smoothed, ignoring  # noqa: N806
    LOGITS = from_logits  # noqa: N806

    @pk.kernel(workgroup=(16, 4, 1))
    def class_loss_grad(logp: f_dt[:, :], t: i_dt[:], w: f_dt[:], g: f_dt[:], total: f_dt[:],
                        dx: f_dt[:, :], ign: i_dt, eps: CF):
        c = pk.global_id(0)
        r = pk.global_id(1)
        n = logp.shape[1]
        tr = t[r]
        tw, nw = WT(tr), WT(n)
        inside = tw >= WT(0) and tw < nw
        k = clamped_class(tw, nw)
        wt: CF = 1.0
        wc: CF = 1.0
        if WEIGHTED:
            wt = CF(w[k])
            wc = CF(w[c])
        a: CF = 0.0  # the picked class's share: (1 - eps) w[t] where a class was picked
        if inside:
            a = (1.0 - eps) * wt
        d: CF = 0.0  # -d/dlogp_rc of the row's loss, per unit of g_r
        if inside and c == k:
            d = a
        if SMOOTHED:
            d += eps / CF(n) * wc
        gr = CF(g[r])
        value = -gr * d
        if LOGITS:
            q = a
            if SMOOTHED:
                if WEIGHTED:
                    q += eps / CF(n) * CF(total[0])
                else:
                    q += eps
            value = gr * (pk.exp(CF(logp[r, c])) * q - d)
        if IGNORING and tr == ign:
            dx[r, c] = 0.0
        else:
            dx[r, c] = value

    return class_loss_grad
