"""Recording what VK_LAYER_KHRONOS_validation reports, through a VK_EXT_debug_utils messenger.

lavapipe silently drops out-of-bounds accesses and forgives missing barriers, so the validation
layers are the only witness of such bugs; tests fail on any ERROR recorded here.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass

from . import _vk
from ._vk import ffi, lib
from ..errors import DeviceError

LAYER = "VK_LAYER_KHRONOS_validation"
EXTENSION = "VK_EXT_debug_utils"

_SEVERITY_NAMES = {
    lib.VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT: "verbose",
    lib.VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT: "info",
    lib.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT: "warning",
    lib.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT: "error",
}


@dataclass(frozen=True)
class ValidationMessage:
    """One message of the validation layer: severity ('error' or 'warning'), VUID, text."""

    severity: str
    id_name: str
    text: str

    def __str__(self) -> str:
        return f"[{self.severity}] {self.id_name}: {self.text}"


class ValidationLog:
    """Owns the messenger callback and the messages it recorded (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: list[ValidationMessage] = []
        # cffi frees a callback's trampoline with its Python object: this attribute keeps it
        # alive for as long as the messenger exists
        self.callback = ffi.callback("PFN_vkDebugUtilsMessengerCallbackEXT", self._on_message)

    def create_info(self) -> object:
        """A VkDebugUtilsMessengerCreateInfoEXT for warnings and errors, pointing at this log."""
        return ffi.new(
            "VkDebugUtilsMessengerCreateInfoEXT*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
                "messageSeverity": lib.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
                | lib.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                "messageType": lib.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
                | lib.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
                | lib.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
                "pfnUserCallback": self.callback,
            },
        )

    def messages(self, min_severity: str = "error") -> list[ValidationMessage]:
        """Recorded messages at `min_severity` ('error' or 'warning') or above."""
        wanted = ("error",) if min_severity == "error" else ("error", "warning")
        with self._lock:
            return [m for m in self._messages if m.severity in wanted]

    def clear(self) -> None:
        with self._lock:
            self._messages.clear()

    def _on_message(self, severity: int, types: int, data: object, user: object) -> int:
        # runs inside a Vulkan call, possibly on another thread: it must never raise
        try:
            id_name = (
                ffi.string(data.pMessageIdName).decode(errors="replace")
                if data.pMessageIdName
                else ""
            )
            text = ffi.string(data.pMessage).decode(errors="replace") if data.pMessage else ""
            message = ValidationMessage(_SEVERITY_NAMES.get(severity, "error"), id_name, text)
            with self._lock:
                self._messages.append(message)
            if message.severity == "error":
                print(f"pykern: Vulkan validation {message}", file=sys.stderr)
        except Exception:  # noqa: BLE001 - an exception must not unwind through C
            pass
        return 0  # VK_FALSE: never abort the call that triggered the message


def create_messenger(instance: object, log: ValidationLog) -> tuple[object, object]:
    """Creates the debug messenger; returns (handle, destroy function)."""
    create = _vk.load_instance_function(instance, "vkCreateDebugUtilsMessengerEXT")
    destroy = _vk.load_instance_function(instance, "vkDestroyDebugUtilsMessengerEXT")
    if create is None or destroy is None:
        raise DeviceError("VK_EXT_debug_utils is enabled but its functions are missing")
    info = log.create_info()
    handle = ffi.new("VkDebugUtilsMessengerEXT*")
    _vk.check(create(instance, info, ffi.NULL, handle), "vkCreateDebugUtilsMessengerEXT")
    return handle[0], destroy
