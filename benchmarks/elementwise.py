"""Elementwise add (c = a + b) and saxpy (out = alpha * x + y) over f32 arrays, in GB/s, and
`exp(a) * 2.0` through the tensor ops in elements per second (group `exp_scale`).

Three arrays are counted (two read, one written): 12 bytes per element, whatever the
implementation really moves (numpy's saxpy makes two passes; it is charged the same 12 bytes).
pykern is timed with GPU timestamps around `reps` launches recorded back to back; torch on CUDA
with CUDA events the same way; the CPU peers and Taichi (whose Vulkan queue we cannot
timestamp) by the wall clock from the first launch to the end of a sync.
"""

from __future__ import annotations

import time

import numpy as np

import pykern as pk
from pykern.jit.kernel import DEFAULT_WORKGROUPS

from . import kernels
from .clock import cuda_per_call, per_call
from .peers import Peers
from .plan import Plan
from .results import Results, Row, power_of_two

ALPHA = 2.0
BYTES_PER_ELEMENT = 12


def run(plan: Plan, results: Results, peers: Peers) -> None:
    for n, reps in zip(plan.sizes, plan.reps, strict=True):
        case = f"n={power_of_two(n)} f32"
        a = (np.arange(n, dtype=np.float32) % 4096) * np.float32(0.5)  # sums are exact
        b = np.full(n, 0.25, np.float32)
        _pykern(plan, results, case, a, b, reps)
        _peers(results, peers, case, a, b, reps)


def _peers(results: Results, peers: Peers, case: str, a: np.ndarray, b: np.ndarray,
           reps: int) -> None:
    _numpy(results, case, a, b, reps)
    for device in peers.torch_devices():
        results.attempt(f"torch {device} on {case}",
                        lambda d=device: _torch(results, case, peers.torch, d, a, b, reps))
    if peers.taichi is not None:
        results.attempt(f"taichi on {case}",
                        lambda: _taichi(results, case, peers.taichi, a, b, reps))


def _row(results: Results, group: str, case: str, impl: str, gbps: float, method: str,
         **extra: object) -> None:
    results.add(Row(group, case, impl, gbps, "GB/s", True, method, dict(extra)))


# ---- pykern ----


