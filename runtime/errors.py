"""Errors the device raises.

Re-exported as `pk.DeviceError`, `pk.OutOfDeviceMemory`, `pk.DeviceLost`.
"""

# What a process made by os.fork() from one that used Vulkan is told to do instead (the end of
# the sentence, said where it is used, differs).
FORK_ADVICE = "Start worker processes with multiprocessing's 'spawn' or 'forkserver' start method"


class DeviceError(RuntimeError):
    """The Vulkan device refused or failed something (a VkResult error, a wait that timed out)."""


class OutOfDeviceMemory(DeviceError):
    """An allocation does not fit the device's memory; what was allocated before stays usable."""


class DeviceLost(DeviceError):
    """The device was lost (VK_ERROR_DEVICE_LOST); the process can still report and exit."""
