"""The losses of `pk.nn.functional`: `nll_loss`, `cross_entropy`, `mse_loss`, with PyTorch's
arguments (`weight`, `ignore_index`, `reduction`, `label_smoothing`) and its means (a
weighted mean divides by the weights of the targets that count).

nll_loss and cross_entropy compute each row's loss in one kernel and differentiate it in one
more (`pykern.tensor.nnops.class_loss`; cross_entropy's gradient folds in log_softmax's). A
`weight` that itself requires grad takes the composition of differentiable ops instead: the
target's log-probability picked from its row by a one-hot `where` (a multiply would turn a
masked-out -inf into NaN).
"""

from __future__ import annotations

import numpy as np

import pykern as pk
from pykern.autograd.mode import is_grad_enabled
from pykern.jit import compiling
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.nnops.class_loss import class_loss_rows

REDUCTIONS = ("mean", "sum", "none")


def nll_loss(input: object, target: object, weight: object = None,  # noqa: A002
             *, ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of the integer class `target` given log-probabilities
    `input` along the class dimension 1: input (N, C), (N, C, d1, ...) or (C,), target (N,),
    (N, d1, ...) or (). Element i's loss is -weight[t_i] · input[i, t_i] (weight: per-class,
    (C,), default ones); targets equal to `ignore_index` add nothing, and "mean" divides by
    the sum of the weights of the others (NaN when none counts, as PyTorch).

        loss = F.nll_loss(F.log_softmax(logits, dim=1), labels)
    """
    op = "nll_loss"
    logp, t = _operands(input, target, op)
    rows, t, shape = _classes_last(logp, t, op)
    w = _fused_weight(weight, rows, op)
    if w is False:
        loss, weights = _picked_loss(rows, t, weight, ignore_index, op)
        return _reduce(loss.reshape(shape), reduction, op, weights)
    return _fused_loss(rows, t, w, ignore_index, 0.0, None, shape, reduction, op)


def cross_entropy(input: object, target: object, weight: object = None,  # noqa: A002
                  *, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """nll_loss of log_softmax(input) along the class dimension 1: input (N, C),
    (N, C, d1, ...) or (C,) logits, target (N,), (N, d1, ...) or () integer classes;
    `weight`, `ignore_index` and `reduction` as nll_loss's. `label_smoothing` ε mixes in the
    uniform distribution: each loss becomes (1 - ε)·nll + ε/C · Σ_c -weight[c]·log p_c, as
    PyTorch's. Class probabilities as targets are not supported."""
    op = "cross_entropy"
    logits, t = _operands(input, target, op)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be in [0, 1], got {label_smoothing}")
    rows, t, shape = _classes_last(logits, t, op)
    w = _fused_weight(weight, rows, op)
    if w is not False:
        with pk.no_grad():
            logp = pk.log_softmax(rows, axis=-1)
        if w is not None:
            w = w.astype(logp.dtype, copy=False)  # (logp is f32 for 16-bit logits in autocast)
        return _fused_loss(logp, t, w, ignore_index, float(label_smoothing), rows, shape,
                           reduction, op)
    logp = pk.log_softmax(rows, axis=-1)
    loss, weights = _picked_loss(logp, t, weight, ignore_index, op)
    if label_smoothing:
        classes = rows.shape[1]
        w = logp if weight is None else logp * _class_weights(weight, classes, logp, op)
        smooth = pk.where(t != ignore_index, -w.sum(axis=-1), 0.0)
        loss = (1.0 - label_smoothing) * loss + (label_smoothing / classes) * smooth
    return _reduce(loss.reshape(shape), reduction, op, weights)


def mse_loss(input: object, target: object, reduction: str = "mean") -> Tensor:  # noqa: A002
    """(input - target)², averaged, summed or kept (`reduction`)."""
    x = as_tensor(input, "mse_loss: input")
    y = as_tensor(target, "mse_loss: target")
    if x.shape != y.shape:
        raise ValueError(f"mse_loss: input shape {x.shape} and target shape {y.shape} differ")
    d = x - y
    return _reduce(d * d, reduction, "mse_loss")


def legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The `reduction` that PyTorch's deprecated `size_average` and `reduce` arguments mean
    (when either is given): "none" without reduce, "sum" without size_average, else
    "mean"."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


# ---------------------------------------------------------------- helpers


def _operands(input: object, target: object, op: str) -> tuple[Tensor, Tensor]:  # noqa: A002
    x = as_tensor(input, f"{op}: input")
    t = as_tensor(target, f"{op}: target")
    if not x.dtype.is_float:
        raise TypeError(f"{op}: input must be a float tensor, got {x.dtype.name}")
    if not t.dtype.is_int:
        raise TypeError(f"{op}: target must hold integer class indices, got {t.dtype.name} "
                        f"(class probabilities are not supported)")
    return x, t


