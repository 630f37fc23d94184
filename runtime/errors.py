"""pykern's error classes that the layers below the compiler's front end raise: the common
base `PykernError`, the device's errors, a bad launch, a failed tool; and what to tell a user
whose machine has no usable Vulkan.

Re-exported as `pk.PykernError`, `pk.LaunchError`, `pk.DeviceError`, `pk.OutOfDeviceMemory`,
`pk.DeviceLost`, `pk.ToolError`, ... (see pykern.errors, which adds the compiler's). This module
is a leaf: it imports nothing, so the compiler (the SPIR-V backend imports only the runtime's
leaves) and `import pykern` may use it without the Vulkan loader.
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


class PykernError(Exception):
    """The base of every error pykern raises on purpose: `except pk.PykernError` catches them
    all. Each subclass keeps the builtin base that its kind of mistake has in Python (a
    `LinAlgError` is also a ValueError, a `DeviceError` a RuntimeError), so code written for
    those still catches them."""


class LaunchError(PykernError):
    """Bad arguments or grid for a launch; raised before anything runs."""


class DeviceError(PykernError, RuntimeError):
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


class ToolError(PykernError, RuntimeError):
    """A program pykern runs is missing, hung or broken: `spirv-val` (which checks every module
    before a Vulkan driver sees it) or `spirv-dis` (`kernel.asm`). The message names the tool
    and what to install; nothing was launched, and the next launch works once the tool does."""


class InternalError(PykernError, RuntimeError):
    """pykern caught a mistake of its own, such as a module that the compiler emitted and
    spirv-val rejects: a bug to report (the message holds what a report needs). The operation
    failed; tensors that existed are intact and other launches work."""
