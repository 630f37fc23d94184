"""Complex FFTs of pair tensors (interleaved re, im of a real dtype) along one axis: the plan
that picks an algorithm for the length, and the passes it launches.

- n smooth (prime factors 2, 3, 5, 7, 11, 13) and within one workgroup's shared memory: one
  launch of the mixed-radix kernel (stockham.py), on 4-D views `(A, B, n, 2)` of any strides,
  so an inner axis is transformed in place (its neighbours, adjacent in memory, loaded and
  stored together).
- a larger smooth n: four-step. With n = n1·n2 seen as an n1 × n2 matrix x[i1·n2 + i2],
  pass 1 transforms the n2 strided columns (length n1) and multiplies by w_n^(k1·i2); pass 2
  transforms the n1 rows (length n2, contiguous) and writes X[k1 + n1·k2] through a transposed
  view of the output, so no separate transpose. Rows longer than a workgroup holds recurse
  (2^24 is 256 × 256 × 256: three passes).
- any other length: Bluestein (chirp-z), as a circular convolution through FFTs of a smooth
  length m ≥ 2n - 1: chirp, FFT, multiply by the chirp kernel's spectrum, inverse FFT, unchirp.
  Where m fits in shared memory, the multiplications ride on the two FFTs' loads and stores
  (two launches); beyond, they are launches of their own (pointwise.py).

An inverse transform is conj(FFT(conj(x))): the conjugations happen as values are loaded and
stored, so the inverse costs nothing extra. `scale` (the norm) is applied in the last pass.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from pykern.fft import radix_plan, tables
from pykern.fft.pointwise import multiply
from pykern.fft.radix_plan import COMPLEX, LaunchShape, launch_shape, smooth
from pykern.fft.stockham import LO_BITS, POST, PRE, TWIDDLE, fft_kernel, grid_for
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.core.strided import view
from pykern.tensor.core.tensor import Tensor, empty


def shared_capacity(real: DType) -> int:
    """The longest transform (complex values) one workgroup holds in the device's shared
    memory."""
    return get_device().info.limits.max_shared_memory // (2 * real.itemsize)


def shape_for(n: int, real: DType, columns: bool = False, stores_across: bool = False,
              mode: int = COMPLEX, groups: int | None = None) -> LaunchShape | None:
    """The one-pass kernel variant for length n on the current device, or None where n is not
    smooth or does not fit (shared_capacity)."""
    if n > shared_capacity(real):
        return None
    limits = get_device().info.limits
    return launch_shape(n, real.itemsize, limits.max_shared_memory,
                        limits.max_workgroup_invocations, columns, stores_across, mode, groups)


def one_pass(n: int, real: DType) -> bool:
    """Whether transforms of length n take one launch."""
    return shape_for(n, real) is not None


def transform(x: Tensor, out: Tensor, inverse: bool, scale: float) -> None:
    """out = the FFT (inverse: the unnormalised inverse FFT) along the third dimension of the
    4-D pair views x (A, B, n_in, 2) and out (A, B, n, 2), times `scale`; x's rows are zero
    padded or cropped to n. Any strides: a transform along an inner axis reads in place."""
    rows, n = out.shape[0] * out.shape[1], out.shape[2]
    if rows == 0 or n == 0:
        return
    if one_pass(n, x.dtype):
        # transforms along a strided axis whose neighbours are adjacent (the columns of a
        # matrix): loaded and stored across neighbours, as contiguous runs
        across = x.element_strides[1] == 2 and x.element_strides[2] != 2 and x.shape[1] > 1
        _shared_pass(x, out, inverse, inverse, scale, columns=across)
        return
    if not smooth(n) and bluestein_length(n, x.dtype) <= shared_capacity(x.dtype):
        _bluestein_shared(x, out, inverse, scale)
        return
    x3 = _rows(x, copy=True)
    out3 = _rows(out, copy=False)
    target = out3 if out3 is not None else empty((rows, n, 2), x.dtype)
    if smooth(n):
        _smooth(x3, target, inverse, inverse, scale)
    else:
        _bluestein(x3, target, inverse, scale)
    if out3 is None:
        assign(out, view(target, out.shape, (out.shape[1] * 2 * n, 2 * n, 2, 1), 0))


def _rows(t: Tensor, copy: bool) -> Tensor | None:
    """A 4-D pair view (A, B, n, 2) as (A·B, n, 2): a view where the strides allow, else a
    contiguous copy (`copy`) or None."""
    a, b, n = t.shape[0], t.shape[1], t.shape[2]
    s = t.element_strides
    if s[3] == 1 and (a == 1 or b == 1 or s[0] == s[1] * b):
        return view(t, (a * b, n, 2), (s[0] if b == 1 else s[1], s[2], 1), t.offset)
    if not copy:
        return None
    dense = empty((a, b, n, 2), t.dtype)
    assign(dense, t)
    return view(dense, (a * b, n, 2), (2 * n, 2, 1), 0)


def _as4(t: Tensor) -> Tensor:
    """A (B, n, 2) view as (1, B, n, 2)."""
    return view(t, (1,) + t.shape, (0,) + t.element_strides, t.offset)


def _smooth(x: Tensor, out: Tensor, conj_in: bool, conj_out: bool, scale: float) -> None:
    """out (B, n, 2) = FFT of x's rows (B, n_in, 2), n smooth."""
    n = out.shape[1]
    if one_pass(n, x.dtype):
        _shared_pass(_as4(x), _as4(out), conj_in, conj_out, scale)
        return
    scratch = x.shape[1] != n
    if scratch:  # the strided pass reads whole rows: pad or crop first
        padded = empty(out.shape, x.dtype)
        multiply(x, _ones(x.dtype, n), padded, min(n, x.shape[1]))
        x = padded
    _four_step(x, out, conj_in, conj_out, scale, shared_capacity(x.dtype), scratch)


