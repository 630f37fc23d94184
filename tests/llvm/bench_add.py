"""The host backend's add kernel against numpy's add, in GB/s (read 2, write 1 array):

    .venv/bin/python tests/llvm/bench_add.py [log2 of the size, default 24]

Single-threaded for now; best of 10 after a warm-up, so page faults on first touch do not
count."""

from __future__ import annotations

import sys
import time

import numpy as np

import pykern as pk
import pykern.llvm


@pk.kernel
def add(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = x[i] + y[i]


def best_of(fn, runs: int = 10) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(log2_size: int = 24) -> tuple[float, float]:
    n = 1 << log2_size
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    out, ref = np.empty_like(x), np.empty_like(x)
    host = best_of(lambda: pykern.llvm.launch(add, n, x, y, out))
    numpy = best_of(lambda: np.add(x, y, out=ref))
    assert np.array_equal(out, ref)
    gb = 3 * 4 * n / 1e9
    print(f"add of 2^{log2_size} f32: host backend {gb / host:.1f} GB/s, numpy {gb / numpy:.1f} "
          f"GB/s ({numpy / host:.2f} of numpy)")
    return gb / host, gb / numpy


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 24)