def _classes_last(x: Tensor, target: Tensor, op: str
                  ) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """(N, C, d1, ...) scores as (M, C) rows and the target as (M,), plus the loss's shape
    ((C,) scores with a 0-d target: one row, a 0-d loss)."""
    if x.ndim == 1:
        if target.ndim != 0:
            raise ValueError(f"{op}: a 1-d input (C,) needs a 0-d target, got shape "
                             f"{target.shape}")
        return x.reshape(1, -1), target.reshape(1), ()
    if x.ndim < 1:
        raise ValueError(f"{op}: input must be (N, C), (N, C, d1, ...) or (C,), got a 0-d "
                         "tensor")
    n, c = x.shape[:2]
    rest = x.shape[2:]
    if target.shape != (n,) + rest:
        raise ValueError(f"{op}: target must have shape {(n,) + rest} for input shape "
                         f"{x.shape}, got {target.shape}")
    if not rest:
        return x, target, (n,)  # rows already: no views to record
    x = x.permute((0,) + tuple(range(2, x.ndim)) + (1,))
    return x.reshape(-1, c), target.reshape(-1), (n,) + rest


def _fused_loss(logp: Tensor, t: Tensor, w: Tensor | None, ignore_index: int, smoothing: float,
                source: Tensor | None, shape: tuple[int, ...], reduction: str, op: str
                ) -> Tensor:
    """The loss by the row kernels (`class_loss_rows`, differentiated with respect to `source`,
    or `logp` where None), in the loss's `shape` (a view recorded only where it changes) and
    reduced. Without class weights a mean divides by the count of the targets that count,
    read on the host with the range check."""
    count = _check_targets(t, logp.shape[1], ignore_index, op)
    loss, weights = class_loss_rows(logp, t, w, ignore_index, smoothing, source)
    if loss.shape != shape:
        loss = loss.reshape(shape)
    return _reduce(loss, reduction, op, weights, count if w is None else None)


def _fused_weight(weight: object, rows: Tensor, op: str) -> Tensor | None | bool:
    """The class weights as the fused row kernels take them (None for none), or False where
    the composition runs instead: a weight that requires grad (the kernels do not
    differentiate it) or no rows to run over."""
    if rows.size == 0:
        return False
    if weight is None:
        return None
    w = _class_weights(weight, rows.shape[1], rows, op)
    return False if w.requires_grad and is_grad_enabled() else w


def _check_targets(target: Tensor, classes: int, ignore_index: int, op: str) -> int | None:
    """Class indices outside [0, C) other than ignore_index are an error, as in PyTorch (read
    back to the host: a wrong label would otherwise give a silently wrong loss). Not inside a
    `pk.compile` recording, whose replays could not read them again (docs/performance.md).
    Returns how many targets count (are not ignore_index), None where none were read."""
    if compiling.active() is not None:
        return None
    t = target.numpy()
    counted = t != ignore_index
    bad = counted & ((t < 0) | (t >= classes))
    if bad.any():
        raise IndexError(f"{op}: target {int(t[bad][0])} is out of range for {classes} "
                         f"classes (ignore_index={ignore_index})")
    return int(np.count_nonzero(counted))


def _class_weights(weight: object, classes: int, like: Tensor, op: str) -> Tensor:
    w = as_tensor(weight, f"{op}: weight")
    if w.shape != (classes,):
        raise ValueError(f"{op}: weight must have shape ({classes},) (one per class), got "
                         f"{w.shape}")
    return w.astype(like.dtype, copy=False)


def _picked_loss(logp: Tensor, t: Tensor, weight: object, ignore_index: int, op: str
                 ) -> tuple[Tensor, Tensor]:
    """Per row, -weight[t]·logp[t] (0 for an ignored target), and the weights that a mean
    divides by (weight[t], 0 for an ignored target)."""
    classes = logp.shape[1]
    _check_targets(t, classes, ignore_index, op)
    valid = t != ignore_index
    safe = pk.where(valid, t, 0)
    picked = pk.where(pk.one_hot(safe, classes, dtype=pk.bool_), logp, 0.0).sum(axis=-1)
    if weight is None:
        weights = valid.astype(logp.dtype)
        loss = pk.where(valid, -picked, 0.0)
    else:
        weights = pk.where(valid, pk.take(_class_weights(weight, classes, logp, op), safe), 0.0)
        # a `where`, not a multiply: an ignored row's picked entry may be -inf
        loss = pk.where(valid, -picked * weights, 0.0)
    return loss, weights


def _reduce(loss: Tensor, reduction: str, op: str, weights: Tensor | None = None,
            count: int | None = None) -> Tensor:
    """`loss` summed, averaged (over the sum of `weights` when given, else its size) or
    kept. `count`: the sum of `weights` known on the host (all ones and zeros), which then
    divides with no reduction of its own on the device (not 0: 0/0's nan comes from the
    device's sum)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return total
    if count:
        return total / count
    return total / (loss.size if weights is None else weights.sum())
