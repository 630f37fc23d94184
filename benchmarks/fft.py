"""`pk.fft` against torch.fft (cuFFT on CUDA; torch's CPU FFT elsewhere) and numpy.fft: time per
transform, in microseconds.

Cases: a 1-D c64 transform of 2^24 points on a GPU (the four-step path: three passes over
memory), a batch of transforms that fit in shared memory (one pass: 4096 points, and 1000 =
10·10·10 without Bluestein), a prime length (Bluestein) and a 2-D real-input transform (rfft2:
the rows as half-length complex transforms with the real post-processing in the same launch,
then the columns in place). pykern is timed with GPU timestamps around back-to-back calls,
torch on CUDA with CUDA events, CPU peers by the wall clock. Every pykern result is checked
against numpy's float64 transform at the tests' bound (5·ε·log2(L)·‖x‖₂ per value).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import pykern as pk

from .clock import cuda_per_call, gpu_per_call, per_call
from .peers import Peers
from .plan import GPU, QUICK, Plan
from .results import Results, Row

EPS32 = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class Case:
    name: str
    shape: tuple[int, ...]
    real: bool  # rfft2 over the last two axes of a real input; else fft along the last
    reps: int


GPU_CASES = (Case("fft 2^24 c64", (2**24,), False, 20),
             Case("fft 1024x4096 c64", (1024, 4096), False, 20),
             Case("fft 4096x1000 c64", (4096, 1000), False, 20),
             Case("fft 64x10007 c64 (prime)", (64, 10007), False, 10),
             Case("rfft2 2048x2048 f32", (2048, 2048), True, 20))
CPU_CASES = (Case("fft 2^18 c64", (2**18,), False, 3),
             Case("fft 64x1024 c64", (64, 1024), False, 3),
             Case("fft 64x1000 c64", (64, 1000), False, 3),
             Case("fft 8x1009 c64 (prime)", (8, 1009), False, 3),
             Case("rfft2 256x256 f32", (256, 256), True, 3))
QUICK_CASES = (Case("fft 2^12 c64", (2**12,), False, 2),
               Case("fft 8x256 c64", (8, 256), False, 2),
               Case("fft 2x101 c64 (prime)", (2, 101), False, 2),
               Case("rfft2 32x32 f32", (32, 32), True, 2))


def cases_for(plan: Plan) -> tuple[Case, ...]:
    if plan is QUICK:
        return QUICK_CASES
    return GPU_CASES if plan is GPU else CPU_CASES


def run(plan: Plan, results: Results, peers: Peers) -> None:
    for case in cases_for(plan):
        x = _input(case)
        _pykern(results, case, x)
        results.attempt(f"numpy on {case.name}", lambda c=case, v=x: _numpy(results, c, v))
        for device in peers.torch_devices():
            results.attempt(f"torch {device} on {case.name}",
                            lambda d=device, c=case, v=x: _torch(results, peers.torch, d, c, v))


def _input(case: Case) -> np.ndarray:
    rng = np.random.default_rng(0)
    if case.real:
        return rng.standard_normal(case.shape, dtype=np.float32)
    return (rng.standard_normal(case.shape, dtype=np.float32)
            + 1j * rng.standard_normal(case.shape, dtype=np.float32)).astype(np.complex64)


def _reference(case: Case, x: np.ndarray) -> np.ndarray:
    return np.fft.rfft2(x.astype(np.float64)) if case.real else np.fft.fft(
        x.astype(np.complex128))


def _row(results: Results, case: Case, impl: str, seconds: float, method: str,
         **extra: object) -> None:
    results.add(Row("fft", case.name, impl, seconds * 1e6, "us", False, method, dict(extra)))


def _pykern(results: Results, case: Case, x: np.ndarray) -> None:
    dev = pk.get_device()
    t = pk.asarray(x)
    work: Callable[[], pk.Tensor] = ((lambda: pk.fft.rfft2(t)) if case.real
                                     else (lambda: pk.fft.fft(t)))
    _warm_up(dev, work)
    seconds, out = gpu_per_call(dev, work, case.reps)
    correct = _within_bound(case, x, out.numpy())
    _row(results, case, "pykern pk.fft", seconds, "gpu timestamps", correct=correct)
    if not correct:
        results.fail(f"pykern pk.fft gave wrong results on {case.name}")


def _warm_up(dev: object, work: Callable[[], pk.Tensor], seconds: float = 0.3) -> None:
    """Calls for a moment before timing: the first case otherwise meets an idle GPU's low
    clocks (torch, timed after pykern on each case, never does)."""
    work()
    dev.sync()  # type: ignore[attr-defined]
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            work()
        dev.sync()  # type: ignore[attr-defined]


def _within_bound(case: Case, x: np.ndarray, got: np.ndarray) -> bool:
    want = _reference(case, x)
    length = math.prod(case.shape[-2:]) if case.real else case.shape[-1]
    pow2 = 1 << max(0, (2 * length - 2).bit_length())
    log_length = math.log2(length if length & (length - 1) == 0 else pow2)
    rows = x.reshape(-1, length) if not case.real else x.reshape(1, -1)
    norm2 = float(np.max(np.linalg.norm(rows.astype(np.complex128), axis=-1)))
    return bool(np.max(np.abs(got - want)) <= 5 * EPS32 * log_length * norm2)


def _numpy(results: Results, case: Case, x: np.ndarray) -> None:
    work = (lambda: np.fft.rfft2(x)) if case.real else (lambda: np.fft.fft(x))
    _row(results, case, "numpy", per_call(work, 2), "wall clock")


def _torch(results: Results, torch: object, device: str, case: Case, x: np.ndarray) -> None:
    tx = torch.from_numpy(x).to(device)  # type: ignore[attr-defined]
    fft = torch.fft  # type: ignore[attr-defined]
    work = (lambda: fft.rfft2(tx)) if case.real else (lambda: fft.fft(tx))
    if device == "cuda":
        seconds, method = cuda_per_call(torch, work, case.reps)[0], "cuda events"
    else:
        seconds, method = per_call(work, 2), "wall clock"
    _row(results, case, f"torch {device}", seconds, method)
    if device == "cuda":
        tx = None  # noqa: F841 - released before the cache is emptied
        torch.cuda.empty_cache()  # type: ignore[attr-defined]
