"""Which peers this process can compare against: numpy always, torch and Taichi when importable.

Taichi is initialised on its Vulkan backend (`ti.init(arch=ti.vulkan)`), so it runs on the same
device as pykern where that device is the only Vulkan one (lavapipe here, the GPU on a GPU
machine). A peer that cannot start is left out with a note, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType


@dataclass
class Peers:
    numpy: ModuleType
    torch: ModuleType | None = None
    cuda: bool = False  # torch has a CUDA device
    taichi: ModuleType | None = None
    ops_device: str | None = None  # the torch device the ops benchmark compares with (cuda)
    versions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    wanted: bool = True  # False under --no-peers: numpy only (the host benchmark's CPU peers too)

    def torch_devices(self) -> list[str]:
        """`cpu`, then `cuda` where there is one."""
        if self.torch is None:
            return []
        return ["cpu", "cuda"] if self.cuda else ["cpu"]


def find_peers(want_taichi: bool = True, want_torch: bool = True) -> Peers:
    import numpy

    peers = Peers(numpy, versions={"numpy": numpy.__version__},
                  wanted=want_taichi or want_torch)
    if want_torch:
        try:
            import torch

            peers.torch = torch
            peers.cuda = bool(torch.cuda.is_available())
            peers.versions["torch"] = torch.__version__
            if peers.cuda:
                peers.versions["cuda device"] = torch.cuda.get_device_name(0)
                peers.ops_device = "cuda"
        except Exception as e:  # noqa: BLE001 - not installed, or a broken install
            peers.notes.append(f"torch not available: {type(e).__name__}: {e}")
    if want_taichi:
        try:
            import taichi

            taichi.init(arch=taichi.vulkan, log_level=taichi.WARN)
            if taichi.lang.impl.current_cfg().arch != taichi.vulkan:
                raise RuntimeError("Taichi fell back from its Vulkan backend")
            peers.taichi = taichi
            peers.versions["taichi"] = ".".join(map(str, taichi.__version__))
        except Exception as e:  # noqa: BLE001
            peers.notes.append(f"taichi (vulkan) not available: {type(e).__name__}: {e}")
    return peers
