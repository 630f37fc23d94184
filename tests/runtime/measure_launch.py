"""Measures the runtime's launch overhead (no validation layer).

    python tests/runtime/measure_launch.py [launches]

Prints the wall-clock cost of
- recording one launch of a tiny shader: `launches` launches recorded back to back into one
  batch (the automatic submit threshold raised above `launches`), then one sync;
- the same with the default threshold (a submit every 256 launches, the device working
  meanwhile; on lavapipe the "device" shares the CPU with Python);
- one synchronous round trip: launch + sync.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
os.environ.pop("PYKERN_VALIDATE", None)

import numpy as np  # noqa: E402
from rt_helpers import args_for, layout_of, slots, spv  # noqa: E402

import pykern.runtime as rt  # noqa: E402


def record(device: rt.Device, launches: int) -> tuple[float, float]:
    """Seconds per launch to record, and to record and run (sync included)."""
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    counts = device.create_buffer(4 * 64)
    counts.upload(np.zeros(64, np.uint32))
    args = args_for(layout)
    grid = (64, 1, 1)
    for _ in range(300):  # warm up: pools, batches, caches
        device.launch(program, grid, [counts], args)
    device.sync()
    start = time.perf_counter()
    for _ in range(launches):
        device.launch(program, grid, [counts], args)
    recorded = time.perf_counter()
    device.sync()
    done = time.perf_counter()
    assert (counts.read_into(np.empty(64, np.uint32)) == 300 + launches).all()
    return (recorded - start) / launches, (done - start) / launches


def round_trip(device: rt.Device, rounds: int = 1000) -> float:
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    counts = device.create_buffer(4 * 64)
    args = args_for(layout)
    for _ in range(50):
        device.launch(program, (64, 1, 1), [counts], args)
        device.sync()
    start = time.perf_counter()
    for _ in range(rounds):
        device.launch(program, (64, 1, 1), [counts], args)
        device.sync()
    return (time.perf_counter() - start) / rounds


def main(launches: int = 10_000) -> None:
    one_batch = rt.open_device(batch_launches=launches + 1000)
    rec, total = record(one_batch, launches)
    print(f"device: {one_batch.info.name}")
    print(f"record one launch, one batch of {launches}: {rec * 1e6:7.2f} us "
          f"(record + run: {total * 1e6:.2f} us per launch)")
    pools = rt.open_device(batch_launches=launches + 1000, push_descriptors=False)
    rec, _ = record(pools, launches)
    print(f"  same with descriptor pools instead of push descriptors: {rec * 1e6:7.2f} us")
    default = rt.get_device()
    rec, total = record(default, launches)
    print(f"record one launch, submit every {default.config.batch_launches}: {rec * 1e6:7.2f} us "
          f"(record + run: {total * 1e6:.2f} us per launch)")
    print(f"synchronous round trip (launch + sync): {round_trip(default) * 1e6:7.2f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
