"""Compile latency of a kernel never seen before (cold) and of the same kernel found in the
disk cache (warm), with the driver's pipeline creation kept apart.

Each cold sample is a new kernel: a source file written to a temporary directory with
constants unique to this run (so no cache of ours or of the driver has seen it) and imported.
`kernel.compile(*args)` returns the variant with `compile_seconds` (frontend, lowering,
spirv-val; or the disk-cache load) and `pipeline_seconds` (vkCreateShaderModule and
vkCreateComputePipelines). The warm sample imports the same file again as another module: a
new kernel object with the same code, which finds its SPIR-V in the disk cache
(PYKERN_CACHE_DIR is a fresh temporary directory for the whole run, so the cache starts empty).
Its program is the one the device already made, so the pipeline is timed separately: on a
newly opened device, whose VkPipelineCache was loaded from the file the first device saved.
"""

from __future__ import annotations

import importlib.util
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import pykern as pk
import pykern.runtime as rt

from .peers import Peers
from .plan import Plan
from .results import Results, Row

SOURCE = '''"""A kernel written for one compile-latency sample."""
import pykern as pk


@pk.kernel
def {name}(a: pk.f32[:], b: pk.f32[:], c: pk.f32[:]):
    i = pk.global_id(0)
    c[i] = a[i] * {scale} + b[i] - {shift}
'''


def run(plan: Plan, results: Results, peers: Peers) -> None:
    dev = pk.get_device()
    args = [pk.asarray(np.ones(64, np.float32)) for _ in range(3)]
    salt = random.SystemRandom().randrange(10**6)
    cold, cold_pipeline, warm, programs = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="pykern-bench-kernels-") as directory:
        for k in range(plan.compile_kernels):
            name = f"sample_{salt}_{k}"
            path = Path(directory) / f"{name}.py"
            path.write_text(SOURCE.format(name=name, scale=f"{salt}.{k}", shift=f"{k}.25"))
            variant = getattr(_load(path, f"{name}_cold"), name).compile(*args)
            assert not variant.from_disk_cache
            cold.append(variant.compile_seconds)
            cold_pipeline.append(variant.pipeline_seconds)
            again = getattr(_load(path, f"{name}_warm"), name).compile(*args)
            if not again.from_disk_cache:
                results.note("the warm compile did not come from the disk cache")
            warm.append(again.compile_seconds)
            programs.append((variant.module.words, variant.module.layout))
    dev.save_pipeline_cache()
    other = rt.open_device()  # loads the pipeline cache file just saved
    warm_pipeline = []
    for words, layout in programs:
        start = time.perf_counter()
        other.create_program(words, layout)
        warm_pipeline.append(time.perf_counter() - start)
    loaded = other.pipeline_cache.loaded_bytes
    other.close()

    def row(case: str, samples: list[float], **extra: object) -> None:
        results.add(Row("compile", case, "pykern", statistics.median(samples) * 1e3, "ms",
                        False, "wall clock",
                        {"samples_ms": [s * 1e3 for s in samples], **extra}))

    row("cold: frontend+SPIR-V", cold)
    row("cold: driver pipeline", cold_pipeline)
    row("warm: disk cache hit", warm)
    row("warm: driver pipeline", warm_pipeline, pipeline_cache_bytes_loaded=loaded)


def _load(path: Path, module_name: str) -> object:
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # inspect.getsource looks the module up here
    spec.loader.exec_module(module)
    return module
