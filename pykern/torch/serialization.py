"""`torch.load` of tensors saved from "pykern": their storages come back onto the pykern device
(PyTorch's own path for a PrivateUse1 device needs an allocator written in C++)."""

from __future__ import annotations

import re

import torch

from pykern.torch import devices, memory

_LOCATION = re.compile(rf"{devices.NAME}(:\d+)?$")


def deserialize(obj: torch.UntypedStorage, location: str) -> torch.UntypedStorage | None:
    """A storage saved with location "pykern[:N]" (read into CPU memory) moved to that device;
    None for other locations."""
    if not _LOCATION.match(location):
        return None
    storage = getattr(obj, "_untyped_storage", obj)
    nbytes = storage.nbytes()
    target = memory.empty_strided([nbytes], [1], torch.uint8, torch.device(location))
    if nbytes:
        host = torch.empty(0, dtype=torch.uint8).set_(storage)
        target.copy_(host)
    return target.untyped_storage()


def register() -> None:
    """Puts the deserializer ahead of PyTorch's generic PrivateUse1 one."""
    torch.serialization.register_package(19, lambda obj: None, deserialize)
