"""`pk.fft`: the array API standard's `fft` extension (2024.12) on pykern tensors, also `xp.fft`
of the namespace, and numpy's `fft2`, `ifft2`, `rfft2`, `irfft2`. Every transform runs as pykern
kernels on the device of its tensor.
"""

from __future__ import annotations

from pykern.ops.public import declare, torch_names
from pykern.tensor.core import operand_device as _edge
from pykern.fft.complex_transforms import fft, fftn, ifft, ifftn
from pykern.fft.helpers import fftfreq, fftshift, ifftshift, rfftfreq
from pykern.fft.planes import fft2, ifft2, irfft2, rfft2
from pykern.fft.real_transforms import hfft, ihfft, irfft, irfftn, rfft, rfftn

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]



def _transform(name: str, grad: str = "inline") -> None:
    """Declares pk.fft.<name> (a transform records its adjoint, `fft/gradients.py`)."""
    globals()[name] = declare(globals()[name], "fft", name=f"fft.{name}", grad=grad,
                              complex_grad=True, exports=("fft",), aliases=torch_names(
                                  f"fft.{name}", f"aten::fft_{name}", numpy=f"fft.{name}",
                                  array_api=f"fft.{name}"))


for _name in ("fft", "fft2", "fftn", "hfft", "ifft", "ifft2", "ifftn", "ihfft", "irfft", "irfft2",
              "irfftn", "rfft", "rfft2", "rfftn"):
    _transform(_name)
for _name in ("fftfreq", "rfftfreq"):
    _transform(_name, grad="none")
for _name in ("fftshift", "ifftshift"):
    _transform(_name, grad="composite")

# each runs on its tensor's device (pykern.tensor.core.operand_device)
_edge.wrap_functions(globals(), __all__)
