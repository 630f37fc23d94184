"""The Vulkan layer: the binding, the instance, `Device`, its features and `DeviceInfo` query,
cooperative-matrix shapes, the validation messenger, and process-exit handling of GPU drivers.
"""
