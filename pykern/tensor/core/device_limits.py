"""What the current device allows, as the ops size their launches by it (read at the call, from
the device the op runs on; never by device name). Which kernel runs where, and its sizes, are
the ops' declarations and configurations (`pykern.ops.choice`)."""

from __future__ import annotations

from pykern.ops.choice import on_cpu
from pykern.runtime import get_device

# some drivers stop an invocation after a number of loop iterations in total (lavapipe:
# 65,535; `DeviceLimits.loop_iteration_cap`); ops split work so that each invocation stays
# this far below the cap (loops with a constant trip count are unrolled and do not count)
LOOP_BUDGET_MARGIN = 5_535


def loop_budget() -> int | None:
    """The per-invocation loop-iteration budget of the current device (None: unlimited)."""
    cap = get_device().info.limits.loop_iteration_cap
    return None if cap is None else cap - LOOP_BUDGET_MARGIN


def is_cpu_device() -> bool:
    """Whether the current device is a CPU (`pykern.ops.choice.on_cpu`), for the ops whose
    kernel choice is not yet declared as implementations with predicates."""
    return on_cpu(get_device().info)
