"""Errors the device raises, and what to tell a user whose machine has no usable Vulkan.

Re-exported as `pk.DeviceError`, `pk.OutOfDeviceMemory`, `pk.DeviceLost`. This module is a leaf:
it imports nothing, so the compiler and `import pykern` may use it without the Vulkan loader.
"""

# What a process made by os.fork() from one that used Vulkan is told to do instead (the end of
# the sentence, said where it is used, differs).
FORK_ADVICE = "Start worker processes with multiprocessing's 'spawn' or 'forkserver' start method"

# what each missing piece is installed with; `unavailable_message` says which one is missing
INSTALL_PACKAGE = "the `vulkan` Python package (pip install vulkan)"
INSTALL_LOADER = "the Vulkan loader (Debian/Ubuntu: apt install libvulkan1)"
INSTALL_DRIVER = (
    "a Vulkan driver: your GPU vendor's, or Mesa's (Debian/Ubuntu: apt install libvulkan1 "
    "mesa-vulkan-drivers, which includes lavapipe, a Vulkan device on the CPU)"
)


class DeviceError(RuntimeError):
    """The device refused or failed something (a VkResult error, a wait that timed out, a
    device that was closed)."""


class OutOfDeviceMemory(DeviceError):
    """An allocation does not fit the device's memory; what was allocated before stays usable."""


class DeviceLost(DeviceError):
    """The device was lost (VK_ERROR_DEVICE_LOST); the process can still report and exit."""


class DeviceUnavailable(DeviceError):
    """This machine has no usable Vulkan: the `vulkan` package, the loader (libvulkan.so.1) or a
    driver is missing, or the driver lists no device. `devices()` then lists the host device
    only; asking for a Vulkan device raises this, saying what to install."""


def unavailable_message(what_is_missing: str, install: str) -> str:
    """The message of a `DeviceUnavailable`: what is missing, what to install, and what works
    without a device."""
    return (
        f"pykern cannot use Vulkan: {what_is_missing}. Install {install}. Without Vulkan, "
        "kernels and tensors run on the host device (pk.set_device('host'), the default "
        "where no GPU is found), kernels compile (kernel.ir, kernel.spirv, kernel.asm) and run "
        "in the interpreter (PYKERN_INTERPRET=1 or @pk.kernel(interpret=True))."
    )


class GraphError(DeviceError):
    """Work that a recorded graph (`pk.graph()`) cannot hold was asked for while it records
    (a host read of its results, a sync, a nested graph, a device change), or a graph cannot
    be replayed (its device was closed or is no longer the current one)."""
