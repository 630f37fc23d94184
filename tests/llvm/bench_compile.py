"""Cold compile time of a 20-line kernel on the host backend, by phase (the typed IR already
translated, so this is the backend's own time: LLVM IR built, optimised, machine code):

    .venv/bin/python tests/llvm/bench_compile.py

Each run compiles a fresh copy of the kernel's IR (nothing from the in-process cache); the
median of several runs after one warm-up (LLVM's own start-up is not a kernel's)."""

from __future__ import annotations

import statistics
import time

import numpy as np

import pykern as pk
import pykern.llvm
from pykern.llvm import compiled, engine


@pk.kernel
def blend(x: pk.f32[:], y: pk.f32[:], w: pk.f32[:], out: pk.f32[:], n: pk.i32, k: pk.f32):
    i = pk.global_id(0)
    a = x[i]
    b = y[i]
    t = w[i % n]
    acc = 0.0
    for j in range(4):
        acc = acc + a * t - b * j
    if acc > k:
        acc = k
    elif acc < -k:
        acc = -k
    m = pk.max(a, b)
    s = pk.sqrt(pk.abs(m) + 1.0)
    e = pk.exp(-pk.abs(a - b))
    v = acc * s + e
    if i % 2 == 0:
        v = v * 0.5
    out[i] = v + pk.min(a, b) * k


def kernel_ir():
    x = np.ones(1024, np.float32)
    args = (x, x, x, x.copy(), 7, 2.5)
    key = blend._key(args, 1)
    return blend._translate(key), args


def timed_compile(kernel) -> dict[str, float]:
    """Phase times in ms of one cold compile of `kernel` (a copy, so no cache is hit)."""
    times: dict[str, float] = {}
    original = (engine.optimise,)

    def optimise(module):
        start = time.perf_counter()
        original[0](module)
        times["optimise"] = 1e3 * (time.perf_counter() - start)

    engine.optimise = optimise
    start = time.perf_counter()
    try:
        compiled.HostKernel(kernel)
    finally:
        engine.optimise = original[0]
    times["total"] = 1e3 * (time.perf_counter() - start)
    return times


def from_source() -> float:
    """ms of one compile from a fresh kernel object: translation (frontend) included."""
    _, args = kernel_ir()
    fresh = pk.kernel(blend.__wrapped__)
    start = time.perf_counter()
    kernel = fresh._translate(fresh._key(args, 1))
    compiled.HostKernel(kernel)
    return 1e3 * (time.perf_counter() - start)


def main(runs: int = 7) -> float:
    """The median ms of the backend's compile (typed IR to machine code), after printing it
    with its phases and the compile from source."""
    kernel, args = kernel_ir()
    pykern.llvm.launch(blend, 1024, *args)  # LLVM initialised
    samples = [timed_compile(kernel) for _ in range(runs)]
    total = statistics.median(s["total"] for s in samples)
    opt = statistics.median(s["optimise"] for s in samples)
    source = statistics.median(from_source() for _ in range(runs))
    print(f"cold compile of a 20-line kernel: {total:.1f} ms from the typed IR (optimise "
          f"{opt:.1f} ms, the rest {total - opt:.1f} ms: IR build, parse, machine code); "
          f"{source:.1f} ms from source")
    return total


if __name__ == "__main__":
    main()
