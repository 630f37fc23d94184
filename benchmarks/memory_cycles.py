"""Create/free cycles of 1 MiB tensors: time per cycle, and whether memory stays flat.

`pk.empty(2**18, pk.f32)` then dropping it, `memory_cycles` times (100,000 by default). pykern
reports what its allocator holds before and after (bytes obtained from the driver, live
VkDeviceMemory objects, vkAllocateMemory calls) and the process's resident memory: flat means
the same figures after as before. The peers' allocators give the scale of the time per cycle.
"""

from __future__ import annotations

import os
import time

import numpy as np

import pykern as pk

from .peers import Peers
from .plan import Plan
from .results import Results, Row

ELEMENTS = 2**18  # 1 MiB of f32


def run(plan: Plan, results: Results, peers: Peers) -> None:
    dev = pk.get_device()
    dev.sync()
    for _ in range(100):  # warm up: the first block exists
        pk.empty(ELEMENTS, pk.f32)
    before, rss_before = dev.memory_stats(), resident_bytes()
    start = time.perf_counter()
    for _ in range(plan.memory_cycles):
        pk.empty(ELEMENTS, pk.f32)  # dropped at once: freed
    seconds = (time.perf_counter() - start) / plan.memory_cycles
    after, rss_after = dev.memory_stats(), resident_bytes()
    flat = (after.reserved_bytes == before.reserved_bytes
            and after.driver_allocations == before.driver_allocations
            and after.used_bytes == before.used_bytes)
    case = "1 MiB create+free"
    results.add(Row("memory", case, "pykern pk.empty", seconds * 1e6, "µs", False, "wall clock",
                    {"cycles": plan.memory_cycles, "flat": flat,
                     "reserved_bytes": [before.reserved_bytes, after.reserved_bytes],
                     "driver_allocations": [before.driver_allocations,
                                            after.driver_allocations],
                     "allocate_calls_during": after.allocate_calls - before.allocate_calls,
                     "resident_bytes": [rss_before, rss_after]}))
    if not flat:
        results.note(f"pykern memory not flat over {plan.memory_cycles:,} cycles: "
                     f"{before} -> {after}")
    else:
        print(f"  memory flat over {plan.memory_cycles:,} cycles: "
              f"{after.reserved_bytes:,} bytes in {after.driver_allocations} driver "
              f"allocation(s), {after.allocate_calls - before.allocate_calls} vkAllocateMemory "
              f"call(s) during the cycles", flush=True)
    peer_cycles = {"cycles": plan.peer_memory_cycles}
    results.add(Row("memory", case, "numpy empty",
                    _per_cycle(lambda: np.empty(ELEMENTS, np.float32), plan.peer_memory_cycles),
                    "µs", False, "wall clock", peer_cycles))
    torch = peers.torch
    for device in peers.torch_devices():
        results.add(Row("memory", case, f"torch {device} empty",
                        _per_cycle(lambda d=device: torch.empty(ELEMENTS, device=d),
                                   plan.peer_memory_cycles),
                        "µs", False, "wall clock", peer_cycles))


def _per_cycle(make, cycles: int) -> float:
    make()
    start = time.perf_counter()
    for _ in range(cycles):
        make()
    return (time.perf_counter() - start) / cycles * 1e6


def resident_bytes() -> int:
    """The process's resident set size (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0
