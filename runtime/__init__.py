"""pykern's runtime: devices, buffers, programs and launches.

A Vulkan device runs SPIR-V words described by a `BindingLayout`; the host device
(`HostDevice`, listed last on every machine) runs the host backend's native programs over
host memory. The runtime knows nothing of kernels, the IR or tensors. Nothing touches Vulkan at
import, and nothing loads it: the modules that need the binding are imported on first use of
their names, a device is created on first use, and on a machine without a usable Vulkan
`devices()` lists the host device alone and asking for a Vulkan one raises `DeviceUnavailable`
saying what to install.

    import pykern.runtime as rt
    dev = rt.get_device()
    buf = dev.create_buffer(4 * n)
    prog = dev.create_program(words, layout)
    dev.launch(prog, (n, 1, 1), [buf], layout.pack(values))
    buf.read_into(out)              # waits for the launches that write `buf`

    with dev.timer() as t:          # GPU time of the work recorded inside
        dev.launch(prog, (n, 1, 1), [buf], layout.pack(values))
    t.elapsed_ns
    dev.stats()                     # commands, barriers, submits, memory blocks
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Vulkan-free, imported at once: the compiler and `import pykern` use these
from .config import Config
from .description import DeviceFeatures, DeviceInfo, DeviceLimits
from .errors import DeviceError, DeviceLost, DeviceUnavailable, GraphError, OutOfDeviceMemory
from .host.host_buffer import HostBuffer
from .host.host_device import HostDevice
from .layout import BindingLayout, BufferSlot, Field
from .stats import DeviceStats, MemoryStats
from .selection import (
    clear_validation_messages,
    current,
    devices,
    get_device,
    open_device,
    set_device,
    settle,
    shutdown,
    sync,
    validation_enabled,
    validation_messages,
)

# The names whose modules load the Vulkan binding, and those modules: imported on first access
# (PEP 562), so that importing the package never needs the loader.
_LAZY = {
    "Buffer": "memory.buffer",
    "Device": "vulkan.device",
    "normalize_grid": "submit.launch",
    "plan_dispatches": "submit.launch",
    "Program": "programs.program",
    "GpuTimer": "submit.timing",
    "ValidationMessage": "vulkan.validation",
}

if TYPE_CHECKING:
    from .memory.buffer import Buffer
    from .vulkan.device import Device
    from .submit.launch import normalize_grid, plan_dispatches
    from .programs.program import Program
    from .submit.timing import GpuTimer
    from .vulkan.validation import ValidationMessage


def __getattr__(name: str) -> object:
    """A Vulkan-dependent name, imported on first use (raises DeviceUnavailable where this
    machine has no Vulkan)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "BindingLayout",
    "Buffer",
    "BufferSlot",
    "Config",
    "Device",
    "DeviceError",
    "DeviceFeatures",
    "DeviceInfo",
    "DeviceLimits",
    "DeviceLost",
    "DeviceStats",
    "DeviceUnavailable",
    "Field",
    "GraphError",
    "GpuTimer",
    "HostBuffer",
    "HostDevice",
    "MemoryStats",
    "OutOfDeviceMemory",
    "Program",
    "ValidationMessage",
    "clear_validation_messages",
    "current",
    "devices",
    "get_device",
    "normalize_grid",
    "open_device",
    "plan_dispatches",
    "set_device",
    "settle",
    "shutdown",
    "sync",
    "validation_enabled",
    "validation_messages",
]
