"""What the current device allows, as the ops size their launches by it (read at the call, from
the device the op runs on; never by device name)."""

from __future__ import annotations

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
    """Whether the current device is the host or a Vulkan CPU implementation (lavapipe), where
    barriers and shared memory cost more than they save."""
    return get_device().info.kind in ("cpu", "host")


def is_host_device() -> bool:
    """Whether the current device is the host backend (native code through LLVM), where ops
    pick kernels written for its vectorisers (every integer division per element costs)."""
    return get_device().info.kind == "host"
