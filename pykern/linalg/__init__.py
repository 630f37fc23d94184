"""`pk.linalg`: the array API standard's `linalg` extension (2023.12) on pykern tensors, also
`xp.linalg` of the namespace. Every function runs as pykern kernels on the tensors' device.
"""

from __future__ import annotations

# factorizations
from pykern.linalg.cholesky import cholesky
from pykern.linalg.det import SlogdetResult, det, slogdet
from pykern.linalg.errors import LinAlgError

from pykern.linalg.solve import inv, solve

__all__ = ["LinAlgError", "QRResult", "SlogdetResult", "cholesky", "det", "inv", "qr",
           "slogdet", "solve"]
