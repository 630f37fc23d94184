"""pk.linalg's factorizations and decompositions on f32: `solve` with 64 right-hand sides,
`cholesky` and `qr` of one 1024×1024 and one 4096×4096 matrix, `eigh` and `svd` of one
1024×1024 matrix, and `solve`, `cholesky`, `qr` of a batch of 10,000 8×8 ones (--quick: 128
and 256, and a batch of 100), in device time (GPU timestamps; the host device's own timer),
against torch.linalg on CUDA (CUDA events) where torch has a GPU, else numpy.linalg (wall
clock). `linalg_spectral` has eigh and svd of smaller and batched matrices.

`solve` and `cholesky` read back one integer per matrix (whether it was singular or not
positive definite) to raise numpy's LinAlgError, so their figures include that round trip (as
torch's, which checks too). Every pykern result is checked by its backward error.
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
RHS = 64  # right-hand sides of the solve cases


@dataclass(frozen=True)
class Case:
    op: str  # solve, cholesky, qr, eigh, svd
    batch: int
    n: int

    @property
    def name(self) -> str:
        rhs = f" rhs{RHS}" if self.op == "solve" and self.batch == 1 else ""
        return f"{self.op} {self.n}x{self.n}" + (f" x{self.batch}" if self.batch > 1 else "") \
            + rhs


def cases(quick: bool) -> list[Case]:
    sizes, many = ((128, 256), 100) if quick else ((1024, 4096), 10_000)
    out = [Case(op, 1, n) for op in ("solve", "cholesky", "qr") for n in sizes]
    out += [Case(op, 1, sizes[0]) for op in ("eigh", "svd")]
    return out + [Case(op, many, 8) for op in ("solve", "cholesky", "qr")]


def run(plan: Plan, results: Results, peers: Peers, group: str = "linalg",
        chosen: list[Case] | None = None) -> None:
    quick = plan.sizes[0] < 2**20
    for case in cases(quick) if chosen is None else chosen:
        a, b = inputs(case)
        try:
            _pykern(case, a, b, results, group)
        except Exception as e:  # noqa: BLE001 - one case failing must not lose the others
            results.fail(f"{group}: pykern {case.name} FAILED: {type(e).__name__}: {e}")
        if peers.torch is not None and peers.cuda:
            results.attempt(f"torch {case.name}", functools.partial(
                _torch, case, a, b, results, peers, group))
        else:
            _numpy(case, a, b, results, group)


def inputs(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """An f32 batch (well-conditioned SPD for cholesky and solve, symmetric for eigh, Gaussian
    for qr and svd) and right-hand sides (64 for one matrix, one per matrix of a batch)."""
    rng = np.random.default_rng(0)
    g = rng.standard_normal((case.batch, case.n, case.n)).astype(np.float32)
    if case.op in ("solve", "cholesky"):
        a = g @ np.swapaxes(g, 1, 2) / case.n + np.eye(case.n, dtype=np.float32)
    elif case.op == "eigh":
        a = (g + np.swapaxes(g, 1, 2)) / 2
    else:
        a = g
    k = RHS if case.batch == 1 else 1
    return a.astype(np.float32), rng.standard_normal((case.batch, case.n, k)).astype(np.float32)


def _call(case: Case, lib: object, a: object, b: object) -> Callable[[], object]:
    linalg = lib.linalg  # type: ignore[attr-defined]
    return {"solve": lambda: linalg.solve(a, b), "cholesky": lambda: linalg.cholesky(a),
            "qr": lambda: linalg.qr(a), "eigh": lambda: linalg.eigh(a),
            "svd": lambda: linalg.svd(a, full_matrices=False)}[case.op]


def _row(results: Results, group: str, case: Case, impl: str, seconds: float,
         method: str) -> None:
    results.add(Row(group, case.name, impl, seconds * 1e3, "ms", False, method))


def _pykern(case: Case, a: np.ndarray, b: np.ndarray, results: Results, group: str) -> None:
    work = _call(case, pk, pk.asarray(a), pk.asarray(b))
    dev = pk.get_device()
    first, _ = gpu_per_call(dev, work, 1)
    seconds, out = gpu_per_call(dev, work, reps_for(first, BUDGET_S, MOST_REPS))
    error = backward_error(case, a, b, out)
    if not error < 100:
        results.fail(f"{group}: pykern {case.name} gave a wrong result (backward error "
                     f"{error:.3g} n·ε)")
    _row(results, group, case, "pykern", seconds, "gpu timestamps")


def _torch(case: Case, a: np.ndarray, b: np.ndarray, results: Results, peers: Peers,
           group: str) -> None:
    torch = peers.torch
    work = _call(case, torch, torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda())
    first, _ = cuda_per_call(torch, work, 1)
    seconds, _ = cuda_per_call(torch, work, reps_for(first, BUDGET_S, MOST_REPS))
    _row(results, group, case, "torch cuda", seconds, "cuda events")


def _numpy(case: Case, a: np.ndarray, b: np.ndarray, results: Results, group: str) -> None:
    work = _call(case, np, a, b)
    first, _ = wall_per_call(work, 1)
    seconds, _ = wall_per_call(work, reps_for(first, BUDGET_S, MOST_REPS))
    _row(results, group, case, "numpy", seconds, "wall clock")


def backward_error(case: Case, a: np.ndarray, b: np.ndarray, out: object) -> float:
    """The result's backward error in units of n·ε(f32) (a stable method gives a few): the
    residual relative to the data, and for Q, U, V their departure from orthonormality."""
    a64 = a.astype(np.float64)
    parts = [np.asarray(t, dtype=np.float64) for t in out] if isinstance(out, tuple) \
        else [np.asarray(out, dtype=np.float64)]
    norm_a = np.linalg.norm(a64, axis=(1, 2))
    if case.op == "solve":
        x = parts[0]
        res = [a64 @ x - b]
        scale = norm_a * np.linalg.norm(x, axis=(1, 2))
    elif case.op == "cholesky":
        ell = parts[0]
        res, scale = [ell @ np.swapaxes(ell, 1, 2) - a64], norm_a
    elif case.op == "qr":
        q, r = parts
        res, scale = [q @ r - a64, _orthogonality(q) * norm_a[:, None, None]], norm_a
    elif case.op == "eigh":
        w, v = parts
        res, scale = [a64 @ v - v * w[:, None, :], _orthogonality(v) * norm_a[:, None, None]], \
            norm_a
    else:
        u, s, vh = parts
        res = [(u * s[:, None, :]) @ vh - a64, _orthogonality(u) * norm_a[:, None, None],
               _orthogonality(np.swapaxes(vh, 1, 2)) * norm_a[:, None, None]]
        scale = norm_a
    worst = max(float((np.linalg.norm(r, axis=(1, 2)) / scale).max()) for r in res)
    return worst / (case.n * np.finfo(np.float32).eps)


def _orthogonality(q: np.ndarray) -> np.ndarray:
    """QᵀQ - I of each matrix of a stack."""
    return np.swapaxes(q, 1, 2) @ q - np.eye(q.shape[2])
