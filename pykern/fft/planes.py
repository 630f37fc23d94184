"""numpy's two-dimensional transforms (`fft2`, `ifft2`, `rfft2`, `irfft2`): the n-D ones over
the last two axes by default, with numpy's signatures (`s`, `axes`, `norm` may be given by
position or name)."""

from __future__ import annotations

from collections.abc import Sequence

from pykern.fft.complex_transforms import fftn, ifftn
from pykern.fft.real_transforms import irfftn, rfftn
from pykern.tensor.core.tensor import Tensor

Axes = Sequence[int]


def fft2(x: object, s: Sequence[int] | None = None, axes: Axes = (-2, -1),
         norm: str = "backward") -> Tensor:
    """The 2-D FFT over `axes` (the last two by default): `fftn` with two axes."""
    return fftn(x, s=s, axes=axes, norm=norm)


def ifft2(x: object, s: Sequence[int] | None = None, axes: Axes = (-2, -1),
          norm: str = "backward") -> Tensor:
    """The inverse of `fft2`."""
    return ifftn(x, s=s, axes=axes, norm=norm)


def rfft2(x: object, s: Sequence[int] | None = None, axes: Axes = (-2, -1),
          norm: str = "backward") -> Tensor:
    """The 2-D FFT of a real signal over `axes`: `rfftn` with two axes."""
    return rfftn(x, s=s, axes=axes, norm=norm)


def irfft2(x: object, s: Sequence[int] | None = None, axes: Axes = (-2, -1),
           norm: str = "backward") -> Tensor:
    """The inverse of `rfft2`."""
    return irfftn(x, s=s, axes=axes, norm=norm)
