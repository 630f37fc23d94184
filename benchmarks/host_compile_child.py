"""The fresh process of the host benchmark's warm compile (benchmarks/host_compile.py):

    python -m benchmarks.host_compile_child DIRECTORY NAME...

imports each kernel DIRECTORY/NAME.py, compiles it on the host device with the arguments the
parent used and prints one JSON line: the seconds of each compile and whether it came from the
disk cache (PYKERN_CACHE_DIR, inherited from the parent).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

import pykern as pk

from .host_compile import N, _load


def main(directory: str, names: list[str]) -> None:
    pk.set_device("host")
    x = np.ones(N, np.float32)
    X, Y, out = pk.asarray(x), pk.asarray(x), pk.empty(N, pk.f32)
    seconds, hits = [], []
    for name in names:
        kernel = getattr(_load(Path(directory) / f"{name}.py", name), name)
        start = time.perf_counter()
        variant = kernel.compile(X, Y, out, N)
        seconds.append(time.perf_counter() - start)
        hits.append(bool(variant.from_disk_cache))
    print(json.dumps({"seconds": seconds, "from_disk_cache": hits}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
