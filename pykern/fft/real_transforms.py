"""The transforms with a real side: `rfft`, `irfft`, `rfftn`, `irfftn`, `hfft`, `ihfft`.

Along the last axis at an even length n, a real signal is transformed as n/2 complex numbers
(its own memory seen as pairs), the spectrum's post-processing (irfft: pre-processing) fused
into the same launch (stockham.py's RFFT and IRFFT modes): one pass over memory. Other axes and
odd lengths take one launch of the full length that reads the real signal (the imaginary parts
zero) and stores only the non-negative frequencies, or reads the half spectrum, extends it by
symmetry as it loads and stores only real parts. Lengths beyond one launch go through the
multi-pass complex transforms (with real_kernels.py's separate passes).
"""

from __future__ import annotations

from collections.abc import Sequence

from pykern.fft import args, engine, gradients, tables
from pykern.fft.pairs import (as_complex, as_pairs, four_d, input_tensor, real_as_pairs,
                              real_dtype_for, transform_axis)
from pykern.fft.planned import planned
from pykern.fft.radix_plan import HERMITIAN_IN, IRFFT, REAL_IN, RFFT
from pykern.fft.real_kernels import hermitian_extend, irfft_pre, rfft_post
from pykern.runtime import get_device
from pykern.tensor.core.strided import prod, view
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.core.tensor import Tensor, empty


def rfft(x: object, /, *, n: int | None = None, axis: int = -1, norm: str = "backward"
         ) -> Tensor:
    """The FFT of a real signal along `axis`, of length `n` (cropped or zero padded; default:
    its length): the n//2 + 1 non-negative frequencies (the others are their conjugates).
    f64 input gives c128, other real dtypes c64.

        pk.fft.rfft(pk.asarray([1.0, 2.0, 3.0, 4.0])).numpy()
    """
    return _real_to_half("rfft", x, n, axis, norm, inverse=False)


def ihfft(x: object, /, *, n: int | None = None, axis: int = -1, norm: str = "backward"
          ) -> Tensor:
    """The inverse of `hfft`: conj(rfft(x)) with the inverse's norm (1/n for "backward")."""
    return _real_to_half("ihfft", x, n, axis, norm, inverse=True)


def irfft(x: object, /, *, n: int | None = None, axis: int = -1, norm: str = "backward"
          ) -> Tensor:
    """The inverse of `rfft`: the real signal of length `n` (default 2·(m - 1) for m input
    values along `axis`) whose spectrum has x's values at the non-negative frequencies. The
    imaginary parts of X_0 (and X_(n/2) for even n) are ignored, as numpy does."""
    return _half_to_real("irfft", x, n, axis, norm, inverse=True)


