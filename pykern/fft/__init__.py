"""`pk.fft`: the array API standard's `fft` extension (2023.12) on pykern tensors, also `xp.fft`
of the namespace. Every transform runs as pykern kernels on the tensors' device.
"""

from __future__ import annotations

from pykern.fft.complex_transforms import fft, fftn, ifft, ifftn
from pykern.fft.helpers import fftfreq, fftshift, ifftshift, rfftfreq
from pykern.fft.real_transforms import hfft, ihfft, irfft, irfftn, rfft, rfftn

__all__ = ["fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfftn", "rfft", "rfftfreq", "rfftn"]
