"""`python -m benchmarks tune [--quick] [--out DIR]`: measures every cooperative-matrix GEMM
tiling (pykern/tensor/gemm/coop_tiling.py) on this device, in one process, and writes the
device's table into pykern/ops/tuning/ (or DIR), which `pk.matmul` reads from then on.

Each candidate that fits the device (its subgroup size, its shared memory) runs `pk.matmul` on
f16 operands of the large shapes (the table's `coop_tiling`) and of the small ones, whose
blocks do not fill the device (`coop_tiling_small`); every result is checked against float64
on blocks of rows first, and a candidate with a wrong one is never chosen. The fastest by the
geometric mean of its TFLOP/s over each group of shapes is chosen where it beats the default
tiling by 3% or more (less is within a run's noise). A device without f16 tiles
gets no table (matmul does not use tiles there).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import math
import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import pykern as pk
from pykern.ops import choice
from pykern.tensor.gemm import coop_tiling, gemm_coop

from .clock import gpu_per_call, reps_for
from .ops_check import row_blocks

Shape = tuple[int, int, int]  # (M, K, N)
LARGE: tuple[Shape, ...] = ((8192, 8192, 8192), (4096, 4096, 4096), (4000, 4000, 4000))
SMALL: tuple[Shape, ...] = ((2048, 2048, 2048), (1000, 784, 4096), (8192, 384, 65))
QUICK_LARGE: tuple[Shape, ...] = ((64, 32, 64),)
QUICK_SMALL: tuple[Shape, ...] = ((37, 45, 70),)
BUDGET_S = 0.15  # device time per timed figure
CHECK_ROWS = 16
MARGIN = 1.03  # how much faster than the default a tiling must be to be chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks tune", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny shapes: a smoke test")
    parser.add_argument("--out", type=Path, default=choice.TABLES,
                        help="where to write the device's table (default: pykern/ops/tuning)")
    args = parser.parse_args(argv)
    info = pk.get_device().info
    print(f"device: {info.name} ({info.kind}, driver {info.driver}, vendor {info.vendor_id:#x}"
          f", device {info.device_id:#x})", flush=True)
    if not gemm_coop.offers(info, pk.f16):
        print("no 16x16x16 f16 tiles on this device: nothing to tune")
        return 0
    large, small = (QUICK_LARGE, QUICK_SMALL) if args.quick else (LARGE, SMALL)
    lanes = info.features.subgroup_size
    fitting = [t for t in coop_tiling.CANDIDATES
               if t.fits(lanes, info.limits.max_shared_memory)]
    measured = sweep(fitting, large + small)
    best_large = fastest(measured, 0, len(large))
    best_small = fastest(measured, len(large), len(small))
    table = {
        "device": info.name,
        "driver": info.driver,
        "match": {"vendor_id": info.vendor_id, "device_id": info.device_id},
        "ops": {"matmul": {"coop_tiling": best_large, "coop_tiling_small": best_small,
                           "coop_small_below": 2}},
        "measured": {"command": "python -m benchmarks tune" + (" --quick" * args.quick),
                     "date": datetime.date.today().isoformat(),
                     "f16 TFLOP/s": {name: {label(s): None if v is None else round(v, 1)
                                            for s, v in zip(large + small, row)}
                                     for name, row in measured.items()}},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{slug(info.name)}.json"
    path.write_text(json.dumps(table, indent=2) + "\n")
    choice.reload_tables()
    print(f"chose {best_large} (large), {best_small} (small); wrote {path}")
    return 0


def sweep(tilings: list[coop_tiling.CoopTiling], shapes: tuple[Shape, ...]
          ) -> dict[str, list[float | None]]:
    """TFLOP/s of each tiling at each shape (operands made once per shape); None where its
    result was wrong or it failed."""
    measured: dict[str, list[float | None]] = {t.name: [] for t in tilings}
    for shape in shapes:
        m, k, n = shape
        rng = np.random.default_rng(m + 7 * k + 31 * n)
        a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
        ta, tb = pk.asarray(a), pk.asarray(b)
        reference = references(a, b)
        for tiling in tilings:
            gemm_coop.FORCE_TILING = tiling
            try:
                value = measure(shape, functools.partial(pk.matmul, ta, tb), reference)
                note = "WRONG" if value is None else f"{value:8.1f} TFLOP/s"
            except Exception as exc:  # noqa: BLE001 - a failing candidate must not stop it
                value, note = None, f"failed: {type(exc).__name__}: {exc}"
            finally:
                gemm_coop.FORCE_TILING = None
            measured[tiling.name].append(value)
            print(f"  {tiling.name:<28} {label(shape):<22} {note}", flush=True)
    return measured


def measure(shape: Shape, work: Callable[[], pk.Tensor], reference: list[Reference]
            ) -> float | None:
    """TFLOP/s of `work` (a product at `shape`), None where a row is off its bound."""
    m, k, n = shape
    first, c = gpu_per_call(pk.get_device(), work, 1)
    got = c.numpy()  # type: ignore[attr-defined]
    if any(np.any(np.abs(got[rows].astype(np.float64) - exact) > bound)
           for rows, exact, bound in reference):
        return None
    warm_until = time.perf_counter() + 0.1
    while time.perf_counter() < warm_until:
        work()
    seconds, _ = gpu_per_call(pk.get_device(), work, reps_for(first, BUDGET_S, 50))
    return 2.0 * m * n * k / seconds / 1e12


Reference = tuple[slice, np.ndarray, np.ndarray]


def references(a: np.ndarray, b: np.ndarray) -> list[Reference]:
    """(rows, float64 product, bound) for blocks of rows of a @ b: f32 accumulation of exact
    f16 products and one rounding to f16."""
    b64 = b.astype(np.float64)
    out = []
    for rows in row_blocks(a.shape[0], CHECK_ROWS):
        a64 = a[rows].astype(np.float64)
        exact = a64 @ b64
        bound = a.shape[1] * 2.0**-23 * (np.abs(a64) @ np.abs(b64)) \
            + np.abs(exact) * 2.0**-10 + 1e-6
        out.append((rows, exact, bound))
    return out


def fastest(measured: dict[str, list[float | None]], start: int, count: int) -> str:
    """The candidate with the highest geometric mean over the columns start..start + count of
    `measured`, among those right at every one of them; the default unless another beats it
    by MARGIN (differences within a run's noise choose nothing)."""
    means = {}
    for name, row in measured.items():
        values = row[start:start + count]
        if all(v is not None and v > 0 for v in values):
            means[name] = math.exp(sum(math.log(v) for v in values) / count)  # type: ignore
    default = coop_tiling.DEFAULT.name
    if not means:
        return default
    best = max(means, key=lambda name: means[name])
    if default in means and means[best] < MARGIN * means[default]:
        return default
    return best


def label(shape: Shape) -> str:
    m, k, n = shape
    return f"{m}x{k}@{k}x{n}"


def slug(name: str) -> str:
    """A file name from a device name: `NVIDIA H100 80GB HBM3` -> `nvidia-h100-80gb-hbm3`."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
