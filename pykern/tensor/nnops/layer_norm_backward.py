"""layer_norm with its own backward kernel, for inputs that require grad.

The forward runs the fused kernel of pykern.tensor.nnops.nn_ops. The backward is one kernel over
the rows that recomputes each row's mean and 1/std (cheaper than keeping them: a row is read again
anyway), normalises it (x̂), and with gw = g·w and its two row sums

    dx = rstd · (gw − mean(gw) − x̂ · mean(gw · x̂))

writes dx and x̂; the weight's gradient is then Σ g·x̂ and the bias's Σ g over the rows. Four
launches in all, where the same formula as a composition of ops is about thirty.
"""


import functools
from collections.abc import Callable, Sequence
from typing import Any

import pykern as pk
from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad
from pykern.lang.dtypes import DType
from pykern.ops.choice import config, device_info
from pykern.tensor.core.promotion import compute_float
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.core.workgroup import add_columns, merge_halving


def layer_norm(fused: Callable[..., Tensor], x: Any, shape: Sequence[int], weight: Any,
               bias: Any, eps: float) -> Tensor:
    """`fused(x, shape, weight, bias, eps)` (the forward, checked there) with its backward
    recorded."""
    with no_grad():
        out = fused(x, shape, weight, bias, eps)
    if out.size == 0:
        return out

    def back(g: Tensor) -> tuple[Any, Any, Any]:
        length = 1
        for n in shape:
            length *= n
        rows = x.size // length
        xr = x.contiguous().reshape(rows, length)
        gr = g.contiguous().reshape(rows, length)
        w = weight.contiguous().reshape(length) if weight is not None else None
        dx = empty((rows, length), x.dtype)
        xhat = empty((rows, length), compute_float(x.dtype))
        wg = config("layer_norm", device_info("layer_norm")).backward_workgroup
        kern = _kernel(x.dtype, g.dtype, w.dtype if w is not None else x.dtype, w is not None,
                       wg)
        kern[wg, rows](xr, gr, w if w is not None else xr.reshape(-1), dx, xhat, float(eps))
        gw = gb = None
        if getattr(weight, "requires_grad", False):
            gw = pk.sum(gr * xhat, axis=0).reshape(tuple(shape))
        if getattr(bias, "requires_grad", False):
            gb = pk.sum(gr, axis=0).reshape(tuple(shape))
        return dx.reshape(x.shape), gw, gb

    return record("layer_norm", out, (x, weight, bias), back)


@pk.func
def _workgroup_sum(s, t, wg):
    """The sum of the `wg` values in row 0 of the shared `s` (one per invocation `t`): every
    invocation of the workgroup calls it, and gets the total."""
    merge_halving(add_columns, s, t, wg)
    total = s[0, 0]
    pk.barrier()  # s may be written again next
    return total


@functools.lru_cache(maxsize=None)
def _kernel(x_dt: DType, g_dt: DType, w_dt: DType, has_w: bool, wg: int) -> pk.Kernel:
    CF = compute_float(x_dt)  # noqa: N806
    HAS_W = has_w  # noqa: N806
    WG = wg  # noqa: N806

    @pk.kernel(workgroup=(WG, 1, 1))
    def layer_norm_backward_rows(x: x_dt[:, :], g: g_dt[:, :], w: w_dt[:], dx: x_dt[:, :],
                                 xhat: CF[:, :], eps: CF):
        s = pk.shared(CF, (1, WG))
        t = pk.local_id(0)
        r = pk.global_id(1)
        length = x.shape[1]
        n = CF(length)
        # the row's mean, then its variance: two passes (exact enough for any offset), the
        # second correcting the first mean's rounding by the deviations' own sum, so that a
        # constant row gets x̂ = 0 exactly, as the forward's Welford mean gives
        acc: CF = 0.0
        for j in range(t, length, WG):
            acc += CF(x[r, j])
        s[0, t] = acc
        mean = _workgroup_sum(s, t, WG) / n
        acc = 0.0
        acc2: CF = 0.0
        for j in range(t, length, WG):
            d = CF(x[r, j]) - mean
            acc += d
            acc2 += d * d
        s[0, t] = acc
        shift = _workgroup_sum(s, t, WG) / n
        s[0, t] = acc2
        var = pk.max(_workgroup_sum(s, t, WG) / n - shift * shift, CF(0.0))
        mean = mean + shift
        rstd = 1.0 / pk.sqrt(var + eps)
        # the sums of gw and gw·x̂ over the row
        a1: CF = 0.0
        a2: CF = 0.0
        for j in range(t, length, WG):
            h = (CF(x[r, j]) - mean) * rstd
            xhat[r, j] = h
            gw = CF(g[r, j])
            if HAS_W:
                gw = gw * CF(w[j])
            a1 += gw
            a2 += gw * h
        s[0, t] = a1
        m1 = _workgroup_sum(s, t, WG) / n
        s[0, t] = a2
        m2 = _workgroup_sum(s, t, WG) / n
        for j in range(t, length, WG):
            gw = CF(g[r, j])
            if HAS_W:
                gw = gw * CF(w[j])
            dx[r, j] = rstd * (gw - m1 - xhat[r, j] * m2)

    return layer_norm_backward_rows
