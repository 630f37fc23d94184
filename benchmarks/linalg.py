"""pk.linalg's factorizations: `solve` (one right-hand side), `cholesky` and `qr` of one f32
1024×1024 matrix and of a batch of 10,000 8×8 ones (--quick: 128 and 100), in device time
(GPU timestamps; the host device's own timer), against torch.linalg on CUDA (CUDA events)
where torch has a GPU, else numpy.linalg (wall clock).

`solve` and `cholesky` read back one integer per matrix (whether it was singular or not
positive definite) to raise numpy's LinAlgError, so their figures include that round trip.
Every pykern result is checked by its backward error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import pykern as pk

from .clock import cuda_per_call, gpu_per_call, reps_for, wall_per_call
from .peers import Peers
from .plan import Plan
from .results import Results, Row

BUDGET_S = 1.0
MOST_REPS = 20


@dataclass(frozen=True)
class Case:
    op: str  # solve, cholesky, qr (linalg_spectral: eigh, svd)
    batch: int
    n: int

    @property
    def name(self) -> str:
        return f"{self.op} {self.n}x{self.n}" + (f" x{self.batch}" if self.batch > 1 else "")


def cases(quick: bool) -> list[Case]:
    big, many = (128, 100) if quick else (1024, 10_000)
    return [Case(op, b, n) for op in ("solve", "cholesky", "qr") for b, n in ((1, big),
                                                                              (many, 8))]


def run(plan: Plan, results: Results, peers: Peers) -> None:
    quick = plan.sizes[0] < 2**20
    for case in cases(quick):
        a, b = inputs(case)
        try:
            _pykern(case, a, b, results)
        except Exception as e:  # noqa: BLE001 - one case failing must not lose the others
            results.fail(f"linalg: pykern {case.name} FAILED: {type(e).__name__}: {e}")
        if peers.torch is not None and peers.cuda:
            results.attempt(f"torch {case.name}", functools.partial(_torch, case, a, b, results,
                                                                    peers))
        else:
            _numpy(case, a, b, results)


def inputs(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """An f32 well-conditioned (SPD for cholesky) batch and a right-hand side per matrix."""
    rng = np.random.default_rng(0)
    g = rng.standard_normal((case.batch, case.n, case.n)).astype(np.float32)
    a = g @ np.swapaxes(g, 1, 2) / case.n + np.eye(case.n, dtype=np.float32)
    return a.astype(np.float32), rng.standard_normal((case.batch, case.n, 1)).astype(np.float32)


def _call(case: Case, lib: object, a: object, b: object) -> Callable[[], object]:
    linalg = lib.linalg  # type: ignore[attr-defined]
    if case.op == "solve":
        return lambda: linalg.solve(a, b)
    if case.op == "cholesky":
        return lambda: linalg.cholesky(a)
    return lambda: linalg.qr(a)


def _row(results: Results, case: Case, impl: str, seconds: float, method: str) -> None:
    results.add(Row("linalg", case.name, impl, seconds * 1e3, "ms", False, method))


def _pykern(case: Case, a: np.ndarray, b: np.ndarray, results: Results) -> None:
    work = _call(case, pk, pk.asarray(a), pk.asarray(b))
    dev = pk.get_device()
    first, _ = gpu_per_call(dev, work, 1)
    seconds, out = gpu_per_call(dev, work, reps_for(first, BUDGET_S, MOST_REPS))
    if backward_error(case, a, b, out) > 100:
        results.fail(f"linalg: pykern {case.name} gave a wrong result")
    _row(results, case, "pykern", seconds, "gpu timestamps")


def _torch(case: Case, a: np.ndarray, b: np.ndarray, results: Results, peers: Peers) -> None:
    torch = peers.torch
    work = _call(case, torch, torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda())
    first, _ = cuda_per_call(torch, work, 1)
    seconds, _ = cuda_per_call(torch, work, reps_for(first, BUDGET_S, MOST_REPS))
    _row(results, case, "torch cuda", seconds, "cuda events")


def _numpy(case: Case, a: np.ndarray, b: np.ndarray, results: Results) -> None:
    work = _call(case, np, a, b)
    first, _ = wall_per_call(work, 1)
    seconds, _ = wall_per_call(work, reps_for(first, BUDGET_S, MOST_REPS))
    _row(results, case, "numpy", seconds, "wall clock")


def backward_error(case: Case, a: np.ndarray, b: np.ndarray, out: object) -> float:
    """The result's backward error in units of n·ε(f32) (a stable method gives a few)."""
    a64 = a.astype(np.float64)
    if case.op == "solve":
        x = np.asarray(out, dtype=np.float64)
        res = a64 @ x - b
        scale = np.linalg.norm(a64, axis=(1, 2)) * np.linalg.norm(x, axis=(1, 2))
    elif case.op == "cholesky":
        ell = np.asarray(out, dtype=np.float64)
        res = ell @ np.swapaxes(ell, 1, 2) - a64
        scale = np.linalg.norm(a64, axis=(1, 2))
    else:
        q, r = (np.asarray(t, dtype=np.float64) for t in out)  # type: ignore[attr-defined]
        res = q @ r - a64
        scale = np.linalg.norm(a64, axis=(1, 2))
    ratio = np.linalg.norm(res, axis=(1, 2)) / (scale * case.n * np.finfo(np.float32).eps)
    return float(ratio.max())
