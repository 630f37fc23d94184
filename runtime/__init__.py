"""pykern's Vulkan runtime: devices, buffers, programs and launches.

It runs SPIR-V words described by a `BindingLayout` and knows nothing of kernels, the IR or
tensors. Nothing touches Vulkan at import: the device is created on first use.

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

from .buffer import Buffer
from .config import Config
from .device import Device
from .errors import DeviceError, DeviceLost, OutOfDeviceMemory
from .info import DeviceFeatures, DeviceInfo, DeviceLimits
from .launch import normalize_grid, plan_dispatches
from .layout import BindingLayout, BufferSlot, Field
from .memory import MemoryStats
from .program import Program
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
from .stats import DeviceStats
from .timing import GpuTimer
from .validation import ValidationMessage

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
    "Field",
    "GpuTimer",
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
