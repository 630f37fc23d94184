"""softmax, log_softmax and layer_norm on the host device: one row per invocation, no barriers.

Each invocation walks its row a few times with loops whose variable indexes the row, so LLVM
vectorises them (vector loads of a contiguous row; exp and log stay calls of the C library,
one per element). Row statistics are kept in `lanes` partial results (`pk.local`; 256 by
default, `config("softmax").host_lanes`), lane l taking elements l, l + lanes, ..., and merged
by a tree: a blocked pairwise sum, at most L / lanes elements in series then log2(lanes)
levels.

- softmax: the row's max (nan if any element is nan), then the sum of exp(x - max), then each
  element's exp(x - max) / sum. Where the output holds the compute type (f32, f64) the
  exponentials are stored by the second walk and divided in place by the third, so each
  element's exp is computed once; f16 and bf16 outputs recompute it from x (one rounding).
- log_softmax: max, sum of exponentials, then x - max - log(sum).
- layer_norm: the mean, then the mean squared deviation from it (two exact passes rather than
  Welford's running update), then (x - mean) / sqrt(var + eps) * weight + bias.
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.core.promotion import compute_float


@pk.func
def lane_width(n, lanes):
    """The lanes a row of n elements uses: a power of two, at least n up to lanes.shape[0]."""
    width = 1
    while width < n and width < lanes.shape[0]:
        width *= 2
    return width


@pk.func
def fill_lanes(lanes, width, value):
    for t in range(width):
        lanes[t] = value


@pk.func
def lane_sum(lanes, width):
    """The sum of lanes[:width] by a tree (width a power of two)."""
    step = width // 2
    while step > 0:
        for t in range(step):
            lanes[t] = lanes[t] + lanes[t + step]
        step //= 2
    return lanes[0]


@pk.func
def larger(a, b):
    """max(a, b), nan if either is nan."""
    return pk.select(a != a, a, pk.select(a >= b, a, b))


@pk.func
def row_max(x, i0, i1, i2, scale, lanes, width):
    """max(x[i0, i1, i2, :] * scale) in the lanes' type; nan if any element is nan."""
    n = x.shape[3]
    fill_lanes(lanes, width, lanes.dtype(x[i0, i1, i2, 0]) * scale)
    for j0 in range(0, n, lanes.shape[0]):
        for j in range(j0, min(j0 + lanes.shape[0], n)):
            v = lanes.dtype(x[i0, i1, i2, j]) * scale
            lanes[j - j0] = larger(lanes[j - j0], v)
    step = width // 2
    while step > 0:
        for t in range(step):
            lanes[t] = larger(lanes[t], lanes[t + step])
        step //= 2
    return lanes[0]


@functools.lru_cache(maxsize=None)
def softmax_kernel(x_dt: DType, o_dt: DType, log: bool, n_lanes: int) -> pk.Kernel:
    CF = compute_float(x_dt)  # noqa: N806
    LANES = n_lanes  # noqa: N806
    LOG = log  # noqa: N806
    IN_PLACE = o_dt == CF  # noqa: N806  (exponentials stored, then divided)

    @pk.kernel
    def softmax_host(x: x_dt[:, :, :, :], out: o_dt[:, :, :, :], scale: CF):
        i0, i1, i2 = pk.unravel(pk.global_id(0), x.shape[:3])
        n = x.shape[3]
        lanes = pk.local(CF, LANES)
        width = lane_width(n, lanes)
        m = row_max(x, i0, i1, i2, scale, lanes, width)
        fill_lanes(lanes, width, CF(0.0))
        for j0 in range(0, n, LANES):
            for j in range(j0, min(j0 + LANES, n)):
                e = pk.exp(CF(x[i0, i1, i2, j]) * scale - m)
                if IN_PLACE and not LOG:
                    out[i0, i1, i2, j] = e
                lanes[j - j0] = lanes[j - j0] + e
        s = lane_sum(lanes, width)
        if LOG:
            ls = pk.log(s)
            for j in range(n):
                out[i0, i1, i2, j] = CF(x[i0, i1, i2, j]) * scale - m - ls
        elif IN_PLACE:
            for j in range(n):
                out[i0, i1, i2, j] = out[i0, i1, i2, j] / s
        else:
            for j in range(n):
                out[i0, i1, i2, j] = pk.exp(CF(x[i0, i1, i2, j]) * scale - m) / s

    return softmax_host


def normalize_func(cf: DType, has_w: bool, has_b: bool, step: int) -> Func:
    """`normalize(x, w, b, out, i0, i1, i2, start, mean, rstd)`, layer_norm's last walk (here
    and in the portable kernel): out[i0, i1, i2, j] = (x - mean) · rstd, times w[j] where
    `has_w`, plus b[j] where `has_b`, in `cf`, for j = start, start + step, ... of the row."""
    CF, HAS_W, HAS_B, STEP = cf, has_w, has_b, step  # noqa: N806

    @pk.func
    def normalize(x, w, b, out, i0, i1, i2, start, mean, rstd):
        for j in range(start, x.shape[3], STEP):
            y = (CF(x[i0, i1, i2, j]) - mean) * rstd
            if HAS_W:
                y = y * CF(w[j])
            if HAS_B:
                y = y + CF(b[j])
            out[i0, i1, i2, j] = y

    return normalize


@functools.lru_cache(maxsize=None)
def layer_norm_kernel(x_dt: DType, w_dt: DType, b_dt: DType, has_w: bool,
                      has_b: bool, n_lanes: int) -> pk.Kernel:
    CF = compute_float(x_dt)  # noqa: N806
    LANES = n_lanes  # noqa: N806
    normalize = normalize_func(CF, has_w, has_b, 1)

    @pk.kernel
    def layer_norm_host(x: x_dt[:, :, :, :], w: w_dt[:], b: b_dt[:], out: x_dt[:, :, :, :],
                        eps: CF):
        i0, i1, i2 = pk.unravel(pk.global_id(0), x.shape[:3])
        n = x.shape[3]
        lanes = pk.local(CF, LANES)
        width = lane_width(n, lanes)
        for j0 in range(0, n, LANES):
            for j in range(j0, min(j0 + LANES, n)):
                lanes[j - j0] = lanes[j - j0] + CF(x[i0, i1, i2, j])
        mean = lane_sum(lanes, width) / CF(n)
        # the corrected two-pass algorithm: the deviations' own sum corrects the rounding of
        # the first mean (a constant row gets its value exactly, and so zeros, as Welford's
        # mean gives on the GPU path; 1/sqrt(eps) would magnify the rounding otherwise)
        fill_lanes(lanes, width, CF(0.0))
        squares = pk.local(CF, LANES)
        fill_lanes(squares, width, CF(0.0))
        for j0 in range(0, n, LANES):
            for j in range(j0, min(j0 + LANES, n)):
                d = CF(x[i0, i1, i2, j]) - mean
                lanes[j - j0] = lanes[j - j0] + d
                squares[j - j0] = squares[j - j0] + d * d
        shift = lane_sum(lanes, width) / CF(n)
        mean = mean + shift
        var = pk.max(lane_sum(squares, width) / CF(n) - shift * shift, CF(0.0))
        rstd = 1.0 / pk.sqrt(var + eps)
        normalize(x, w, b, out, i0, i1, i2, 0, mean, rstd)

    return layer_norm_host

