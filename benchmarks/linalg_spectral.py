"""pk.linalg's spectral functions: `eigh` and `svd` of one f32 256×256 matrix and of a batch
of 10,000 8×8 ones (--quick: 64 and 100), in device time (GPU timestamps; the host device's own
timer), against torch.linalg on CUDA (CUDA events) where torch has a GPU, else numpy.linalg
(wall clock).

Both read back one flag per matrix after each batch of Jacobi sweeps (whether it converged),
so their figures include those round trips. Every pykern result is checked by its residual.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

import pykern as pk

from .linalg import Case
from .clock import cuda_per_call, gpu_per_call, reps_for, wall_per_call
from .peers import Peers
from .plan import Plan
from .results import Results, Row

GROUP = "linalg_spectral"
BUDGET_S = 1.0
MOST_REPS = 10


def cases(quick: bool) -> list[Case]:
    big, many = (64, 100) if quick else (256, 10_000)
    return [Case(op, b, n) for op in ("eigh", "svd") for b, n in ((1, big), (many, 8))]


def run(plan: Plan, results: Results, peers: Peers) -> None:
    quick = plan.sizes[0] < 2**20
    for case in cases(quick):
        a = inputs(case)
        try:
            _pykern(case, a, results)
        except Exception as e:  # noqa: BLE001 - one case failing must not lose the others
            results.fail(f"{GROUP}: pykern {case.name} FAILED: {type(e).__name__}: {e}")
        if peers.torch is not None and peers.cuda:
            results.attempt(f"torch {case.name}", functools.partial(_torch, case, a, results,
                                                                    peers))
        else:
            _numpy(case, a, results)


def inputs(case: Case) -> np.ndarray:
    """An f32 batch of random symmetric matrices (general ones serve svd as well)."""
    g = np.random.default_rng(0).standard_normal((case.batch, case.n, case.n))
    return ((g + np.swapaxes(g, 1, 2)) / 2).astype(np.float32)


def _call(case: Case, lib: object, a: object) -> Callable[[], object]:
    linalg = lib.linalg  # type: ignore[attr-defined]
    if case.op == "eigh":
        return lambda: linalg.eigh(a)
    return lambda: linalg.svd(a, full_matrices=False)


def _row(results: Results, case: Case, impl: str, seconds: float, method: str) -> None:
    results.add(Row(GROUP, case.name, impl, seconds * 1e3, "ms", False, method))


def _pykern(case: Case, a: np.ndarray, results: Results) -> None:
    work = _call(case, pk, pk.asarray(a))
    dev = pk.get_device()
    first, _ = gpu_per_call(dev, work, 1)
    seconds, out = gpu_per_call(dev, work, reps_for(first, BUDGET_S, MOST_REPS))
    if residual(case, a, out) > 100:
        results.fail(f"{GROUP}: pykern {case.name} gave a wrong result")
    _row(results, case, "pykern", seconds, "gpu timestamps")


def _torch(case: Case, a: np.ndarray, results: Results, peers: Peers) -> None:
    torch = peers.torch
    work = _call(case, torch, torch.from_numpy(a).cuda())
    first, _ = cuda_per_call(torch, work, 1)
    seconds, _ = cuda_per_call(torch, work, reps_for(first, BUDGET_S, MOST_REPS))
    _row(results, case, "torch cuda", seconds, "cuda events")


def _numpy(case: Case, a: np.ndarray, results: Results) -> None:
    work = _call(case, np, a)
    first, _ = wall_per_call(work, 1)
    seconds, _ = wall_per_call(work, reps_for(first, BUDGET_S, MOST_REPS))
    _row(results, case, "numpy", seconds, "wall clock")


def residual(case: Case, a: np.ndarray, out: object) -> float:
    """‖A V − V Λ‖ (eigh) or ‖U S Vh − A‖ (svd) in units of ‖A‖·n·ε(f32)."""
    a64 = a.astype(np.float64)
    parts = [np.asarray(t, dtype=np.float64) for t in out]  # type: ignore[attr-defined]
    if case.op == "eigh":
        w, v = parts
        res = a64 @ v - v * w[:, None, :]
    else:
        u, s, vh = parts
        res = (u * s[:, None, :]) @ vh - a64
    scale = np.linalg.norm(a64, axis=(1, 2)) * case.n * np.finfo(np.float32).eps
    return float((np.linalg.norm(res, axis=(1, 2)) / scale).max())
