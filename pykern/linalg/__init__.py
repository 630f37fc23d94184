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

from pykern.ops.public import declare as _declare  # noqa: E402
from pykern.ops.public import torch_names as _torch  # noqa: E402
from pykern.tensor.core import operand_device as _edge  # noqa: E402


def _linalg(name: str, *aten: str, torch: str | None = "", grad: str = "inline",
            numpy: bool = True) -> None:
    """Declares pk.linalg.<name> (each records its backward itself, `linalg/gradients.py`,
    or has nothing to differentiate); PyTorch's torch.linalg.<name> unless `torch` says."""
    fn = globals()[name]
    aliases = _torch(f"linalg.{name}" if torch == "" else torch, *aten,
                     numpy=f"linalg.{name}" if numpy else None, array_api=f"linalg.{name}")
    globals()[name] = _declare(fn, "linalg", name=f"linalg.{name}", grad=grad,
                               complex_grad=True, exports=("linalg",), aliases=aliases)


for _name, _aten in (("cholesky", "aten::linalg_cholesky"), ("det", "aten::linalg_det"),
                     ("slogdet", "aten::linalg_slogdet"), ("qr", "aten::linalg_qr"),
                     ("inv", "aten::linalg_inv"), ("solve", "aten::linalg_solve"),
                     ("eigh", "aten::linalg_eigh"), ("eigvalsh", "aten::linalg_eigvalsh"),
                     ("matrix_norm", "aten::linalg_matrix_norm"), ("norm", "aten::linalg_norm"),
                     ("vector_norm", "aten::linalg_vector_norm"), ("pinv", "aten::linalg_pinv"),
                     ("svd", "aten::linalg_svd"), ("svdvals", "aten::linalg_svdvals"),
                     ("cross", "aten::linalg_cross"), ("matrix_power", "aten::linalg_matrix_power"),
                     ("vecdot", "aten::linalg_vecdot")):
    _linalg(_name, _aten)
_linalg("matrix_rank", "aten::linalg_matrix_rank", grad="none")
for _name in ("diagonal", "matmul", "matrix_transpose", "outer", "tensordot", "trace"):
    _linalg(_name, torch=None, grad="composite", numpy=_name not in ("matrix_transpose",))

# each runs on its tensors' device (pykern.tensor.core.operand_device)
_edge.wrap_functions(globals(), [n for n in dir() if not n.startswith("_")])
