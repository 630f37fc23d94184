"""Which pykern device a torch device "pykern:N" is.

PyTorch fills a device without an index with index 0 (its device guard's answer, which a
backend written in Python cannot change), so "pykern" and "pykern:0" are one device, and that
must be the device pykern itself would choose. The torch indices are therefore pykern's
devices in its order of preference: "pykern:0" is pykern's current device when the first torch
tensor is made there (PYKERN_DEVICE, `pk.set_device`, or the default order: discrete GPU,
integrated GPU, host, CPU Vulkan), and every other "pykern:N" is `pk.devices()[N]`, except that
the chosen device's own index names `pk.devices()[0]` (the two trade places). Where the chosen
device is `pk.devices()[0]` (the usual case on a machine with one GPU) "pykern:N" is always
`pk.devices()[N]`.
"""

from __future__ import annotations

import torch

import pykern as pk
from pykern.runtime.selection import device_for

NAME = "pykern"

_ORDER: list[int] = []  # torch index -> pk.devices() index, fixed on first use


def order() -> list[int]:
    """`pk.devices()` indices in torch index order (the first is "pykern", "pykern:0")."""
    if not _ORDER:
        first = pk.get_device().info.index  # type: ignore[attr-defined]
        indices = list(range(len(pk.devices())))
        indices[0], indices[first] = first, 0
        _ORDER.extend(indices)
    return _ORDER


def pk_device(device: torch.device | str | int | None) -> object:
    """The pykern device (a runtime Device) that a torch device, device string or torch index
    names; "pykern" and None are "pykern:0"."""
    if device is None:
        index = 0
    elif isinstance(device, int):
        index = device
    elif isinstance(device, torch.device) and device.type == NAME:  # every op's allocation
        return pk_device_of_index(device.index or 0)
    else:
        device = torch.device(device)
        if device.type != NAME:
            raise ValueError(f"expected a {NAME} device, got {device}")
        index = device.index or 0
    indices = order()
    if not 0 <= index < len(indices):
        raise RuntimeError(f"there is no device {NAME}:{index}: pykern has {len(indices)} "
                           f"({', '.join(f'{NAME}:{i}' for i in range(len(indices)))})")
    return device_for(indices[index])


_DEVICES: dict[int, object] = {}  # torch index -> pykern runtime Device, once opened


def pk_device_of_index(index: int) -> object:
    """`pk_device` for a torch index, cached while it stays open (a device closed and opened
    again, `pk.set_device`, is a new runtime Device)."""
    device = _DEVICES.get(index)
    if device is None or device.closed:  # type: ignore[attr-defined]
        device = _DEVICES[index] = pk_device(index)
    return device


def torch_index(device: object) -> int:
    """The torch index of a pykern runtime Device."""
    return order().index(device.info.index)  # type: ignore[attr-defined]


def torch_device(device: object) -> torch.device:
    """The torch device ("pykern:N") of a pykern runtime Device."""
    return torch.device(NAME, torch_index(device))


def count() -> int:
    """How many devices pykern has: "pykern:0" to "pykern:{count-1}"."""
    return len(order())
