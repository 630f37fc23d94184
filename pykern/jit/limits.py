"""A kernel's workgroup and shared memory against the device's limits, as compile errors."""

from __future__ import annotations

from typing import Any

from pykern import ir
from pykern.frontend import KernelSource


def check_limits(source: KernelSource, kernel_ir: ir.Kernel, limits: Any) -> None:
    """Raises `pk.CompileError`, located in `source`, when the workgroup has more invocations
    (or a larger size) than `limits` (a device's `DeviceLimits`) allow, or the `pk.shared`
    arrays take more bytes than its shared memory (located at the largest)."""
    wg = kernel_ir.workgroup
    if any(w > m for w, m in zip(wg, limits.max_workgroup_size)) or \
            wg[0] * wg[1] * wg[2] > limits.max_workgroup_invocations:
        raise source.error(source.tree, f"workgroup {wg} exceeds the device's "
                           f"limits ({limits.max_workgroup_invocations} invocations, "
                           f"sizes up to {limits.max_workgroup_size})")
    shared_arrays = [a for a in kernel_ir.arrays if a.space is ir.MemorySpace.SHARED]
    shared = sum(a.nbytes for a in shared_arrays)
    if shared > limits.max_shared_memory:
        big = max(shared_arrays, key=lambda a: a.nbytes)
        raise source.error(big.loc, f"pk.shared arrays take {shared} bytes, more than "
                                    f"the device's {limits.max_shared_memory}")
