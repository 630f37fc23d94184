"""`pk.linalg`: the array API standard's `linalg` extension (2023.12) on pykern tensors, also
`xp.linalg` of the namespace. Every function runs as pykern kernels on the tensors' device.
"""

from __future__ import annotations

# factorizations
from pykern.linalg.cholesky import cholesky  # noqa: F401
from pykern.linalg.det import SlogdetResult, det, slogdet  # noqa: F401
from pykern.linalg.errors import LinAlgError  # noqa: F401
from pykern.linalg.qr import QRResult, qr  # noqa: F401
from pykern.linalg.solve import inv, solve  # noqa: F401

