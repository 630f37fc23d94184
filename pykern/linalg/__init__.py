"""`pk.linalg`: the array API standard's `linalg` extension (2023.12) on pykern tensors, also
`xp.linalg` of the namespace. Every function runs as pykern kernels on the tensors' device.
"""

from __future__ import annotations

# spectral, norms and products
from pykern.linalg.eigh import EighResult, eigh, eigvalsh
from pykern.linalg.norms import matrix_norm, norm, vector_norm
from pykern.linalg.pinv import matrix_rank, pinv
from pykern.linalg.products import (cross, diagonal, matmul, matrix_power, matrix_transpose,
                                    outer, tensordot, trace, vecdot)
from pykern.linalg.svd import SVDResult, svd, svdvals

__all__ = [
    # spectral, norms and products
    "EighResult", "SVDResult", "cross", "diagonal", "eigh", "eigvalsh", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "norm", "outer", "pinv",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]
