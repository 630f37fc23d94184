"""Pinned memory: a DataLoader with `pin_memory=True` (what PyTorch's examples set for any
accelerator, "pykern" included) pins each batch for its accelerator. pykern copies host data to
the device from ordinary memory, so pinning for "pykern" is a plain contiguous copy; pinning
for another device (CUDA) is PyTorch's own."""

from __future__ import annotations

import torch

from pykern.torch import devices

_PIN = torch.ops.aten._pin_memory.default
_IS_PINNED = torch.ops.aten.is_pinned.default
_COMPOSITE = torch._C.DispatchKey.CompositeExplicitAutograd


def _for_pykern(device: torch.device | str | None) -> bool:
    target = torch.device(device) if device is not None else \
        torch.accelerator.current_accelerator()
    return target is not None and target.type == devices.NAME


def pin_memory(self: torch.Tensor, device: torch.device | None = None) -> torch.Tensor:
    """`_pin_memory` of a CPU tensor."""
    if _for_pykern(device):
        return self.clone(memory_format=torch.contiguous_format)
    return _PIN._op_dk(_COMPOSITE, self, device)


def is_pinned(self: torch.Tensor, device: torch.device | None = None) -> bool:
    """`is_pinned` of a CPU tensor: never, for "pykern"."""
    if _for_pykern(device):
        return False
    return _IS_PINNED._op_dk(_COMPOSITE, self, device)


def register() -> list[torch.library.Library]:
    """Registers both for CPU tensors (ahead of PyTorch's composite kernels)."""
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("_pin_memory", pin_memory, "CPU")
    lib.impl("is_pinned", is_pinned, "CPU")
    return [lib]
