"""Complex FFTs of pair tensors (interleaved re, im of a real dtype) along one axis: the plan
that picks an algorithm for the length, and the passes it launches.

- n a power of two within one workgroup's shared memory: one Stockham pass (stockham.py), on
  4-D views `(A, B, n, 2)` of any strides, so an inner axis is transformed in place.
- a larger power of two: four-step. With n = n1·n2 seen as an n1 × n2 matrix x[i1·n2 + i2],
  pass 1 transforms the n2 strided columns (length n1) and multiplies by w_n^(k1·i2); pass 2
  transforms the n1 rows (length n2, contiguous) and writes X[k1 + n1·k2] through a transposed
  view of the output, so no separate transpose. Rows longer than a workgroup holds recurse.
- any other length: Bluestein (chirp-z), as a circular convolution through power-of-two FFTs of
  length m ≥ 2n - 1: chirp, FFT, multiply by the chirp kernel's spectrum, inverse FFT, unchirp.
  Where m fits in shared memory, the multiplications ride on the two FFTs' loads and stores
  (two launches); beyond, they are launches of their own (pointwise.py).

An inverse transform is conj(FFT(conj(x))): the conjugations happen as values are loaded and
stored, so the inverse costs nothing extra. `scale` (the norm) is applied in the last pass.
"""

from __future__ import annotations

import functools

import numpy as np

from pykern.fft import tables
from pykern.fft.pointwise import multiply
from pykern.fft.stockham import (LO_BITS, POST, PRE, TWIDDLE, columns_per_group, grid_for,
                                 padded, stockham_kernel, transforms_per_group)
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.core.strided import view
from pykern.tensor.core.tensor import Tensor, empty


def shared_capacity(real: DType) -> int:
    """The longest power-of-two transform one workgroup holds in the device's shared memory."""
    limit = get_device().info.limits.max_shared_memory
    n = 1
    while 2 * (2 * n) * real.itemsize <= limit:  # real and imaginary parts
        n *= 2
    return n


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def transform(x: Tensor, out: Tensor, inverse: bool, scale: float) -> None:
    """out = the FFT (inverse: the unnormalised inverse FFT) along the third dimension of the
    4-D pair views x (A, B, n_in, 2) and out (A, B, n, 2), times `scale`; x's rows are zero
    padded or cropped to n. Any strides: a transform along an inner axis reads in place."""
    rows, n = out.shape[0] * out.shape[1], out.shape[2]
    if rows == 0 or n == 0:
        return
    cap = shared_capacity(x.dtype)
    if is_power_of_two(n) and n <= cap:
        # transforms along a strided axis whose neighbours are adjacent (the columns of a
        # matrix): loaded and stored across neighbours, as contiguous runs
        across = x.element_strides[1] == 2 and x.element_strides[2] != 2 and x.shape[1] > 1
        _shared_pass(x, out, inverse, inverse, scale, columns=across)
        return
    if not is_power_of_two(n) and bluestein_length(n) <= cap:
        _bluestein_shared(x, out, inverse, scale)
        return
    x3 = _rows(x, copy=True)
    out3 = _rows(out, copy=False)
    target = out3 if out3 is not None else empty((rows, n, 2), x.dtype)
    if is_power_of_two(n):
        _pow2(x3, target, inverse, inverse, scale)
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


def _pow2(x: Tensor, out: Tensor, conj_in: bool, conj_out: bool, scale: float) -> None:
    """out (B, n, 2) = FFT of x's rows (B, n_in, 2), n a power of two."""
    n = out.shape[1]
    cap = shared_capacity(x.dtype)
    if n <= cap:
        _shared_pass(_as4(x), _as4(out), conj_in, conj_out, scale)
        return
    if x.shape[1] != n:  # the strided pass reads whole rows: pad or crop first
        padded = empty(out.shape, x.dtype)
        multiply(x, _ones(x.dtype, n), padded, min(n, x.shape[1]))
        x = padded
    _four_step(x, out, conj_in, conj_out, scale, cap)


