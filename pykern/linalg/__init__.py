"""`pk.linalg`: the array API standard's `linalg` extension (2024.12, unchanged since 2023.12) on
pykern tensors, also `xp.linalg` of the namespace. Every function runs as pykern kernels on the
device of its tensors.
"""

from __future__ import annotations

# factorizations
from pykern.linalg.cholesky import cholesky  # noqa: F401
from pykern.linalg.det import SlogdetResult, det, slogdet  # noqa: F401
from pykern.linalg.errors import LinAlgError  # noqa: F401
from pykern.linalg.qr import QRResult, qr  # noqa: F401
from pykern.linalg.solve import inv, solve  # noqa: F401

# spectral, norms and products
from pykern.linalg.eigh import EighResult, eigh, eigvalsh  # noqa: F401
from pykern.linalg.norms import matrix_norm, norm, vector_norm  # noqa: F401
from pykern.linalg.pinv import matrix_rank, pinv  # noqa: F401
from pykern.linalg.products import (cross, diagonal, matmul, matrix_power,  # noqa: F401
                                    matrix_transpose, outer, tensordot, trace, vecdot)
from pykern.linalg.svd import SVDResult, svd, svdvals  # noqa: F401

from pykern.tensor.core import operand_device as _edge  # noqa: E402

# each runs on its tensors' device (pykern.tensor.core.operand_device)
_edge.wrap_functions(globals(), [n for n in dir() if not n.startswith("_")])