# Every four-step pass moves several adjacent transforms per workgroup, loaded or stored across
# them, so that every global access is a contiguous run: the columns (loaded and stored across)
# and the last pass's rows (stored across, into the transposed output) therefore stay short.
COLUMN_GROUP = 16  # columns of at most capacity / COLUMN_GROUP (16 adjacent: 128 B of c64)
LAST_GROUP = 16  # last-pass rows of at most capacity / LAST_GROUP (16 adjacent: 128 B of c64)


def _largest_divisor(n: int, at_most: int) -> int:
    """The largest divisor of n that is at most `at_most` (1 if none but 1)."""
    for d in range(min(n, at_most), 1, -1):
        if n % d == 0:
            return d
    return 1


def _smallest_factor(n: int) -> int:
    return next(d for d in range(2, n + 1) if n % d == 0)


def column_length(n: int, cap: int) -> int:
    """n1 of the four-step n = n1·n2 (n smooth, above cap): two passes where rows of at most
    cap / LAST_GROUP leave columns of at most cap / COLUMN_GROUP, else the longest such
    columns, the rows recursing."""
    last = _largest_divisor(n, max(2, cap // LAST_GROUP))
    longest = max(2, cap // COLUMN_GROUP)
    if 1 < last and n // last <= longest:
        return n // last
    n1 = _largest_divisor(n, longest)
    return n1 if n1 > 1 else _smallest_factor(n)


def _four_step(x: Tensor, out: Tensor, conj_in: bool, conj_out: bool, scale: float,
               cap: int, scratch: bool = False) -> None:
    """out (B, n, 2) = FFT of x's rows (B, n, 2), n smooth and above `cap`: the columns
    short (column_length), the rows recursing until they fit in a workgroup. `scratch`: x is
    a contiguous temporary of this transform, which the column pass overwrites (each
    workgroup reads its columns whole before it writes them), saving a temporary."""
    rows, n = out.shape[0], out.shape[1]
    n1 = column_length(n, cap)
    n2 = n // n1
    sb, sn = x.element_strides[0], x.element_strides[1]
    # pass 1: column i2 is x[b, i1·n2 + i2] for i1 < n1, written in the same layout, twiddled
    cols = view(x, (rows, n2, n1, 2), (sb, sn, n2 * sn, 1), x.offset)
    mid = x if scratch else empty((rows, n, 2), x.dtype)
    mid_cols = view(mid, (rows, n2, n1, 2), (2 * n, 2, 2 * n2, 1), mid.offset)
    _shared_pass(cols, mid_cols, conj_in, False, 1.0, twiddle_length=n, columns=True)
    # pass 2: row k1 is mid[b, k1·n2 + k2], its output k2 goes to out[b, k1 + n1·k2]
    so = out.element_strides
    dest = view(out, (rows, n1, n2, 2), (so[0], so[1], n1 * so[1], 1), out.offset)
    if n2 <= cap:
        _last_rows(view(mid, (rows, n1, n2, 2), (2 * n, 2 * n2, 2, 1), mid.offset), dest,
                   conj_out, scale)
        return
    # rows still too long: four-step again, straight into the transposed output where it
    # collapses to (rows·n1, n2) (a single transform), else through a copy
    direct = _rows(dest, copy=False)
    inner = direct if direct is not None else empty((rows * n1, n2, 2), x.dtype)
    _four_step(view(mid, (rows * n1, n2, 2), (2 * n2, 2, 1), mid.offset), inner, False,
               conj_out, scale, cap, scratch=True)
    if direct is None:
        assign(dest, view(inner, (rows, n1, n2, 2), (2 * n, 2 * n2, 2, 1), 0))


def _last_rows(src: Tensor, dest: Tensor, conj_out: bool, scale: float) -> None:
    """The four-step's last pass over 4-D views (A, B, n2, 2): contiguous rows in, transposed
    out. The batch axes are ordered so that consecutive transforms write neighbouring values;
    where those are adjacent, a workgroup stores across its transforms (contiguous runs)."""
    sd = dest.element_strides
    if abs(sd[0]) < abs(sd[1]):
        src = _swap_batch(src)
        dest = _swap_batch(dest)
    adjacent = abs(dest.element_strides[1]) == 2
    _shared_pass(src, dest, False, conj_out, scale, stores_across=adjacent)


def _swap_batch(t: Tensor) -> Tensor:
    """The 4-D view (A, B, n, 2) as (B, A, n, 2)."""
    s = t.element_strides
    return view(t, (t.shape[1], t.shape[0]) + t.shape[2:], (s[1], s[0]) + s[2:], t.offset)


def _shared_pass(x: Tensor, out: Tensor, conj_in: bool, conj_out: bool, scale: float,
                 twiddle_length: int | None = None, pre: Tensor | None = None,
                 post: Tensor | None = None, columns: bool = False,
                 stores_across: bool = False) -> None:
    """One launch over 4-D pair views x (A, B, n_in, 2) → out (A, B, n, 2), n one-pass (x's
    rows padded or cropped to it). With `twiddle_length` L, output k of transform b is
    multiplied by w_L^(k·b) (the four-step twiddle); `pre` and `post` tables multiply the
    inputs and the outputs; `columns`: adjacent transforms are adjacent in memory (a strided
    axis, the columns of a four-step pass), loaded and stored across them; `stores_across`:
    only out's adjacent transforms are adjacent, stored across them."""
    n = out.shape[2]
    shape = shape_for(n, out.dtype, columns, stores_across,
                      groups=LAST_GROUP if stores_across else None)
    launch(shape, x, out, conj_in, conj_out, scale, twiddle_length, pre, post)


def launch(shape: LaunchShape, x: Tensor, out: Tensor, conj_in: bool, conj_out: bool,
           scale: float, twiddle_length: int | None = None, pre: Tensor | None = None,
           post: Tensor | None = None, conj_real: bool = False) -> None:
    """The kernel of `shape` over x → out (4-D views; out may be shorter: cropped)."""
    device = get_device()
    real = out.dtype
    tw = tables.stage_twiddles(device, real, shape.radices)
    flags = 0
    if shape.mode == COMPLEX:  # (the real modes' tables are their own, not PRE/POST)
        flags = (PRE if pre is not None else 0) | (POST if post is not None else 0)
    if twiddle_length is None:
        hi = lo = tw
    else:
        hi, lo = tables.four_step_twiddles(device, real, twiddle_length, LO_BITS)
        flags |= TWIDDLE
    kernel = fft_kernel(real, replace(shape, flags=flags))
    count = out.shape[0] * out.shape[1]
    kernel[grid_for(shape, count)](
        x, out, tw, hi, lo, tw if pre is None else pre, tw if post is None else post, scale,
        -1.0 if conj_in else 1.0, -1.0 if conj_out else 1.0, -1.0 if conj_real else 1.0)


@functools.lru_cache(maxsize=16)
def _ones_cached(device: object, real: DType, n: int) -> Tensor:
    return tables.pairs(np.ones(n, dtype=np.complex128), real)


def _ones(real: DType, n: int) -> Tensor:
    """n ones, as a table for `multiply` (which then only pads or crops)."""
    return _ones_cached(get_device(), real, n)


def _fast(m: int, real: DType) -> bool:
    """Whether length m runs without Bluestein at a cost close to a power of two's: smooth
    over 2, 3, 5, 7, and one-pass or split by the four-step into such lengths."""
    if any(p in radix_plan.PRIME_FACTORS_SLOW for p in _factors(m)):
        return False
    if m <= shared_capacity(real):
        return one_pass(m, real)
    cap = shared_capacity(real)
    n1 = column_length(m, cap)
    return one_pass(n1, real) and _fast(m // n1, real)


def _factors(n: int) -> list[int]:
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    return out + ([n] if n > 1 else [])


@functools.lru_cache(maxsize=256)
def _bluestein_cached(n: int, real: DType, device: object) -> int:
    m = 2 * n - 1
    while not (smooth(m) and _fast(m, real)):
        m += 1
    return m


def bluestein_length(n: int, real: DType) -> int:
    """The length m ≥ 2n - 1 of Bluestein's convolution: the smallest one that runs fast
    (_fast; a power of two always does)."""
    return _bluestein_cached(n, real, (get_device(), shared_capacity(real)))


@functools.lru_cache(maxsize=32)
def _kernel_spectrum(device: object, real: DType, n: int, m: int) -> Tensor:
    """The DFT (length m) of Bluestein's convolution kernel for length n, computed in f64 on
    the host and rounded once."""
    return tables.pairs(np.fft.fft(tables.chirp_kernel_taps(n, m)), real)


def _bluestein_shared(x: Tensor, out: Tensor, inverse: bool, scale: float) -> None:
    """Bluestein for a convolution length m that one workgroup holds, in two launches on the
    4-D pair views x (A, B, n_in, 2) and out (A, B, n, 2): FFT(x·h) · B̂ conjugated (so that
    the second forward FFT is an inverse one), then conj(FFT(...)) · h / m."""
    a, b, n = out.shape[0], out.shape[1], out.shape[2]
    real = x.dtype
    m = bluestein_length(n, real)
    device = get_device()
    valid = min(n, x.shape[2])
    xv = view(x, (a, b, valid, 2), x.element_strides, x.offset)
    mid = empty((a, b, m, 2), real)
    shape = shape_for(m, real)
    launch(shape, xv, mid, inverse, True, 1.0, None, tables.chirp_table(device, real, n),
           _kernel_spectrum(device, real, n, m))
    # conj(C)·h = conj(C·conj h); the inverse transform's conjugation cancels the outer one
    launch(shape, mid, out, False, not inverse, scale / m, None, None,
           tables.conj_chirp_table(device, real, n))


def _bluestein(x: Tensor, out: Tensor, inverse: bool, scale: float) -> None:
    """out = FFT of length n (any n) of x's rows via a convolution of length m ≥ 2n-1:
    X_j = h_j · Σ_k (x_k h_k) · conj(h_(j-k)), h_k = exp(-πi k²/n)."""
    rows, n = out.shape[0], out.shape[1]
    real = x.dtype
    m = bluestein_length(n, real)
    device = get_device()
    h = tables.chirp_table(device, real, n)
    chirped = empty((rows, m, 2), real)
    multiply(x, h, chirped, min(n, x.shape[1]), conj_in=inverse)
    spectrum = empty((rows, m, 2), real)
    _smooth(chirped, spectrum, False, False, 1.0)
    # conj(A · B̂), so that the next forward FFT is an inverse one
    multiply(spectrum, _kernel_spectrum(device, real, n, m), spectrum, m, conj_out=True)
    _smooth(spectrum, chirped, False, False, 1.0)
    multiply(chirped, h, out, n, scale / m, conj_in=True, conj_out=inverse)
