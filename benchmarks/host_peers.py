"""The CPU peers of the `host` benchmark: Numba's parallel `@njit` and Taichi's CPU backend,
where they import (`pip install pykern-vulkan[bench-cpu]`). One that cannot start is left out
with a note, never an error.

Taichi keeps one runtime per process. benchmarks/peers.py may have started it on Vulkan for the
other benchmarks; the `host` benchmark starts it afresh on the CPU (`taichi_cpu.start_cpu`),
and `CpuPeers.close` puts the Vulkan runtime back. Taichi can be initialised again in the same
process (`ti.reset()` first), so no subprocess is needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from .results import Results


@dataclass
class CpuPeers:
    numba: ModuleType | None = None  # benchmarks.numba_kernels
    taichi: ModuleType | None = None  # benchmarks.taichi_cpu
    taichi_vulkan_before: bool = False  # benchmarks/peers.py had started Taichi on Vulkan
    versions: dict[str, str] = field(default_factory=dict)

    def close(self) -> None:
        """Gives Taichi's runtime back as it was found."""
        if self.taichi is not None:
            self.taichi.restore(self.taichi_vulkan_before)


def numba_cache_dir() -> Path:
    """Where benchmarks/numba_kernels.py's compiled code is kept between runs (unless
    NUMBA_CACHE_DIR says otherwise): the user's cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pykern-benchmarks" / "numba"


def find_cpu_peers(results: Results, wanted: bool, taichi_vulkan: bool) -> CpuPeers:
    """Numba and Taichi (CPU) where they import and start, unless not `wanted` (--no-peers)."""
    peers = CpuPeers(taichi_vulkan_before=taichi_vulkan)
    if not wanted:
        return peers
    # Numba's machine code is kept out of the source tree (which an sdist copies whole)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(numba_cache_dir()))
    try:
        import numba

        from . import numba_kernels

        peers.numba = numba_kernels
        peers.versions["numba"] = numba.__version__
    except Exception as e:  # noqa: BLE001 - not installed, or a broken install
        results.note(f"host: numba not available: {type(e).__name__}: {e}")
    try:
        import taichi

        from . import taichi_cpu

        taichi_cpu.start_cpu()
        peers.taichi = taichi_cpu
        peers.versions["taichi"] = ".".join(map(str, taichi.__version__))
    except Exception as e:  # noqa: BLE001
        results.note(f"host: taichi (cpu) not available: {type(e).__name__}: {e}")
    return peers
