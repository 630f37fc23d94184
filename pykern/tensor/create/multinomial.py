"""`pk.multinomial`: PyTorch's `torch.multinomial`, category indices drawn from rows of
non-negative weights with pk.random's generator (so `pk.random.seed` makes the draws repeat).

- With replacement, each draw inverts the row's cumulative weights at a uniform point (one
  binary search per draw, in a kernel).
- Without replacement, the draws are the categories of the `num_samples` smallest keys
  log(E_j) - log(w_j), E_j independent exponentials: category j comes first with probability
  w_j / sum(w), the next among the rest likewise, which is drawing one at a time and taking
  the drawn weight out, in that order (`pk.topk` of the keys).

(numpy's `np.random.multinomial(n, pvals)` counts draws instead; pykern keeps PyTorch's
function under PyTorch's name, at the top level, and has no `pk.random.multinomial`.)
"""

from __future__ import annotations

import pykern as pk

from pykern.autograd import no_grad
from pykern.lang import dtypes as dt
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.create import random
from pykern.tensor.reduce import reduction, scan, sort
from pykern.tensor.core.checks import check_int
from pykern.tensor.index.indexing import stack
from pykern.tensor.core.tensor import Tensor, empty


@pk.kernel
def _inverse_cdf(cdf: pk.Array, u: pk.Array, out: pk.i64[:, :], samples: int):
    """out[r, s]: the first category whose cumulative weight passes u[r, s] * total (past
    the end, as rounding may put it: the last category of positive weight)."""
    i = pk.global_id(0)
    r = i // samples
    s = i - r * samples
    k = cdf.shape[1]
    total = cdf[r, k - 1]
    target = u[r, s] * total
    past_end = target >= total
    lo = 0
    hi = k - 1
    while lo < hi:
        mid = (lo + hi) // 2
        c = cdf[r, mid]
        if c > target or (past_end and c >= total):
            hi = mid
        else:
            lo = mid + 1
    out[r, s] = pk.i64(lo)


def multinomial(input: object, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: object = None) -> Tensor:
    """`num_samples` category indices (i64) per row of `input` (1-D: one distribution, 2-D:
    one per row), each drawn with probability proportional to its weight, as PyTorch's
    `torch.multinomial`: without replacement (the default) no category repeats in a row and
    the draws come in the order drawn; the weights need not add up to 1. Weights must be
    finite and non-negative, with enough positive ones per row (a ValueError otherwise).

        pk.random.seed(0)
        next_token = pk.multinomial(probs, num_samples=1)     # probs (batch, vocab)
    """
    op = "multinomial"
    w = ew.as_tensor(input, f"{op}: input")
    n = check_int(num_samples, op, "num_samples", 1)
    if generator is not None:
        raise TypeError(f"{op}: generator= is not supported; pk.random.seed seeds the one "
                        "generator pk.random draws from")
    if not w.dtype.is_float:
        raise TypeError(f"{op}: input must hold float weights, not {w.dtype.name}")
    if w.ndim not in (1, 2) or w.shape[-1] == 0:
        raise ValueError(f"{op}: input must be 1-D or 2-D with at least one category, got "
                         f"shape {w.shape}")
    if not replacement and n > w.shape[-1]:
        raise ValueError(f"{op}: cannot draw {n} samples without replacement from "
                         f"{w.shape[-1]} categories")
    with no_grad():  # indices: nothing to differentiate
        rows = w.reshape(-1, w.shape[-1])
        if w.dtype != dt.f64:
            rows = ew.astype(rows, dt.f32, copy=False)
        _check_weights(rows, 1 if replacement else n)
        drawn = _with_replacement(rows, n) if replacement else _without_replacement(rows, n)
    return drawn.reshape(n) if w.ndim == 1 else drawn


def _check_weights(rows: Tensor, positive: int) -> None:
    """ValueError unless every weight is finite and >= 0 and every row has `positive`
    positive ones (one read of two numbers from the device)."""
    bad = reduction.any(ew.logical_or(ew.logical_not(ew.isfinite(rows)), ew.less(rows, 0)))
    fewest = reduction.min(reduction.sum(ew.astype(ew.greater(rows, 0), dt.i64), axis=1))
    found_bad, fewest_positive = stack([ew.astype(bad, dt.i64), fewest]).numpy().tolist()
    if found_bad:
        raise ValueError("multinomial: weights must be finite and non-negative")
    if fewest_positive < positive:
        raise ValueError(f"multinomial: a row has {fewest_positive} positive weights, "
                         f"fewer than the {positive} the draws need")


def _with_replacement(rows: Tensor, n: int) -> Tensor:
    cdf = scan.cumsum(rows, axis=1)
    u = random.rand(rows.shape[0], n, dtype=rows.dtype)
    out = empty((rows.shape[0], n), dt.i64)
    _inverse_cdf[out.size](cdf, u, out, n)
    return out


def _without_replacement(rows: Tensor, n: int) -> Tensor:
    u = random.rand(*rows.shape, dtype=rows.dtype)
    exponential = ew.negative(ew.log1p(ew.negative(u)))  # -log(1 - u): in [0, inf)
    keys = ew.subtract(ew.log(exponential), ew.log(rows))
    keys = ew.where(ew.greater(rows, 0), keys, float("inf"))
    return sort.topk(keys, n, axis=1, largest=False)[1]
