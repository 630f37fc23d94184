"""Launch overhead: wall-clock microseconds per launch of a tiny three-argument kernel.

- queued: `launches` launches of `add[64](A, B, C)` back to back, divided by their number; the
  device works meanwhile (its batches are submitted every 256 launches). Timed to the last
  launch returning, and (`+ sync`) to the end of the sync that follows.
- runtime: the same launches through `Device.launch` directly with the arguments the kernel
  packs, which is what is left when the kernel object's Python (argument checks, packing)
  is taken away.
- recording only: runtime launches into a batch that is not submitted until the end (on
  lavapipe the "device" is the CPU Python runs on, so queued launches there also pay for the
  device working next to them).
- round trip: launch, then sync, `round_trips` times: what a program that waits for every
  result pays.

Each launch writes C, which the next one writes again, so every launch after the first is
ordered after its predecessor by a barrier, as a stream of dependent kernels would be.
"""

from __future__ import annotations

import time

import numpy as np

import pykern as pk
import pykern.runtime as rt

from .clock import per_call
from .kernels import add
from .peers import Peers
from .plan import Plan
from .results import Results, Row

N = 64


def run(plan: Plan, results: Results, peers: Peers) -> None:
    _pykern(plan, results)
    for device in peers.torch_devices():
        results.attempt(f"torch {device} launches",
                        lambda d=device: _torch(plan, results, peers.torch, d))
    if peers.taichi is not None:
        results.attempt("taichi launches", lambda: _taichi(plan, results, peers.taichi))
    a = np.ones(N, np.float32)
    c = np.empty_like(a)
    results.add(Row("launch", "queued", "numpy", per_call(lambda: np.add(a, a, out=c),
                                                          plan.launches) * 1e6,
                    "µs", False, "wall clock", {"note": "one call, no queue"}))


def _row(results: Results, case: str, impl: str, seconds: float, **extra: object) -> None:
    results.add(Row("launch", case, impl, seconds * 1e6, "µs", False, "wall clock", dict(extra)))


def _queued(launch, sync, launches: int) -> tuple[float, float]:
    """Seconds per launch to return from `launches` launches, and to finish them."""
    for _ in range(300):  # warm up: compiled, pools and batches made
        launch()
    sync()
    start = time.perf_counter()
    for _ in range(launches):
        launch()
    queued = time.perf_counter()
    sync()
    done = time.perf_counter()
    return (queued - start) / launches, (done - start) / launches


def _round_trip(launch, sync, rounds: int) -> float:
    for _ in range(20):
        launch()
        sync()
    start = time.perf_counter()
    for _ in range(rounds):
        launch()
        sync()
    return (time.perf_counter() - start) / rounds


def _pykern(plan: Plan, results: Results) -> None:
    dev = pk.get_device()
    A, B, C = (pk.asarray(np.ones(N, np.float32)) for _ in range(3))
    launch = lambda: add[N](A, B, C)  # noqa: E731
    queued, finished = _queued(launch, pk.sync, plan.launches)
    _row(results, "queued", "pykern add[64](A, B, C)", queued, finished_us=finished * 1e6)
    _row(results, "queued + sync", "pykern add[64](A, B, C)", finished)

    program, grid, buffers, block = _captured_launch(dev, launch)
    direct = lambda: dev.launch(program, grid, buffers, block)  # noqa: E731
    before = dev.stats()
    queued, finished = _queued(direct, dev.sync, plan.launches)
    after = dev.stats()
    barriers = (after.barriers - before.barriers) / (after.commands - before.commands)
    _row(results, "queued", "pykern runtime Device.launch", queued,
         finished_us=finished * 1e6, barriers_per_launch=barriers)
    _row(results, "queued + sync", "pykern runtime Device.launch", finished)
    _recording_only(plan, results, program, buffers, grid, block)
    _row(results, "round trip", "pykern add[64](A, B, C)",
         _round_trip(launch, pk.sync, plan.round_trips))
    _row(results, "round trip", "pykern runtime Device.launch",
         _round_trip(direct, dev.sync, plan.round_trips))


def _recording_only(plan: Plan, results: Results, program, buffers, grid, block) -> None:
    """The cost of recording alone: a device of its own whose batch holds every launch, so
    that nothing is submitted (and nothing runs next to Python: lavapipe's "GPU" is the CPU)
    until the sync after the timed loop."""
    dev = rt.open_device(batch_launches=plan.launches + 1000)
    try:
        mine = dev.create_program(program.words, program.layout)
        bufs = [dev.create_buffer(b.nbytes) for b in buffers]
        record = lambda: dev.launch(mine, grid, bufs, block)  # noqa: E731
        queued, _ = _queued(record, dev.sync, plan.launches)
        _row(results, "recording only", "pykern runtime Device.launch", queued)
    finally:
        dev.close()


def _captured_launch(dev: object, launch) -> tuple:
    """The arguments `launch()` passes to `Device.launch` (captured by shadowing the method
    on the instance for one call)."""
    captured = []
    dev.launch = lambda *args: captured.append(args)
    try:
        launch()
    finally:
        del dev.launch
    return captured[0]


def _torch(plan: Plan, results: Results, torch, device: str) -> None:
    a, b, c = (torch.ones(N, device=device) for _ in range(3))
    launch = lambda: torch.add(a, b, out=c)  # noqa: E731
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    queued, finished = _queued(launch, sync, plan.launches)
    _row(results, "queued", f"torch {device}", queued, finished_us=finished * 1e6)
    _row(results, "queued + sync", f"torch {device}", finished)
    if device == "cuda":
        _row(results, "round trip", f"torch {device}", _round_trip(launch, sync, plan.round_trips))


def _taichi(plan: Plan, results: Results, ti) -> None:
    from . import taichi_kernels as tk

    a, b, c = tk.fresh_fields(N, 3)
    launch = lambda: tk.add(a, b, c)  # noqa: E731
    queued, finished = _queued(launch, ti.sync, plan.launches)
    _row(results, "queued", "taichi vulkan", queued, finished_us=finished * 1e6)
    _row(results, "queued + sync", "taichi vulkan", finished)
    _row(results, "round trip", "taichi vulkan", _round_trip(launch, ti.sync, plan.round_trips))
