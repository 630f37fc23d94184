"""Timing and checking one implementation of a `host` case, and the row it becomes.

pykern is timed with its device's timer around back-to-back calls (benchmarks/clock.py): on the
host device the wall time of the launches (they are synchronous), on lavapipe GPU timestamps
(the device alone: lavapipe's best figure). numpy, Numba and Taichi by the wall clock. Each side
first runs a call or two (compiling) to learn how many calls fit the plan's budget, then three
rounds of calls; the best round's time per call is the figure.

Every result is checked: pykern's add and saxpy must give numpy's bits (both round each
operation as IEEE says), everything else must be within the f32 bound of benchmarks/ops_check.py
of the float64 reference. A wrong or failing pykern result fails the run (WRONG / FAILED); a
wrong peer result is a WRONG note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .clock import gpu_per_call, reps_for, wall_per_call
from .host_cases import HostCase
from .ops_check import bound_for, relative_error
from .results import Results, Row

GROUP = "host"
ROUNDS = 3


@dataclass(frozen=True)
class Expected:
    """What a result on inputs of one shape is compared with."""

    numpy_bits: np.ndarray  # numpy's f32 result
    reference: np.ndarray  # float64


def expected(case: HostCase, inputs: list[np.ndarray]) -> Expected:
    return Expected(np.array(case.numpy(inputs)(), copy=True), case.expected(inputs))


def time_device(device: Any, work: Callable[[], Any], plan: Any) -> tuple[float, int, Any]:
    """Seconds per call of `work` on a pykern `device`, the calls timed, the last result."""
    return _best_round(lambda reps: gpu_per_call(device, work, reps), plan)


def time_wall(work: Callable[[], Any], plan: Any) -> tuple[float, int, Any]:
    """Seconds per call of a peer's `work` by the wall clock, the calls timed, the last
    result."""
    return _best_round(lambda reps: wall_per_call(work, reps), plan)


def _best_round(per_call: Callable[[int], tuple[float, Any]],
                plan: Any) -> tuple[float, int, Any]:
    """The best of ROUNDS rounds of calls back to back (each after a warm-up call) that fill
    the plan's budget together: the machine is shared (other processes, and each runtime's
    idle threads), and the best round is the one least disturbed, for every side alike."""
    first, _ = per_call(1)
    reps = max(1, reps_for(first, plan.budget_s, plan.most_reps) // ROUNDS)
    best, result = min((per_call(reps) for _ in range(ROUNDS)), key=lambda r: r[0])
    return best, reps * ROUNDS, result


def add_row(results: Results, case: HostCase, label: str, impl: str, who: str,
            timing: tuple[float, int, Any], got: np.ndarray, want: Expected,
            shape: tuple[int, ...], method: str, exact: bool = False) -> Row:
    """The row of one timed implementation, with its check; a wrong pykern result fails the
    run, a wrong peer's is noted."""
    seconds, reps, _ = timing
    error = relative_error(got, want.reference)
    bound = bound_for("f32")
    ok = bool(np.array_equal(got, want.numpy_bits)) if exact else error <= bound
    status = "ok" if ok else "WRONG"
    row = results.add(Row(GROUP, label, impl, case.amount(shape) / seconds / 1e9, case.unit,
                          True, method,
                          {"case": case.name, "who": who, "status": status, "shape": list(shape),
                           "ms_per_call": seconds * 1e3, "reps": reps, "max_rel_error": error,
                           "bound": "numpy's bits" if exact else bound}))
    if not ok:
        text = (f"{impl} {label} WRONG: " + ("differs from numpy's f32 result" if exact else
                f"max relative error {error:.3g} over the bound {bound:.3g}"))
        if impl.startswith("pykern"):
            results.fail(text)
        else:
            results.note(text)
    return row


def shape_label(shape: tuple[int, ...]) -> str:
    """`1024x4096`, or `512^3` for a square matmul operand."""
    return "x".join(map(str, shape))
