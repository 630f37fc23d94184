"""Timing helpers: wall clock (for host work and launch overhead) and GPU time per run."""

from __future__ import annotations

import time
from collections.abc import Callable


def wall(fn: Callable[[], object], repeat: int = 1) -> float:
    """Seconds one call of `fn` takes: the fastest of `repeat` calls (after one warm-up)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def per_call(fn: Callable[[], object], calls: int) -> float:
    """Seconds per call of `fn`, over `calls` calls in a row (after one warm-up call)."""
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def gpu_per_call(device: object, work: Callable[[], object], reps: int) -> tuple[float, object]:
    """Device seconds per call of `work` (a tensor op as a user calls it, `pk.matmul(a, b)`),
    from GPU timestamps around `reps` calls recorded back to back after one warm-up call (which
    compiles), and what the last call returned.

    The host records the calls faster than a large op runs, so the timestamps measure the
    device alone; the results dropped between calls are freed once their work is done."""
    work()
    device.sync()  # type: ignore[attr-defined]
    result = None
    with device.timer() as timer:  # type: ignore[attr-defined]
        for _ in range(reps):
            result = work()
    return timer.elapsed_s / reps, result


def cuda_per_call(torch: object, work: Callable[[], object], reps: int) -> tuple[float, object]:
    """Seconds per call of `work` on the current CUDA stream, from CUDA events around `reps`
    calls after a warm-up call, and what the last call returned."""
    cuda = torch.cuda  # type: ignore[attr-defined]
    work()
    cuda.synchronize()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    result = None
    start.record()
    for _ in range(reps):
        result = work()
    end.record()
    cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / reps, result


def wall_per_call(work: Callable[[], object], reps: int) -> tuple[float, object]:
    """Wall-clock seconds per call of `work` (a peer on the host, whose work is done when the
    call returns), over `reps` calls after a warm-up call, and what the last call returned."""
    work()
    result = None
    start = time.perf_counter()
    for _ in range(reps):
        result = work()
    return (time.perf_counter() - start) / reps, result


def reps_for(seconds_per_call: float, budget_s: float, most: int) -> int:
    """How many calls fill `budget_s` at `seconds_per_call` each: at least 1, at most `most`."""
    if seconds_per_call <= 0:
        return most
    return max(1, min(most, int(budget_s / seconds_per_call)))
