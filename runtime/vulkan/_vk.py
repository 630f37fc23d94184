"""The raw Vulkan binding the runtime uses: cffi's `ffi`/`lib` of the `vulkan` package.

We call the C functions directly rather than through the package's Python wrappers: the
wrappers cost ~10x more per call (they rebuild every struct in Python) and have a known bug
where nested structs built inline are freed before the call reads them. Every struct here is
made with `ffi.new`, and whoever builds one keeps a Python reference to it (and to everything
it points to) until the call that reads it has returned.

This is the one module that loads Vulkan, and nothing imports it before the first device use:
where the package or the loader is missing, importing it raises `DeviceUnavailable` (a
`DeviceError`) saying what to install, rather than an ImportError/OSError at `import pykern`.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..errors import (
    INSTALL_DRIVER, INSTALL_LOADER, INSTALL_PACKAGE, DeviceError, DeviceLost, DeviceUnavailable,
    OutOfDeviceMemory, unavailable_message)

try:
    from vulkan._vulkan import ffi, lib
except ImportError as error:  # the package is not installed (or was blocked)
    raise DeviceUnavailable(unavailable_message(
        f"the `vulkan` Python package cannot be imported ({error})", INSTALL_PACKAGE)) from error
except OSError as error:  # the package is there, but its dlopen of libvulkan.so.1 failed
    raise DeviceUnavailable(unavailable_message(
        "the Vulkan loader (libvulkan.so.1) cannot be loaded", INSTALL_LOADER)) from error

__all__ = ["ffi", "lib", "check", "result_name", "api_version", "load_device_functions"]

SUCCESS = 0
NOT_READY = 1
TIMEOUT = 2
WHOLE_SIZE = 0xFFFF_FFFF_FFFF_FFFF  # the package defines VK_WHOLE_SIZE as -1, which cffi rejects
UINT64_MAX = 0xFFFF_FFFF_FFFF_FFFF
ERROR_OUT_OF_HOST_MEMORY = -1
ERROR_OUT_OF_DEVICE_MEMORY = -2
ERROR_DEVICE_LOST = -4
ERROR_INCOMPATIBLE_DRIVER = -9  # vkCreateInstance: the loader found no driver it can use
ERROR_OUT_OF_POOL_MEMORY = -1000069000
ERROR_FRAGMENTED_POOL = -12


def api_version(major: int, minor: int, patch: int = 0) -> int:
    """VK_MAKE_API_VERSION(0, major, minor, patch)."""
    return (major << 22) | (minor << 12) | patch


def split_version(version: int) -> tuple[int, int, int]:
    """The (major, minor, patch) of a packed Vulkan version number."""
    return ((version >> 22) & 0x7F, (version >> 12) & 0x3FF, version & 0xFFF)


def result_name(result: int) -> str:
    """`VK_ERROR_DEVICE_LOST` for -4, and so on (cffi knows the VkResult enum)."""
    try:
        return str(ffi.string(ffi.cast("VkResult", result)))
    except Exception:  # an unknown code: show the number
        return f"VkResult({result})"


def check(result: int, what: str) -> None:
    """Raises the DeviceError subclass matching a failed VkResult; `what` names the call."""
    if result >= 0:
        return
    name = result_name(result)
    if result == ERROR_DEVICE_LOST:
        raise DeviceLost(f"{what} failed: {name} (the device was lost)")
    if result == ERROR_INCOMPATIBLE_DRIVER:
        raise DeviceUnavailable(unavailable_message(
            f"the Vulkan loader found no driver ({what} failed: {name})", INSTALL_DRIVER))
    if result in (ERROR_OUT_OF_DEVICE_MEMORY, ERROR_OUT_OF_HOST_MEMORY):
        raise OutOfDeviceMemory(f"{what} failed: {name}")
    raise DeviceError(f"{what} failed: {name}")


def cstr(text: str) -> object:
    """A NUL-terminated char array; the caller keeps it alive while a struct points to it."""
    return ffi.new("char[]", text.encode())


def cstr_array(items: list[str]) -> tuple[object, list[object]]:
    """A `const char* const*` array and the strings it points to (keep both alive)."""
    strings = [cstr(s) for s in items]
    array = ffi.new("char*[]", strings) if strings else ffi.NULL
    return array, strings


def load_device_functions(device: object, names: list[str]) -> SimpleNamespace:
    """Device-level function pointers (vkGetDeviceProcAddr) for `names`.

    Calls through these skip the loader's trampoline, which matters for the commands recorded
    once per launch.
    """
    table = {}
    for name in names:
        pointer = lib.vkGetDeviceProcAddr(device, name.encode())
        if pointer == ffi.NULL:
            raise DeviceError(f"the driver does not provide {name}")
        table[name] = ffi.cast("PFN_" + name, pointer)
    return SimpleNamespace(**table)


def load_instance_function(instance: object, name: str) -> object | None:
    """An instance-level extension function, or None where the instance lacks it."""
    pointer = lib.vkGetInstanceProcAddr(instance, name.encode())
    if pointer == ffi.NULL:
        return None
    return ffi.cast("PFN_" + name, pointer)


def enumerate_names(call, *args, kind: str, field: str) -> list[str]:
    """Runs a two-call Vulkan enumeration of extension/layer properties; returns the names."""
    count = ffi.new("uint32_t*")
    check(call(*args, count, ffi.NULL), "enumerate " + kind)
    items = ffi.new(kind + "[]", count[0])
    check(call(*args, count, items), "enumerate " + kind)
    return [ffi.string(getattr(items[i], field)).decode() for i in range(count[0])]