def _pykern(plan: Plan, results: Results, case: str, a: np.ndarray, b: np.ndarray,
            reps: int) -> None:
    dev = pk.get_device()
    n = a.size
    A, B, C = pk.asarray(a), pk.asarray(b), pk.empty(n, pk.f32)
    quarter = -(-n // 4)
    # the kernels as written (the compiler's default workgroup) and with the other usual size
    default = DEFAULT_WORKGROUPS[1][0]
    other = 64 if default != 64 else 256
    variants = [  # (label, kernel, grid)
        (f"add wg{default}", kernels.add, n),
        (f"add wg{other}", pk.kernel(kernels.add.__wrapped__, workgroup=(other,)), n),
        (f"add_x4 wg{default}", kernels.add_x4, quarter),
        (f"add_x4 wg{other}", pk.kernel(kernels.add_x4.__wrapped__, workgroup=(other,)),
         quarter),
        (f"add_grid_stride wg{default}", kernels.add_grid_stride,
         min(n, plan.grid_stride_invocations)),
    ]
    for label, kernel, grid in variants:
        gbps, wall_gbps = _gpu_gbps(dev, lambda k=kernel, g=grid: k[g](A, B, C), n, reps)
        correct = bool(np.array_equal(C.numpy(), a + b))
        _row(results, "add", case, f"pykern {label}", gbps, "gpu timestamps",
             grid=grid, wall_gbps=wall_gbps, correct=correct)
        if not correct:
            results.note(f"pykern {label} gave wrong results on {case}")
    _tensor_ops(dev, results, case, A, B, a, b, reps)
    for label, kernel, grid in [(f"saxpy wg{default}", kernels.saxpy, n),
                                (f"saxpy_x4 wg{default}", kernels.saxpy_x4, quarter)]:
        gbps, wall_gbps = _gpu_gbps(
            dev, lambda k=kernel, g=grid: k[g](ALPHA, A, B, C), n, reps)
        correct = bool(np.array_equal(C.numpy(), np.float32(ALPHA) * a + b))
        _row(results, "saxpy", case, f"pykern {label}", gbps, "gpu timestamps",
             grid=grid, wall_gbps=wall_gbps, correct=correct)
        if not correct:
            results.note(f"pykern {label} gave wrong results on {case}")


def _tensor_ops(dev: object, results: Results, case: str, A: pk.Tensor, B: pk.Tensor,
                a: np.ndarray, b: np.ndarray, reps: int) -> None:
    """The same add as a tensor op (`A + B`, a new result each time, as users write it), and
    `pk.exp(A) * 2.0` (two ops, each reading and writing the array) in elements per second."""
    gbps, wall_gbps = _gpu_gbps(dev, lambda: A + B, a.size, reps)
    correct = bool(np.array_equal((A + B).numpy(), a + b))
    _row(results, "add", case, "pykern A + B (tensor op)", gbps, "gpu timestamps",
         wall_gbps=wall_gbps, correct=correct)
    x = (np.arange(a.size, dtype=np.float32) % 4096) * np.float32(1 / 512) - 4  # [-4, 4)
    xt = pk.asarray(x)
    gbps, _ = _gpu_gbps(dev, lambda: pk.exp(xt) * 2.0, a.size, reps)
    got = (pk.exp(xt) * 2.0).numpy()
    exp_correct = bool(np.allclose(got, np.exp(x.astype(np.float64)) * 2.0, rtol=1e-5))
    results.add(Row("exp_scale", case, "pykern exp(A) * 2.0 (tensor ops)",
                    gbps / BYTES_PER_ELEMENT, "Gelt/s", True, "gpu timestamps",
                    {"correct": exp_correct}))
    if not (correct and exp_correct):
        results.note(f"pykern tensor ops gave wrong results on {case}")


def _gpu_gbps(dev: object, launch, n: int, reps: int) -> tuple[float, float]:
    """GB/s from GPU timestamps around `reps` launches, and from the wall clock."""
    launch()  # compiles, and warms the caches
    dev.sync()
    start = time.perf_counter()
    with dev.timer() as timer:
        for _ in range(reps):
            launch()
    seconds = timer.elapsed_s  # waits for the work
    wall = time.perf_counter() - start
    nbytes = BYTES_PER_ELEMENT * n * reps
    return nbytes / seconds / 1e9, nbytes / wall / 1e9


# ---- peers ----


def _host_calls(reps: int) -> int:
    """Calls timed on the host: a few are enough to average, and each can take a second."""
    return max(3, min(reps, 5))


def _numpy(results: Results, case: str, a: np.ndarray, b: np.ndarray, reps: int) -> None:
    c = np.empty_like(a)
    seconds = per_call(lambda: np.add(a, b, out=c), _host_calls(reps))
    _row(results, "add", case, "numpy", BYTES_PER_ELEMENT * a.size / seconds / 1e9, "wall clock")

    def saxpy() -> None:
        np.multiply(a, np.float32(ALPHA), out=c)
        np.add(c, b, out=c)

    seconds = per_call(saxpy, _host_calls(reps))
    _row(results, "saxpy", case, "numpy", BYTES_PER_ELEMENT * a.size / seconds / 1e9,
         "wall clock")


def _torch(results: Results, case: str, torch, device: str, a: np.ndarray, b: np.ndarray,
           reps: int) -> None:
    ta, tb = torch.from_numpy(a).to(device), torch.from_numpy(b).to(device)
    tc = torch.empty_like(ta)
    works = {
        "add": lambda: torch.add(ta, tb, out=tc),
        "saxpy": lambda: torch.add(tb, ta, alpha=ALPHA, out=tc),
        "exp_scale": lambda: torch.exp(ta) * 2.0,
    }
    for group, work in works.items():
        if device == "cuda":
            seconds, method = cuda_per_call(torch, work, reps)[0], "cuda events"
        else:
            seconds, method = per_call(work, _host_calls(reps)), "wall clock"
        if group == "exp_scale":
            results.add(Row(group, case, f"torch {device}", a.size / seconds / 1e9, "Gelt/s",
                            True, method, {}))
        else:
            _row(results, group, case, f"torch {device}",
                 BYTES_PER_ELEMENT * a.size / seconds / 1e9, method)
    if device == "cuda":
        ta = tb = tc = None  # noqa: F841 - released before the cache is emptied
        torch.cuda.empty_cache()


def _taichi(results: Results, case: str, ti, a: np.ndarray, b: np.ndarray, reps: int) -> None:
    from . import taichi_kernels as tk

    fa, fb, fc = tk.fresh_fields(a.size, 3)
    fa.from_numpy(a)
    fb.from_numpy(b)
    works = {
        "add": lambda: tk.add(fa, fb, fc),
        "saxpy": lambda: tk.saxpy(ALPHA, fa, fb, fc),
    }
    for group, work in works.items():
        work()
        ti.sync()
        start = time.perf_counter()
        for _ in range(reps):
            work()
        ti.sync()
        seconds = (time.perf_counter() - start) / reps
        _row(results, group, case, "taichi vulkan", BYTES_PER_ELEMENT * a.size / seconds / 1e9,
             "wall clock")
