"""pykern's quick tour: a few kernels on the default Vulkan device, each checked against numpy,
and a Mandelbrot set rendered to mandelbrot.png.  Run: make demo  (or python examples/quickstart.py)
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import pykern as pk

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png import write_png  # noqa: E402


@pk.kernel
def saxpy(a: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i] + y[i]


@pk.kernel
def python_division(a: pk.i32[:], b: pk.i32[:], quotient: pk.i32[:], remainder: pk.i32[:]):
    i = pk.global_id(0)
    quotient[i] = a[i] // b[i]  # floors, as in Python, also for negative operands
    remainder[i] = a[i] % b[i]


@pk.kernel
def collatz_steps(start: pk.i32[:], steps: pk.i32[:]):
    i = pk.global_id(0)
    n = start[i]
    count = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        count += 1
    steps[i] = count


@pk.kernel
def softplus_rows(x: pk.f32[:], cols: pk.i32, out: pk.f32[:]):
    row = pk.global_id(0)
    total = 0.0
    for c in range(cols):
        v = x[row * cols + c]
        total += pk.log(1.0 + pk.exp(v)) if v < 20.0 else v
    out[row] = total


@pk.kernel
def mandelbrot(width: pk.i32, height: pk.i32, max_iter: pk.i32, image: pk.i32[:]):
    px = pk.global_id(0)
    py = pk.global_id(1)
    cx = -2.2 + 3.0 * px / width
    cy = -1.2 + 2.4 * py / height
    x = 0.0
    y = 0.0
    n = 0
    while n < max_iter and x * x + y * y <= 4.0:
        x_next = x * x - y * y + cx
        y = 2.0 * x * y + cy
        x = x_next
        n += 1
    image[py * width + px] = n


def report(name: str, ok: bool, seconds: float | None = None, extra: str = "") -> None:
    timing = f"  {seconds * 1e3:8.2f} ms" if seconds is not None else ""
    print(f"  {name:<28} {'ok' if ok else 'MISMATCH'}{timing}  {extra}")
    if not ok:
        raise SystemExit(f"{name}: result differs from numpy")


def timed(fn):
    start = time.perf_counter()
    result = fn()
    pk.sync()
    return result, time.perf_counter() - start


def main() -> None:
    device = pk.get_device()
    print(f"pykern {pk.__version__} on {device.info}")

    n = 10_000_000
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    X, Y, O = pk.asarray(x), pk.asarray(y), pk.empty(n, pk.f32)
    _, first = timed(lambda: saxpy[n](2.0, X, Y, O))
    compile_ms = saxpy.compile(2.0, X, Y, O).compile_seconds * 1e3
    _, run = timed(lambda: saxpy[n](2.0, X, Y, O))
    expected = np.float32(2.0) * x + y
    report("saxpy, 10M elements", np.array_equal(O.numpy(), expected), run,
           f"first launch {first * 1e3:.1f} ms incl. compile {compile_ms:.1f} ms, "
           f"{3 * 4 * n / run / 1e9:.1f} GB/s")

    a = rng.integers(-1000, 1000, 100_000, dtype=np.int32)
    b = rng.integers(1, 50, 100_000, dtype=np.int32) * rng.choice([-1, 1], 100_000).astype(np.int32)
    q, r = np.empty_like(a), np.empty_like(a)
    _, t = timed(lambda: python_division[a.size](a, b, q, r))
    report("// and % (negative too)", np.array_equal(q, a // b) and np.array_equal(r, a % b), t)

    starts = np.arange(1, 10_001, dtype=np.int32)
    steps = np.empty_like(starts)
    _, t = timed(lambda: collatz_steps[starts.size](starts, steps))
    expected_steps = []
    for s in starts.tolist():
        c = 0
        while s != 1:
            s = s // 2 if s % 2 == 0 else 3 * s + 1
            c += 1
        expected_steps.append(c)
    report("while loop (Collatz)", steps.tolist() == expected_steps, t)

    rows, cols = 2048, 64
    m = rng.standard_normal((rows, cols), dtype=np.float32) * 5
    out = np.empty(rows, np.float32)
    _, t = timed(lambda: softplus_rows[rows](m.ravel(), cols, out))
    ref = np.where(m < 20, np.log1p(np.exp(m.astype(np.float64))), m).sum(axis=1)
    report("for loop + exp/log", np.allclose(out, ref, rtol=1e-4, atol=1e-3), t)

    width, height, max_iter = 960, 640, 200
    image = pk.empty(width * height, pk.i32)
    _, t = timed(lambda: mandelbrot[width, height](width, height, max_iter, image))
    counts = image.numpy().reshape(height, width)
    inside = counts == max_iter
    shade = np.sqrt(counts / max_iter)
    rgb = np.stack([shade * 255, shade * 180, 80 + shade * 175], axis=-1)
    rgb[inside] = 0
    path = os.environ.get("PYKERN_DEMO_PNG", "mandelbrot.png")
    write_png(path, rgb.astype(np.uint8))
    report("mandelbrot 960x640", 0.2 < inside.mean() < 0.5, t, f"-> {path}")
    print("all results match numpy")


if __name__ == "__main__":
    main()
