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
