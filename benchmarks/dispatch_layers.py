"""Where an eager op's host time goes, layer by layer: `python -m benchmarks.dispatch_layers`
(on the current device; `PYKERN_DEVICE=vulkan` for lavapipe).

Each line is the calling thread's CPU time per call (`time.thread_time`, best of three runs of
20,000 calls), which a loaded machine disturbs far less than the wall clock, of: `a + a` on 64
f32 elements; the same through `pk.add`; its op plan replayed alone (`Plan.run`: the result's
buffer and the launch); the device's `launch` alone; the host program's `run` alone; a bare
`add[64](a, b, c)` kernel launch; a buffer made and freed; an autograd-recorded `a * w` and an
8×8 `x @ x`. The device's own work runs on other threads (lavapipe's, the host pool's) and is
not counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import pykern as pk
from pykern.tensor.core import dispatch as plans

from .kernels import add

N = 64
CALLS = 20_000


def per_call(fn: Callable[[], object], calls: int = CALLS) -> float:
    """Microseconds of this thread's CPU time per call of `fn`, the best of three runs."""
    for _ in range(200):
        fn()
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.thread_time() - start) / calls)
    pk.sync()
    return best * 1e6


def main() -> None:
    a, b, c = (pk.asarray(np.ones(N, np.float32)) for _ in range(3))
    w = pk.ones(N, requires_grad=True)
    x = pk.ones((8, 8), requires_grad=True)
    device = pk.get_device()
    for _ in range(100):
        a + a
    plan = next(p for p in plans._PLANS.values() if type(p) is plans.Plan)
    program, grid, block, sources, _ = plan.launches[0]
    buffers = [a.buffer, a.buffer, c.buffer][:len(sources)]
    cases: dict[str, Callable[[], object]] = {
        "a + a": lambda: a + a,
        "pk.add(a, a)": lambda: pk.add(a, a),
        "Plan.run (the op's plan alone)": lambda: plan.run(device, (a, a)),
        "device.launch": lambda: device.launch(program, grid, buffers,
                                               block if type(block) is bytes else block[:]),
        "add[64](a, b, c) kernel launch": lambda: add[N](a, b, c),
        "create_buffer + free": lambda: device.create_buffer(256),
        "a * w (autograd)": lambda: a * w,
        "x @ x (autograd, 8x8)": lambda: x @ x,
    }
    if hasattr(program, "run"):  # the host device's program
        addresses, sizes = [buf.address for buf in buffers], [buf.nbytes for buf in buffers]
        cases["program.run"] = lambda: program.run(grid, addresses, sizes, list(block), 60.0)
    print(f"host CPU time per call on {device.info.name}:")
    for name, fn in cases.items():
        print(f"  {name:34s} {per_call(fn):7.2f} µs", flush=True)


if __name__ == "__main__":
    main()
