"""The Vulkan instance: one per process, created lazily with the process's `Config`."""

from __future__ import annotations

from . import _vk
from ._vk import ffi, lib
from ..config import Config
from ..errors import DeviceError
from .validation import EXTENSION as DEBUG_UTILS
from .validation import LAYER as VALIDATION_LAYER
from .validation import ValidationLog, create_messenger

API_VERSION = _vk.api_version(1, 2)
PORTABILITY_ENUMERATION = "VK_KHR_portability_enumeration"
PROPERTIES2 = "VK_KHR_get_physical_device_properties2"


class Instance:
    """A VkInstance for Vulkan 1.2, with validation and its messenger when `config.validate`."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.validation: ValidationLog | None = None
        self._messenger = None
        self._destroy_messenger = None
        self.handle = self._create(config)
        if self.validation is not None:
            self._messenger, self._destroy_messenger = create_messenger(
                self.handle, self.validation
            )
        self.physical_devices = self._enumerate_physical_devices()

    def _create(self, config: Config) -> object:
        available = _vk.enumerate_names(
            lib.vkEnumerateInstanceExtensionProperties,
            ffi.NULL,
            kind="VkExtensionProperties",
            field="extensionName",
        )
        extensions, layers, flags = [], [], 0
        # MoltenVK-style drivers are listed only when we ask for portability devices too
        if PORTABILITY_ENUMERATION in available:
            extensions.append(PORTABILITY_ENUMERATION)
            flags |= lib.VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR
        next_info = ffi.NULL
        if config.validate:
            layer_names = _vk.enumerate_names(
                lib.vkEnumerateInstanceLayerProperties,
                kind="VkLayerProperties",
                field="layerName",
            )
            if VALIDATION_LAYER not in layer_names:
                raise DeviceError(
                    f"PYKERN_VALIDATE=1 but {VALIDATION_LAYER} is not installed "
                    "(Debian/Ubuntu: apt install vulkan-validationlayers)"
                )
            layers.append(VALIDATION_LAYER)
            extensions.append(DEBUG_UTILS)
            self.validation = ValidationLog()
            # chained into the create info, the messenger also hears instance creation/teardown
            next_info = self.validation.create_info()
        app_name = _vk.cstr("pykern")
        app = ffi.new(
            "VkApplicationInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_APPLICATION_INFO,
                "pApplicationName": app_name,
                "pEngineName": app_name,
                "apiVersion": API_VERSION,
            },
        )
        ext_array, ext_strings = _vk.cstr_array(extensions)
        layer_array, layer_strings = _vk.cstr_array(layers)
        info = ffi.new(
            "VkInstanceCreateInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                "pNext": next_info,
                "flags": flags,
                "pApplicationInfo": app,
                "enabledLayerCount": len(layers),
                "ppEnabledLayerNames": layer_array,
                "enabledExtensionCount": len(extensions),
                "ppEnabledExtensionNames": ext_array,
            },
        )
        handle = ffi.new("VkInstance*")
        _vk.check(lib.vkCreateInstance(info, ffi.NULL, handle), "vkCreateInstance")
        del ext_strings, layer_strings  # kept alive until here, past the call
        return handle[0]

    def _enumerate_physical_devices(self) -> list[object]:
        count = ffi.new("uint32_t*")
        _vk.check(
            lib.vkEnumeratePhysicalDevices(self.handle, count, ffi.NULL),
            "vkEnumeratePhysicalDevices",
        )
        handles = ffi.new("VkPhysicalDevice[]", count[0])
        _vk.check(
            lib.vkEnumeratePhysicalDevices(self.handle, count, handles),
            "vkEnumeratePhysicalDevices",
        )
        return [handles[i] for i in range(count[0])]

    def disown(self) -> None:
        """In a child made by os.fork(): the instance is the parent's; close() leaves it."""
        self.handle = None
        self._messenger = None

    def close(self) -> None:
        """Destroys the messenger and the instance; every device must be gone already."""
        if self.handle is None:
            return
        if self._messenger is not None:
            self._destroy_messenger(self.handle, self._messenger, ffi.NULL)
            self._messenger = None
        lib.vkDestroyInstance(self.handle, ffi.NULL)
        self.handle = None
