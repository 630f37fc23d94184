"""`pk.fft`: the array API standard's `fft` extension (2023.12) on pykern tensors, also `xp.fft`
of the namespace. Every transform runs as pykern kernels on the tensors' device.
"""

from __future__ import annotations