def hfft(x: object, /, *, n: int | None = None, axis: int = -1, norm: str = "backward"
         ) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real spectrum of
    length `n` (default 2·(m - 1)); `irfft` of conj(x) with the forward norm."""
    return _half_to_real("hfft", x, n, axis, norm, inverse=False)


def _real_to_half(op: str, x: object, n: object, axis: object, norm: object, inverse: bool
                  ) -> Tensor:
    """rfft (ihfft with `inverse`: conjugated, with the inverse's scale) along one axis."""
    t, ax, length, norm = _real_input(op, x, n, axis, norm)
    scale = args.scale_for(norm, length, inverse)
    return gradients.transform(
        op, t, lambda: planned(op, t, (ax, length, scale),
                               lambda: as_complex(_rfft_axis(t, ax, length, scale, inverse))),
        lambda: gradients.r2c(t, [length], [ax], norm, inverse))


def _half_to_real(op: str, x: object, n: object, axis: object, norm: object, inverse: bool
                  ) -> Tensor:
    """irfft (`inverse`) or hfft (conjugated input, the forward scale) along one axis."""
    t, ax, length, norm = _half_spectrum(op, x, n, axis, norm)
    scale = args.scale_for(norm, length, inverse)
    conjugate = not inverse
    return gradients.transform(
        op, t, lambda: planned(op, t, (ax, length, scale),
                               lambda: _irfft_axis(as_pairs(t), ax, length, scale, conjugate)),
        lambda: gradients.c2r(t, [length], [ax], norm, conjugate))


def rfftn(x: object, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Tensor:
    """The n-D FFT of a real signal over `axes`: `rfft` along the last of them, then `fft`
    along the others; the last axis of the result has s[-1]//2 + 1 values."""
    op = "rfftn"
    t = _check_real(input_tensor(x, op), op)
    norm = args.check_norm(norm, op)
    sizes, ax = args.check_s_axes(s, axes, t.shape, op)
    if not ax:
        raise ValueError(f"{op}: axes must name at least one axis")
    lengths = [t.shape[a] if v is None else v for v, a in zip(sizes, ax)]
    _no_empty(op, lengths, ax)

    def run() -> Tensor:
        p = _rfft_axis(t.astype(real_dtype_for(t.dtype)), ax[-1], lengths[-1],
                       args.scale_for(norm, lengths[-1], False), False)
        for length, a in reversed(list(zip(lengths[:-1], ax[:-1]))):
            p = transform_axis(p, a, length, False, args.scale_for(norm, length, False),
                               in_place=True)
        return as_complex(p)

    gradients.distinct_axes(op, t, ax)
    return gradients.transform(op, t, lambda: planned(op, t, (tuple(lengths), tuple(ax), norm),
                                                      run),
                               lambda: gradients.r2c(t, lengths, ax, norm, False))


def irfftn(x: object, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Tensor:
    """The inverse of `rfftn`: `ifft` along every axis of `axes` but the last, then `irfft`
    along the last (length s[-1], default 2·(m - 1))."""
    op = "irfftn"
    t = input_tensor(x, op)
    norm = args.check_norm(norm, op)
    sizes, ax = args.check_s_axes(s, axes, t.shape, op)
    if not ax:
        raise ValueError(f"{op}: axes must name at least one axis")
    lengths = [t.shape[a] if v is None else v for v, a in zip(sizes[:-1], ax[:-1])]
    _no_empty(op, lengths, ax[:-1])
    # the last axis's input length once the others are transformed (one of them may be it)
    m = t.shape[ax[-1]]
    for length, a in zip(lengths, ax[:-1]):
        m = length if a == ax[-1] else m
    last = 2 * (m - 1) if sizes[-1] is None else sizes[-1]
    if last < 1:
        raise ValueError(f"{op}: x has length {m} along axis {ax[-1]}, which gives an output "
                         f"length of {last}; pass s")

    def run() -> Tensor:
        p = as_pairs(t)
        for i, (length, a) in enumerate(reversed(list(zip(lengths, ax[:-1])))):
            p = transform_axis(p, a, length, True, args.scale_for(norm, length, True),
                               in_place=i > 0)  # (the first reads the caller's x)
        return _irfft_axis(p, ax[-1], last, args.scale_for(norm, last, True), False)

    gradients.distinct_axes(op, t, ax)
    return gradients.transform(op, t, lambda: planned(op, t, (tuple(lengths), tuple(ax), last,
                                                              norm), run),
                               lambda: gradients.c2r(t, [*lengths, last], ax, norm, False))


def _check_real(t: Tensor, op: str) -> Tensor:
    if t.dtype.is_complex:
        raise TypeError(f"{op}: x must be real, it has dtype {t.dtype.name} (use fft)")
    return t


def _no_empty(op: str, lengths: Sequence[int], axes: Sequence[int]) -> None:
    for length, a in zip(lengths, axes):
        if length == 0:
            raise ValueError(f"{op}: x has length 0 along axis {a}; pass s with sizes >= 1")


def _real_input(op: str, x: object, n: object, axis: object, norm: object
                ) -> tuple[Tensor, int, int, str]:
    t = _check_real(input_tensor(x, op), op)
    norm, ax, length = args.check_one_axis(t.shape, n, axis, norm, op)
    return t.astype(real_dtype_for(t.dtype)), ax, length, norm


def _half_spectrum(op: str, x: object, n: object, axis: object, norm: object
                   ) -> tuple[Tensor, int, int, str]:
    """x as a tensor (not yet promoted to complex), its axis, the output length, the norm."""
    t = input_tensor(x, op)
    norm = args.check_norm(norm, op)
    length = args.check_n(n, op)
    ax = args.check_axis(axis, t.ndim, op)
    if length is None:
        length = 2 * (t.shape[ax] - 1)
        if length < 1:
            raise ValueError(f"{op}: x has length {t.shape[ax]} along axis {ax}, which gives "
                             f"an output length of {length}; pass n >= 1")
    return t, ax, length, norm


def _rfft_axis(t: Tensor, axis: int, n: int, scale: float, conj_out: bool) -> Tensor:
    """The n//2 + 1 first values of the FFT of length n of the real tensor t along `axis`,
    times `scale` (conjugated for `conj_out`), as a pair tensor: one launch where n/2 (the last
    axis, n even) or n (any axis) is a one-pass length."""
    if not t.is_contiguous:
        t = t.contiguous()
    shape, real = t.shape, t.dtype
    half = n // 2 + 1
    out = empty(shape[:axis] + (half,) + shape[axis + 1:] + (2,), real)
    if out.size == 0:
        return out
    length = shape[axis]
    last = axis == t.ndim - 1
    rows = prod(shape[:-1])
    fused = last and n % 2 == 0 and n <= length and engine.shape_for(n // 2, real, mode=RFFT)
    if fused:
        h = n // 2
        engine.launch(fused, view(t, (1, rows, h, 2), (0, length, 2, 1), t.offset),
                      view(out, (1, rows, half, 2), (0, 2 * half, 2, 1), 0), False, False,
                      scale, post=tables.half_twiddles(get_device(), real, n),
                      conj_real=conj_out)
        return out
    before, after = prod(shape[:axis]), prod(shape[axis + 1:])
    x4 = view(t, (before, after, length, 1), (length * after, 1, after, 1), t.offset)
    columns = after > 1
    full = engine.shape_for(n, real, columns=columns, mode=REAL_IN)
    if full:
        engine.launch(full, x4, four_d(out, axis), False, conj_out, scale)
        return out
    if not last or n % 2 or n > length:
        spectrum = transform_axis(real_as_pairs(t), axis, n, conj_out, scale)
        key = (slice(None),) * axis + (slice(0, half),)
        assign(out, spectrum[key])
        return out
    h = n // 2
    z = empty((rows, h, 2), real)
    engine.transform(view(t, (1, rows, h, 2), (0, length, 2, 1), t.offset),
                     view(z, (1, rows, h, 2), (0, 2 * h, 2, 1), 0), False, 1.0)
    tw = tables.twiddles(get_device(), real, n)
    rfft_post(real)[half, rows](z, tw, view(out, (rows, half, 2), (2 * half, 2, 1), 0),
                                scale, -1.0 if conj_out else 1.0)
    return out


def _irfft_axis(p: Tensor, axis: int, n: int, scale: float, conj_in: bool) -> Tensor:
    """The real signal of length n along `axis` whose spectrum's first half is the pair
    tensor p (conjugated for `conj_in`), times `scale`: one launch where n/2 (the last axis,
    n even) or n (any axis) is a one-pass length."""
    shape = p.shape[:-1]
    real = p.dtype
    out = empty(shape[:axis] + (n,) + shape[axis + 1:], real)
    if out.size == 0:
        return out
    m = shape[axis]
    last = axis == len(shape) - 1
    rows = prod(shape[:-1])
    fused = last and n % 2 == 0 and engine.shape_for(n // 2, real, mode=IRFFT)
    if fused:
        h = n // 2
        engine.launch(fused, view(p, (1, rows, m, 2), (0, 2 * m, 2, 1), p.offset),
                      view(out, (1, rows, h, 2), (0, n, 2, 1), 0), True, True, 2.0 * scale,
                      pre=tables.half_twiddles(get_device(), real, n), conj_real=conj_in)
        return out
    before, after = prod(shape[:axis]), prod(shape[axis + 1:])
    full = engine.shape_for(n, real, columns=after > 1, mode=HERMITIAN_IN)
    if full:
        out4 = view(out, (before, after, n, 1), (n * after, 1, after, 1), 0)
        # Re(conj(FFT(conj Y))) = Re(FFT(conj Y)): one conjugation, undone by conj_in
        engine.launch(full, four_d(p, axis), out4, not conj_in, False, scale)
        return out
    if not last or n % 2:
        spectrum = empty(shape[:axis] + (n,) + shape[axis + 1:] + (2,), real)
        f4, p4 = four_d(spectrum, axis), four_d(p, axis)
        hermitian_extend(real)[n, f4.shape[0] * f4.shape[1]](p4, f4,
                                                            -1.0 if conj_in else 1.0)
        assign(out, transform_axis(spectrum, axis, n, True, scale)[..., 0])
        return out
    h = n // 2
    z = empty((rows, h, 2), real)
    tw = tables.twiddles(get_device(), real, n)
    irfft_pre(real)[h, rows](view(p, (rows, m, 2), (2 * m, 2, 1), p.offset), tw, z,
                             -1.0 if conj_in else 1.0)
    engine.transform(view(z, (1, rows, h, 2), (0, 2 * h, 2, 1), 0),
                     view(out, (1, rows, h, 2), (0, n, 2, 1), 0), True, 2.0 * scale)
    return out
