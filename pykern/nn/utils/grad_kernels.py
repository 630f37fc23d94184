"""The kernels of `clip_grad_norm_`: several gradients per launch, as PyTorch's foreach path.

A Vulkan kernel binds a fixed set of buffers, so each launch takes up to `SLOTS` gradients
(flat 1-D views of them), seen as one index space: element `i` belongs to the first slot `k`
with `i < ends[row, k]` (the running totals of the slots' sizes, one row of the table per
launch), at position `i - ends[row, k - 1]` there. Slots a launch does not use repeat the last
total, so they are never read.

`norm_partials` writes one partial result per workgroup (sum of |g|**p, or max |g|), reduced
in shared memory; `scale` multiplies every element by `max_norm / (norm + 1e-6)` where that
is below 1, reading the norm from the device, so nothing waits for the host.
"""

# no `from __future__ import annotations`: the kernels' annotations name the dtype P of the
# enclosing function, which a lazily evaluated annotation could not see (P is no closure
# variable of a body that never mentions it)
import functools

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core.workgroup import merge_halving

SLOTS = 8  # gradients per launch
GROUP = 64  # invocations per workgroup of norm_partials: one partial each

# what norm_partials accumulates per element
SQUARES, POWERS, MAXIMUM = 0, 1, 2


def accumulator(dtype: DType) -> DType:
    """The dtype a gradient's norm is computed in: f64 for f64 gradients, else f32."""
    return dt.f64 if dtype == dt.f64 else dt.f32


@pk.func
def slot_value(g, i, lo, hi, v):
    """g[i - lo] where slot `g` holds elements [lo, hi) of the index space, else `v`."""
    if lo <= i and i < hi:
        return v.dtype(g[i - lo])
    return v


@pk.func
def pick(g0, g1, g2, g3, g4, g5, g6, g7, ends, row, i):
    """Element `i` of the index space of one launch's eight gradients (row `row` of `ends`
    holds their running sizes)."""
    v = g0.dtype(0)
    v = slot_value(g0, i, 0, ends[row, 0], v)
    v = slot_value(g1, i, ends[row, 0], ends[row, 1], v)
    v = slot_value(g2, i, ends[row, 1], ends[row, 2], v)
    v = slot_value(g3, i, ends[row, 2], ends[row, 3], v)
    v = slot_value(g4, i, ends[row, 3], ends[row, 4], v)
    v = slot_value(g5, i, ends[row, 4], ends[row, 5], v)
    v = slot_value(g6, i, ends[row, 5], ends[row, 6], v)
    return slot_value(g7, i, ends[row, 6], ends[row, 7], v)


@pk.func
def scale_slot(g, i, lo, hi, coef):
    """g[i - lo] *= coef (in coef's dtype) where slot `g` holds elements [lo, hi) of the
    index space."""
    if lo <= i and i < hi:
        g[i - lo] = g.dtype(coef.dtype(g[i - lo]) * coef)


@functools.lru_cache(maxsize=None)
def norm_partials(P: DType, MODE: int) -> pk.Kernel:  # noqa: N803
    """partials[base + w] = the sum of |g|**power (|g|², or the max of |g| for MAXIMUM) over the
    elements of workgroup w of the index space, in the accumulator dtype of `P`."""
    C = accumulator(P)  # noqa: N806

    @pk.func
    def fold(parts, i, j):
        x = parts[0, i]
        y = parts[0, j]
        if MODE == MAXIMUM:
            # a NaN wins, so that a NaN gradient gives a NaN norm as in PyTorch
            parts[0, i] = x if x > y or pk.isnan(x) else y
        else:
            parts[0, i] = x + y

    @pk.kernel(workgroup=(GROUP, 1, 1))
    def grad_norm_partials(g0: P[:], g1: P[:], g2: P[:], g3: P[:], g4: P[:], g5: P[:],
                           g6: P[:], g7: P[:], ends: pk.i32[:, :], row: pk.i32, power: C,
                           base: pk.i32, partials: C[:]):
        i = pk.global_id(0)
        t = pk.local_id(0)
        buf = pk.shared(C, (1, GROUP))
        v: C = 0.0
        if i < pk.grid(0):  # barriers: the kernel runs past the grid (language.md)
            a = abs(C(pick(g0, g1, g2, g3, g4, g5, g6, g7, ends, row, i)))
            if MODE == SQUARES:
                v = a * a
            elif MODE == POWERS:
                v = pk.pow(a, power)
            else:
                v = a
        buf[0, t] = v
        merge_halving(fold, buf, t, GROUP)
        if t == 0:
            # global_id, not group_id: a launch past the device's workgroup count is split
            partials[base + i // GROUP] = buf[0, 0]

    return grad_norm_partials


@functools.lru_cache(maxsize=None)
def scale(P: DType) -> pk.Kernel:  # noqa: N803
    """g = g * min(max_norm / (norm[0] + 1e-6), 1) over one launch's index space, in place;
    nothing is written where the factor is 1 (a NaN factor is applied, as PyTorch does)."""
    C = accumulator(P)  # noqa: N806

    @pk.kernel
    def scale_grads(g0: P[:], g1: P[:], g2: P[:], g3: P[:], g4: P[:], g5: P[:], g6: P[:],
                    g7: P[:], ends: pk.i32[:, :], row: pk.i32, norm: C[:], max_norm: C):
        i = pk.global_id(0)
        coef = max_norm / (norm[0] + 1e-6)
        if not coef >= 1.0:
            scale_slot(g0, i, 0, ends[row, 0], coef)
            scale_slot(g1, i, ends[row, 0], ends[row, 1], coef)
            scale_slot(g2, i, ends[row, 1], ends[row, 2], coef)
            scale_slot(g3, i, ends[row, 2], ends[row, 3], coef)
            scale_slot(g4, i, ends[row, 3], ends[row, 4], coef)
            scale_slot(g5, i, ends[row, 4], ends[row, 5], coef)
            scale_slot(g6, i, ends[row, 5], ends[row, 6], coef)
            scale_slot(g7, i, ends[row, 6], ends[row, 7], coef)

    return scale_grads
