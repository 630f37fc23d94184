"""Times the f32 GEMM candidates of pykern/tensor/gemm/gemm_f32.py next to today's `pk.matmul`.

    python3 benchmarks/f32_gemm_candidates.py [--sizes 2048 4096 8192] [--only NAME ...]

For each n, every candidate computes c = a @ b for n x n f32 operands (uniform in [-1, 1)),
timed with GPU timestamps around back-to-back launches (`benchmarks.clock.gpu_per_call`), and
is checked against float64 on a sample of rows: the table gives TFLOP/s (2 n^3 per product),
the maximum absolute error on those rows and that error over the f32-accumulation bound
n * 2^-24 * (|a| |b|) (below 1 is within it; above, the row says WRONG). torch's f32 matmul
(TF32 off) is timed too when torch with CUDA is importable, for the ratio.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pykern as pk  # noqa: E402
from benchmarks.clock import gpu_per_call, reps_for  # noqa: E402
from pykern.tensor.gemm import gemm_f32  # noqa: E402
from pykern.tensor.core.strided import view  # noqa: E402

SAMPLE_ROWS = 64
TIME_BUDGET_S = 1.0  # of device time per timed figure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096, 8192])
    parser.add_argument("--only", nargs="+", default=None, help="candidate names to run")
    args = parser.parse_args(argv)
    device = pk.get_device()
    print(f"device: {device}")
    found = [(name, fn) for name, fn in gemm_f32.candidates()
             if args.only is None or name in args.only]
    print(f"{'n':>6} {'kernel':<28} {'TFLOP/s':>8} {'max err':>10} {'err/bound':>9}")
    for n in args.sizes:
        rng = np.random.default_rng(n)
        a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        ta, tb = pk.asarray(a), pk.asarray(b)
        rows = np.sort(rng.choice(n, min(SAMPLE_ROWS, n), replace=False))
        reference, bound = _reference(a, b, rows)
        _warm_up(device, ta, tb)
        cases: list[tuple[str, Callable[[], pk.Tensor]]] = [
            ("pk.matmul (today)", functools.partial(pk.matmul, ta, tb))]
        cases += [(name, _candidate(fn, ta, tb)) for name, fn in found]
        for name, work in cases:
            try:
                seconds, c = _time(device, work)
            except Exception as exc:  # noqa: BLE001  (report and go on with the next)
                print(f"{n:>6} {name:<28} failed: {type(exc).__name__}: {exc}")
                continue
            err = np.abs(c.numpy()[rows].astype(np.float64) - reference)
            ratio = (err / bound).max()
            print(f"{n:>6} {name:<28} {2.0 * n**3 / seconds / 1e12:>8.3f} {err.max():>10.2e} "
                  f"{ratio:>9.3f}{'' if ratio <= 1 else '  WRONG'}", flush=True)
        _torch(a, b, n)
    return 0


def _candidate(launch: gemm_f32.Launch, ta: pk.Tensor, tb: pk.Tensor
               ) -> Callable[[], pk.Tensor]:
    """A call that computes a @ b into a new tensor with `launch` (as `pk.matmul` would)."""
    n, m = ta.shape[0], tb.shape[1]

    def work() -> pk.Tensor:
        c = pk.empty((n, m))
        launch(_as4d(ta), _as4d(tb), _as4d(c), 0)
        return c

    return work


def _as4d(t: pk.Tensor) -> pk.Tensor:
    return view(t, (1, 1) + t.shape, (0, 0) + t.element_strides)


def _time(device: object, work: Callable[[], pk.Tensor]) -> tuple[float, pk.Tensor]:
    """Device seconds per call: a first estimate, then enough calls to fill the budget."""
    first, _ = gpu_per_call(device, work, 1)
    return gpu_per_call(device, work, reps_for(first, TIME_BUDGET_S, 50))


def _warm_up(device: object, ta: pk.Tensor, tb: pk.Tensor) -> None:
    """About a second of untimed work, so that the first figure is not taken at idle clocks."""
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:
        pk.matmul(ta, tb)
        device.sync()  # type: ignore[attr-defined]


def _reference(a: np.ndarray, b: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 a[rows] @ b and the f32-accumulation bound K * 2^-24 * (|a| |b|) of each."""
    a64, b64 = a[rows].astype(np.float64), b.astype(np.float64)
    bound = a.shape[1] * 2.0**-24 * (np.abs(a64) @ np.abs(b64)) + 1e-30
    return a64 @ b64, bound


def _torch(a: np.ndarray, b: np.ndarray, n: int) -> None:
    """torch's f32 matmul without TF32 on the same operands, where torch has CUDA."""
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        return
    from benchmarks.clock import cuda_per_call

    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    seconds, _ = cuda_per_call(torch, lambda: torch.matmul(ta, tb), 20)
    print(f"{n:>6} {'torch (no TF32)':<28} {2.0 * n**3 / seconds / 1e12:>8.2f}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
