"""Compile latency of a 20-line kernel on the host device: cold (never seen), and warm (found
in the disk cache by a fresh process), with lavapipe's cold compile beside it.

As benchmarks/compile_latency.py does on Vulkan, each sample is a new kernel: a source file
with constants unique to this run, imported as a module (PYKERN_CACHE_DIR is a fresh temporary
directory for the whole run). The cold figure is the wall time of `kernel.compile(*args)` on
the host device (frontend, LLVM at -O2, linking, storing in the disk cache), in this process,
which has compiled host kernels before: LLVM is initialised. Lavapipe's is the same call on a
new import of the same file (so nothing of the host compile is reused): frontend, SPIR-V,
spirv-val and the driver's pipeline. The warm figures come from a fresh process
(benchmarks/host_compile_child.py) that imports the same files and compiles them on the host:
every one is a disk-cache hit; the first pays for the process's first use of LLVM and is kept
apart. Each kernel is also launched on both devices and its result compared with numpy's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import pykern as pk

from .results import Results, Row

GROUP = "host"
CASE = "compile 20-line kernel"
N = 1000
ROOT = Path(__file__).resolve().parents[1]

SOURCE = '''"""A kernel written for one compile-latency sample of the host benchmark."""
import pykern as pk


@pk.kernel
def {name}(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:], n: pk.i32):
    i = pk.global_id(0)
    if i >= n:
        return
    a = x[i] * {scale}
    b = y[i] - {shift}
    acc = pk.f32(0.0)
    for k in range(4):
        if a > b:
            acc += a * pk.f32(k) - b
        else:
            acc -= b * pk.f32(k) + a
    t = pk.exp(-pk.abs(acc) * 0.01)
    hi = pk.max(a, b)
    lo = pk.min(a, b)
    j = (i * 7 + 3) % n
    w = pk.sqrt(pk.abs(x[j] + y[j]) + 1.0)
    out[i] = acc * t + hi - lo + w
'''


def expected(x: np.ndarray, y: np.ndarray, scale: float, shift: float) -> np.ndarray:
    """What the sample kernel computes, in numpy (f32)."""
    a, b = x * np.float32(scale), y - np.float32(shift)
    acc = np.zeros_like(a)
    for k in range(4):
        acc = np.where(a > b, acc + (a * np.float32(k) - b), acc - (b * np.float32(k) + a))
    t = np.exp(-np.abs(acc) * np.float32(0.01))
    j = (np.arange(x.size) * 7 + 3) % x.size
    w = np.sqrt(np.abs(x[j] + y[j]) + np.float32(1.0))
    return acc * t + np.maximum(a, b) - np.minimum(a, b) + w


def run(hp: Any, results: Results, devices: dict[str, int]) -> None:
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(N, dtype=np.float32) for _ in range(2))
    salt = random.SystemRandom().randrange(10**6)
    samples: dict[str, list[float]] = {name: [] for name in devices}
    with tempfile.TemporaryDirectory(prefix="pykern-bench-host-kernels-") as directory:
        names = []
        for k in range(hp.compile_kernels):
            name, scale, shift = f"host_sample_{salt}_{k}", 1.0 + k / 8, k / 4 + 0.125
            names.append(name)
            (Path(directory) / f"{name}.py").write_text(
                SOURCE.format(name=name, scale=scale, shift=shift))
            want = expected(x, y, scale, shift)
            for device in devices:
                kernel = getattr(_load(Path(directory) / f"{name}.py", f"{name}_{device}"),
                                 name)
                samples[device].append(_compile_and_check(results, kernel, devices[device],
                                                          device, x, y, want))
        warm = _warm_in_fresh_process(directory, names)
    for device, values in samples.items():
        _row(results, f"{device} cold", f"pykern {device} cold", values)
    if warm is not None:
        _row(results, "host warm 1st", "pykern host warm, 1st", warm[:1])
        _row(results, "host warm", "pykern host warm", warm[1:] or warm)


def _compile_and_check(results: Results, kernel: Any, index: int, device: str, x: np.ndarray,
                       y: np.ndarray, want: np.ndarray) -> float:
    """Seconds of the cold compile on device `index`; the launch checked against numpy."""
    pk.set_device(index)
    X, Y, out = pk.asarray(x), pk.asarray(y), pk.empty(N, pk.f32)
    start = time.perf_counter()
    variant = kernel.compile(X, Y, out, N)
    seconds = time.perf_counter() - start
    if variant.from_disk_cache:
        results.note(f"host compile: the cold compile on {device} came from the disk cache")
    kernel[N](X, Y, out, N)
    got = out.numpy()
    error = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    if not error <= 1e-5:  # exp and sqrt within a few ULP; NaN fails
        results.fail(f"pykern {device} {CASE} WRONG: max relative error {error:.3g}")
    return seconds


def _warm_in_fresh_process(directory: str, names: list[str]) -> list[float] | None:
    """The seconds of each kernel's compile in a new process (disk-cache hits)."""
    env = {**os.environ, "PYKERN_DEVICE": "host"}  # PYKERN_CACHE_DIR as this process's
    done = subprocess.run([sys.executable, "-m", "benchmarks.host_compile_child", directory,
                           *names], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"the warm-compile process failed: {done.stderr[-1000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if not all(report["from_disk_cache"]):
        raise RuntimeError("a warm compile in the fresh process missed the disk cache")
    return report["seconds"]


def _row(results: Results, who: str, impl: str, seconds: list[float]) -> None:
    samples = [s * 1e3 for s in seconds]
    results.add(Row(GROUP, CASE, impl, statistics.median(samples), "ms", False, "wall clock",
                    {"case": "compile", "who": who, "status": "ok", "samples_ms": samples}))


def _load(path: Path, module_name: str) -> object:
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # inspect.getsource looks the module up here
    spec.loader.exec_module(module)
    return module