# Every four-step pass moves several adjacent transforms per workgroup, loaded or stored across
# them, so that every global access is a contiguous run: the columns (loaded and stored across)
# and the last pass's rows (stored across, into the transposed output) therefore stay short.
COLUMN_GROUP = 16  # columns of at most capacity / COLUMN_GROUP (16 adjacent: 128 B of c64)
LAST_GROUP = 8  # last-pass rows of at most capacity / LAST_GROUP (8 adjacent: 64 B of c64)


def column_length(n: int, cap: int) -> int:
    """n1 of the four-step n = n1·n2 (n > cap / LAST_GROUP): two passes (rows of
    cap / LAST_GROUP) where their columns are short enough, else the longest short columns,
    the rows recursing."""
    last = max(1, cap // LAST_GROUP)
    longest = max(2, cap // COLUMN_GROUP)
    return max(2, n // last) if n // last <= longest else longest


def _four_step(x: Tensor, out: Tensor, conj_in: bool, conj_out: bool, scale: float,
               cap: int) -> None:
    """out (B, n, 2) = FFT of x's rows (B, n, 2), n a power of two above `cap`: the columns
    short (column_length), the rows recursing until LAST_GROUP of them fit in a workgroup."""
    rows, n = out.shape[0], out.shape[1]
    n1 = column_length(n, cap)
    n2 = n // n1
    sb, sn = x.element_strides[0], x.element_strides[1]
    # pass 1: column i2 is x[b, i1·n2 + i2] for i1 < n1, written in the same layout, twiddled
    cols = view(x, (rows, n2, n1, 2), (sb, sn, n2 * sn, 1), x.offset)
    mid = empty((rows, n, 2), x.dtype)
    mid_cols = view(mid, (rows, n2, n1, 2), (2 * n, 2, 2 * n2, 1), 0)
    _shared_pass(cols, mid_cols, conj_in, False, 1.0, twiddle_length=n, columns=True)
    # pass 2: row k1 is mid[b, k1·n2 + k2], its output k2 goes to out[b, k1 + n1·k2]
    so = out.element_strides
    dest = view(out, (rows, n1, n2, 2), (so[0], so[1], n1 * so[1], 1), out.offset)
    if n2 * LAST_GROUP <= cap or n2 <= 2:
        _last_rows(view(mid, (rows, n1, n2, 2), (2 * n, 2 * n2, 2, 1), 0), dest, conj_out,
                   scale)
        return
    # rows still too long: four-step again, straight into the transposed output where it
    # collapses to (rows·n1, n2) (a single transform), else through a copy
    direct = _rows(dest, copy=False)
    inner = direct if direct is not None else empty((rows * n1, n2, 2), x.dtype)
    _four_step(view(mid, (rows * n1, n2, 2), (2 * n2, 2, 1), 0), inner, False, conj_out, scale,
               cap)
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
    """One Stockham launch over 4-D pair views x (A, B, n_in, 2) → out (A, B, n, 2), n a power
    of two (x's rows padded or cropped to it). With `twiddle_length` L, output k of transform
    b is multiplied by w_L^(k·b) (the four-step twiddle); `pre` and `post` tables multiply the
    inputs and the outputs; `columns`: adjacent transforms are adjacent in memory (the strided
    columns of a four-step pass), loaded and stored across them; `stores_across`: only out's
    adjacent transforms are adjacent, stored across them."""
    _launch(x, out, out.shape[2], conj_in, conj_out, scale, twiddle_length, pre, post,
            out.dtype, columns, stores_across)


def _launch(x: Tensor, out: Tensor, n: int, conj_in: bool, conj_out: bool, scale: float,
            twiddle_length: int | None, pre: Tensor | None, post: Tensor | None,
            real: DType, columns: bool = False, stores_across: bool = False) -> None:
    """The Stockham kernel of length n over x → out (out may be shorter: cropped)."""
    device = get_device()
    tw = tables.twiddles(device, real, n)
    flags = (PRE if pre is not None else 0) | (POST if post is not None else 0)
    if twiddle_length is None:
        hi = lo = tw
    else:
        hi, lo = tables.four_step_twiddles(device, real, twiddle_length, LO_BITS)
        flags |= TWIDDLE
    cap = shared_capacity(real)
    across = columns or stores_across
    groups = columns_per_group(n, cap) if across else transforms_per_group(n, cap)
    pad = padded(n, groups, real.itemsize, device.info.limits.max_shared_memory)
    columns = columns and groups > 1  # (one transform per workgroup: the row layout)
    kernel = stockham_kernel(real, n, groups, columns, pad, stores_across and groups > 1)
    count = out.shape[0] * out.shape[1]
    kernel[grid_for(n, count, columns)](
        x, out, tw, hi, lo, tw if pre is None else pre, tw if post is None else post, scale,
        -1.0 if conj_in else 1.0, -1.0 if conj_out else 1.0, flags)


@functools.lru_cache(maxsize=16)
def _ones_cached(device: object, real: DType, n: int) -> Tensor:
    return tables.pairs(np.ones(n, dtype=np.complex128), real)


def _ones(real: DType, n: int) -> Tensor:
    """n ones, as a table for `multiply` (which then only pads or crops)."""
    return _ones_cached(get_device(), real, n)


def bluestein_length(n: int) -> int:
    """The power of two m ≥ 2n - 1 of Bluestein's convolution."""
    return 1 << (2 * n - 2).bit_length()


@functools.lru_cache(maxsize=32)
def _kernel_spectrum(device: object, real: DType, n: int) -> Tensor:
    """The FFT (length m, on the device) of Bluestein's convolution kernel for length n."""
    m = bluestein_length(n)
    taps = tables.pairs(tables.chirp_kernel_taps(n, m), real)
    spectrum = empty((1, m, 2), real)
    _pow2(view(taps, (1, m, 2), (2 * m, 2, 1), 0), spectrum, False, False, 1.0)
    return view(spectrum, (2 * m,), (1,), 0)


def _bluestein_shared(x: Tensor, out: Tensor, inverse: bool, scale: float) -> None:
    """Bluestein for a convolution length m that one workgroup holds, in two launches on the
    4-D pair views x (A, B, n_in, 2) and out (A, B, n, 2): FFT(x·h) · B̂ conjugated (so that
    the second forward FFT is an inverse one), then conj(FFT(...)) · h / m."""
    a, b, n = out.shape[0], out.shape[1], out.shape[2]
    m = bluestein_length(n)
    device, real = get_device(), x.dtype
    valid = min(n, x.shape[2])
    xv = view(x, (a, b, valid, 2), x.element_strides, x.offset)
    mid = empty((a, b, m, 2), real)
    _launch(xv, mid, m, inverse, True, 1.0, None, tables.chirp_table(device, real, n),
            _kernel_spectrum(device, real, n), real)
    # conj(C)·h = conj(C·conj h); the inverse transform's conjugation cancels the outer one
    _launch(mid, out, m, False, not inverse, scale / m, None, None,
            tables.conj_chirp_table(device, real, n), real)


def _bluestein(x: Tensor, out: Tensor, inverse: bool, scale: float) -> None:
    """out = FFT of length n (any n) of x's rows via a convolution of length m = 2^k ≥ 2n-1:
    X_j = h_j · Σ_k (x_k h_k) · conj(h_(j-k)), h_k = exp(-πi k²/n)."""
    rows, n = out.shape[0], out.shape[1]
    m = bluestein_length(n)
    device = get_device()
    real = x.dtype
    h = tables.chirp_table(device, real, n)
    chirped = empty((rows, m, 2), real)
    multiply(x, h, chirped, min(n, x.shape[1]), conj_in=inverse)
    spectrum = empty((rows, m, 2), real)
    _pow2(chirped, spectrum, False, False, 1.0)
    # conj(A · B̂), so that the next forward FFT is an inverse one
    multiply(spectrum, _kernel_spectrum(device, real, n), spectrum, m, conj_out=True)
    _pow2(spectrum, chirped, False, False, 1.0)
    multiply(chirped, h, out, n, scale / m, conj_in=True, conj_out=inverse)
