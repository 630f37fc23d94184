"""The host backend's add kernel against numpy's add, in GB/s (read 2, write 1 array):

    .venv/bin/python tests/llvm/bench_add.py [log2 of the size, default 24]

On one thread and on the pool (one thread per core); best of 10 after a warm-up, so page
faults on first touch do not count."""

from __future__ import annotations

import sys
import time

import numpy as np

import pykern as pk
import pykern.llvm
import pykern.llvm.pool


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
    """(the pool's GB/s, numpy's GB/s), after printing them and one thread's."""
    n = 1 << log2_size
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    out, ref = np.empty_like(x), np.empty_like(x)
    numpy = best_of(lambda: np.add(x, y, out=ref))
    one = best_of(lambda: pykern.llvm.launch(add, n, x, y, out, threads=1))
    assert np.array_equal(out, ref)
    out[:] = 0
    host = best_of(lambda: pykern.llvm.launch(add, n, x, y, out))
    assert np.array_equal(out, ref)
    gb = 3 * 4 * n / 1e9
    print(f"add of 2^{log2_size} f32: host backend {gb / host:.1f} GB/s on "
          f"{pykern.llvm.pool.core_count()} threads ({numpy / host:.2f} of numpy), "
          f"{gb / one:.1f} GB/s on one ({numpy / one:.2f}); numpy {gb / numpy:.1f} GB/s")
    return gb / host, gb / numpy


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 24)
