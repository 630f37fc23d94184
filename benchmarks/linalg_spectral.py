"""pk.linalg's spectral functions: `eigh` and `svd` of one f32 256×256 matrix and of a batch
of 10,000 8×8 ones (--quick: 64 and 100), in device time (GPU timestamps; the host device's own
timer), against torch.linalg on CUDA (CUDA events) where torch has a GPU, else numpy.linalg
(wall clock). The `linalg` group has them at 1024×1024.

Both read back one flag per matrix after each batch of Jacobi sweeps (whether it converged),
so their figures include those round trips. Every pykern result is checked by its residual
and the orthonormality of its vectors (`linalg.backward_error`).
"""

from __future__ import annotations

from . import linalg
from .linalg import Case
from .peers import Peers
from .plan import Plan
from .results import Results

GROUP = "linalg_spectral"


def cases(quick: bool) -> list[Case]:
    big, many = (64, 100) if quick else (256, 10_000)
    return [Case(op, b, n) for op in ("eigh", "svd") for b, n in ((1, big), (many, 8))]


def run(plan: Plan, results: Results, peers: Peers) -> None:
    quick = plan.sizes[0] < 2**20
    linalg.run(plan, results, peers, GROUP, cases(quick))
