"""The helper functions of the `fft` extension: sample frequencies (`fftfreq`, `rfftfreq`) and
moving the zero frequency to the centre and back (`fftshift`, `ifftshift`)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.core.checks import check_int
from pykern.tensor.complex.complex_views import view_as_complex, view_as_real
from pykern.tensor.index.manipulation import roll
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor, empty, normalize_axis

FREQ_DTYPES = (dt.f32, dt.f64)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: object = None, device: object = None
            ) -> Tensor:
    """The sample frequencies of an `fft` of length n with sample spacing d: [0, 1, ...,
    ceil(n/2) - 1, -floor(n/2), ..., -1] / (d·n). dtype f32 (pykern's default floating dtype)
    unless `dtype` says f64.

        pk.fft.fftfreq(4, d=0.5).numpy()
    """
    return _frequencies("fftfreq", n, d, dtype, device, half=False)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: object = None, device: object = None
             ) -> Tensor:
    """The sample frequencies of an `rfft` of length n: [0, 1, ..., n//2] / (d·n)."""
    return _frequencies("rfftfreq", n, d, dtype, device, half=True)


def fftshift(x: object, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """`x` with the zero-frequency term moved to the centre of each of `axes` (default all):
    a roll by n//2 along each."""
    return _shift("fftshift", x, axes, inverse=False)


def ifftshift(x: object, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of `fftshift`: a roll by -(n//2) along each of `axes` (default all)."""
    return _shift("ifftshift", x, axes, inverse=True)


def _frequencies(op: str, n: object, d: object, dtype: object, device: object, half: bool
                 ) -> Tensor:
    n = check_int(n, op, "n", 1)
    if isinstance(d, bool) or not isinstance(d, (int, float)) and not hasattr(d, "__float__"):
        raise TypeError(f"{op}: d must be a real number, not {type(d).__name__}")
    if float(d) == 0.0:
        raise ValueError(f"{op}: d must not be 0")
    if device is not None and device is not get_device() and device != get_device():
        raise ValueError(f"{op}: pykern works on its current device only ({get_device()}), "
                         f"not {device!r}")
    out_dtype = dt.f32 if dtype is None else dt.as_dtype(dtype)
    if out_dtype not in FREQ_DTYPES:
        raise TypeError(f"{op}: dtype must be f32 or f64, not {out_dtype.name}")
    count = n // 2 + 1 if half else n
    out = empty((count,), out_dtype)
    positive = count if half else (n + 1) // 2
    _frequency_kernel(out_dtype)[count](out, positive, n, 1.0 / (n * float(d)))
    return out


@functools.lru_cache(maxsize=None)
def _frequency_kernel(real: DType) -> pk.Kernel:
    F = real  # noqa: N806

    @pk.kernel
    def fft_frequencies(out: F[:], positive: int, n: int, step: F):
        i = pk.global_id(0)
        k = i
        if i >= positive:
            k = i - n
        out[i] = F(k) * step

    return fft_frequencies


def _shift(op: str, x: object, axes: object, inverse: bool) -> Tensor:
    t = as_tensor(x, f"{op}: x")
    if axes is None:
        axes = list(range(t.ndim))
    elif hasattr(axes, "__index__"):
        axes = [axes]
    elif not isinstance(axes, Sequence):
        raise TypeError(f"{op}: axes must be an int or a sequence of ints, not "
                        f"{type(axes).__name__}")
    axes = [normalize_axis(a, t.ndim, op=op) for a in axes]
    if not axes:
        return t.copy()
    shifts = [-(t.shape[a] // 2) if inverse else t.shape[a] // 2 for a in axes]
    if t.dtype.is_complex:  # rolled as its (re, im) pairs: the same bytes
        return view_as_complex(roll(view_as_real(t), shifts, axis=axes).contiguous())
    return roll(t, shifts, axis=axes)
