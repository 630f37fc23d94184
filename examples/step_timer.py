"""Steady-state time per training step, for the examples' progress lines: the mean over the
last steps, leaving out the first ones (which record the compiled step, or compile kernels),
and the time the remaining steps will take at that rate."""

from __future__ import annotations

import time
from collections import deque


class StepTimer:
    """Call `tick()` after each step (once its loss was read, so that the step has ended)."""

    def __init__(self, total: int, skip: int = 3, window: int = 20) -> None:
        self.total = total
        self.skip = skip  # steps left out of the rate: the first calls record / compile
        self.done = 0
        self._recent: deque[float] = deque(maxlen=window)
        self._last = time.perf_counter()

    def tick(self) -> None:
        now = time.perf_counter()
        self.done += 1
        if self.done > self.skip:
            self._recent.append(now - self._last)
        self._last = now

    @property
    def seconds_per_step(self) -> float | None:
        """The mean of the recent steps (None until a step past the first ones ended)."""
        return sum(self._recent) / len(self._recent) if self._recent else None

    def summary(self, items_per_step: int = 0, unit: str = "tokens") -> str:
        """"12.3 ms/step, 41,000 tokens/s, 3.2 s left" (what is known so far)."""
        per = self.seconds_per_step
        if per is None:
            return "timing after the first steps"
        parts = [f"{per * 1e3:.1f} ms/step"]
        if items_per_step:
            parts.append(f"{items_per_step / per:,.0f} {unit}/s")
        parts.append(f"{(self.total - self.done) * per:.1f} s left")
        return ", ".join(parts)
