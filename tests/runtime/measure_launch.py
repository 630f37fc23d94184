"""Measures the runtime's launch overhead on the current device (no validation layer).

    .venv/bin/python tests/runtime/measure_launch.py [launches]

Prints the wall-clock cost of recording one launch of a tiny shader (10,000 launches recorded
back to back, batches submitted automatically, one sync at the end), and of one synchronous
round trip (launch + sync).
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
os.environ.pop("PYKERN_VALIDATE", None)

import numpy as np  # noqa: E402
import pykern.runtime as rt  # noqa: E402
from rt_helpers import args_for, layout_of, slots, spv  # noqa: E402


def main(launches: int = 10_000) -> None:
    device = rt.get_device()
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    counts = device.create_buffer(4 * 64)
    counts.upload(np.zeros(64, np.uint32))
    args = args_for(layout)
    for _ in range(200):  # warm up: pools, batches, caches
        device.launch(program, (64, 1, 1), [counts], args)
    device.sync()

    start = time.perf_counter()
    for _ in range(launches):
        device.launch(program, (64, 1, 1), [counts], args)
    recorded = time.perf_counter()
    device.sync()
    done = time.perf_counter()

    rounds = 1000
    t0 = time.perf_counter()
    for _ in range(rounds):
        device.launch(program, (64, 1, 1), [counts], args)
        device.sync()
    t1 = time.perf_counter()
    assert (counts.read_into(np.empty(64, np.uint32)) == 200 + launches + rounds).all()

    print(f"device: {device.info.name}")
    print(
        f"record one launch:         {(recorded - start) / launches * 1e6:7.2f} us "
        f"({launches} launches, automatic submits included)"
    )
    print(f"record + run, amortised:   {(done - start) / launches * 1e6:7.2f} us")
    print(f"synchronous round trip:    {(t1 - t0) / rounds * 1e6:7.2f} us (launch + sync)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
