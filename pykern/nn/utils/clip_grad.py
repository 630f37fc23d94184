"""`pk.nn.utils.clip_grad_norm_`: scale gradients so that their joint norm is at most max_norm.

Done on the device in a few launches, with no read-back: the gradients of each dtype are
taken `SLOTS` at a time, one launch writing per-workgroup partial sums of |g|**p, one
reduction (`pk.sum`, or `pk.max` for the inf-norm) and one root giving the total norm, and one
launch per `SLOTS` gradients scaling them in place by a factor computed from that norm by the
kernel itself.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.nn.utils import grad_kernels as gk
from pykern.tensor.core.tensor import Tensor


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scales the `.grad` of `parameters` in place by min(1, max_norm / (total + 1e-6)), where
    total is the `norm_type`-norm of all the gradients together (as if concatenated), and
    returns total as a 0-d tensor (f32; f64 when any gradient is f64), as torch does:

        loss.backward()
        pk.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()

    Parameters without a gradient are skipped. `norm_type` is a positive number or
    `float("inf")` (the largest |g|). With `error_if_nonfinite=True` a NaN or infinite total
    raises RuntimeError before any gradient is changed (this reads the norm back, so it waits
    for the device). `foreach` is accepted for PyTorch's signature; pykern always takes
    several gradients per launch. A gradient that is not contiguous is replaced by a
    contiguous copy first."""
    p = _check_arguments(max_norm, norm_type)
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = _contiguous_grads(params)
    norm_dtype = dt.f64 if any(g.dtype == dt.f64 for g in grads) else dt.f32
    with pk.no_grad():
        if not grads:
            return pk.zeros((), norm_dtype)
        total = _total_norm(_by_dtype(grads), p, norm_dtype)
        if error_if_nonfinite and not math.isfinite(float(total)):
            raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                               f"gradients is {float(total)}, so they cannot be clipped; "
                               "pass error_if_nonfinite=False to clip anyway")
        # a gradient shared by two parameters counts twice in the norm, is scaled once
        distinct = list({(id(g.buffer), g.offset): g for g in grads}.values())
        for dtype, gs in _by_dtype(distinct).items():
            norm = _as_dtype(total.reshape((1,)), gk.accumulator(dtype))
            slots, table = _launch_plan(gs)
            for row, (views, ends) in enumerate(slots):
                gk.scale(dtype)[int(ends[-1])](*views, table, row, norm, float(max_norm))
    return total


def _check_arguments(max_norm: object, norm_type: object) -> float:
    for name, value in (("max_norm", max_norm), ("norm_type", norm_type)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"clip_grad_norm_: {name} must be a number, not "
                            f"{type(value).__name__}")
    if not norm_type > 0:  # NaN fails too
        raise ValueError(f"clip_grad_norm_: norm_type must be positive or inf, got {norm_type}")
    return float(norm_type)


def _contiguous_grads(params: list[object]) -> list[Tensor]:
    """The gradients of `params` that exist and are not empty, each contiguous."""
    grads = []
    for k, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"clip_grad_norm_: parameters[{k}] is a {type(p).__name__}, not "
                            "a pk.Tensor")
        g = p.grad
        if g is None:
            continue
        if not g.is_contiguous:
            g = p.grad = g.contiguous()
        if g.size:
            grads.append(g)
    return grads


def _by_dtype(grads: list[Tensor]) -> dict[DType, list[Tensor]]:
    by_dtype: dict[DType, list[Tensor]] = {}
    for g in grads:
        by_dtype.setdefault(g.dtype, []).append(g)
    return by_dtype


def _total_norm(by_dtype: dict[DType, list[Tensor]], p: float, norm_dtype: DType) -> Tensor:
    """The joint p-norm of all the gradients, a 0-d tensor of `norm_dtype`."""
    mode = gk.SQUARES if p == 2 else gk.MAXIMUM if math.isinf(p) else gk.POWERS
    parts = []
    for dtype, gs in by_dtype.items():
        slots, table = _launch_plan(gs)
        groups = [-(-int(ends[-1]) // gk.GROUP) for _, ends in slots]
        partials = pk.empty((sum(groups),), gk.accumulator(dtype))
        base = 0
        for row, ((views, ends), n) in enumerate(zip(slots, groups)):
            gk.norm_partials(dtype, mode)[int(ends[-1])](*views, table, row, p, base, partials)
            base += n
        part = pk.max(partials) if mode == gk.MAXIMUM else pk.sum(partials)
        parts.append(_as_dtype(part, norm_dtype))
    total = parts[0]
    for part in parts[1:]:
        total = pk.maximum(total, part) if mode == gk.MAXIMUM else total + part
    if mode == gk.SQUARES:
        return pk.sqrt(total)
    return total if mode == gk.MAXIMUM else total ** (1.0 / p)


def _launch_plan(grads: list[Tensor]) -> tuple[list[tuple[list[Tensor], np.ndarray]], Tensor]:
    """The launches over `grads` (of one dtype), `SLOTS` at a time: each one's views and
    running sizes, and the table of those sizes (row k for launch k) on the device."""
    slots = [_slots(grads[k:k + gk.SLOTS]) for k in range(0, len(grads), gk.SLOTS)]
    ends = np.stack([e for _, e in slots])
    if ends.max() >= 2**31:
        raise ValueError("clip_grad_norm_: a launch over 2**31 gradient elements or more")
    return slots, pk.asarray(ends.astype(np.int32))


def _slots(batch: list[Tensor]) -> tuple[list[Tensor], np.ndarray]:
    """The flat views bound to a launch's slots (the first repeated in the unused ones, never
    read there) and the running totals of their sizes."""
    views = [g.reshape((g.size,)) for g in batch]
    ends = np.cumsum([v.size for v in views])
    views += [views[0]] * (gk.SLOTS - len(views))
    ends = np.concatenate([ends, np.full(gk.SLOTS - len(ends), ends[-1])])
    return views, ends


def _as_dtype(t: Tensor, dtype: DType) -> Tensor:
    return t if t.dtype == dtype else t.astype(dtype)
