"""Vulkan objects the runtime creates in several places, each built one way: a created handle
checked against its VkResult, a command pool with one command buffer, a timestamp query pool,
a property struct read through VkPhysicalDeviceProperties2, and a timeline-semaphore submit;
and `DeviceQueue`, the handles that each user of a queue needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from . import _vk
from ._vk import ffi, lib


def create(create_call: Callable[..., int], vk_device: object, info_type: str, fields: dict,
           handle_type: str) -> object:
    """`create_call(vk_device, &info, NULL, &handle)` for a `vkCreate...` function, checked; the
    new handle. `info_type` names the create-info struct (without `*`), `fields` its members,
    `handle_type` the handle (`VkQueryPool`, say)."""
    info = ffi.new(info_type + "*", fields)
    handle = ffi.new(handle_type + "*")
    _vk.check(create_call(vk_device, info, ffi.NULL, handle), "vkCreate" + handle_type[2:])
    return handle[0]


def struct(name: str, s_type: int, **fields: object) -> object:
    """A new Vulkan struct `name` (without `*`) with its `sType` and `fields` set; the struct
    lives as long as the returned cdata (a `pNext` it points to must be kept alive too)."""
    return ffi.new(name + "*", {"sType": s_type, **fields})


class DeviceQueue(NamedTuple):
    """A queue of a logical device, with what recording into and submitting to it takes."""

    device: object  # the VkDevice
    fn: object  # its dispatch table
    queue: object  # the VkQueue
    family: int  # the queue family it belongs to (of its command pools)


def command_pool(vk_device: object, fn: object, family: int, *, transient: bool = True,
                 secondary: bool = False) -> tuple[object, object]:
    """A command pool of queue family `family` and one command buffer allocated from it:
    (pool, VkCommandBuffer[1]). The pool is destroyed again when the allocation fails."""
    flags = lib.VK_COMMAND_POOL_CREATE_TRANSIENT_BIT if transient else 0
    pool = create(fn.vkCreateCommandPool, vk_device, "VkCommandPoolCreateInfo",
                  {"sType": lib.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, "flags": flags,
                   "queueFamilyIndex": family}, "VkCommandPool")
    level = (lib.VK_COMMAND_BUFFER_LEVEL_SECONDARY if secondary
             else lib.VK_COMMAND_BUFFER_LEVEL_PRIMARY)
    alloc = ffi.new(
        "VkCommandBufferAllocateInfo*",
        {
            "sType": lib.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
            "commandPool": pool,
            "level": level,
            "commandBufferCount": 1,
        },
    )
    cmd_array = ffi.new("VkCommandBuffer[1]")
    try:
        _vk.check(fn.vkAllocateCommandBuffers(vk_device, alloc, cmd_array),
                  "vkAllocateCommandBuffers")
    except BaseException:
        fn.vkDestroyCommandPool(vk_device, pool, ffi.NULL)
        raise
    return pool, cmd_array


def timestamp_pool(vk_device: object, fn: object, count: int) -> object:
    """A query pool of `count` timestamp queries."""
    return create(fn.vkCreateQueryPool, vk_device, "VkQueryPoolCreateInfo",
                  {"sType": lib.VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                   "queryType": lib.VK_QUERY_TYPE_TIMESTAMP, "queryCount": count},
                  "VkQueryPool")


def read_properties(physical_device: object, struct: str, s_type: int) -> object:
    """The property struct `struct` (a `VkPhysicalDevice...Properties` name, without `*`) of
    `physical_device`, filled by vkGetPhysicalDeviceProperties2."""
    props = ffi.new(struct + "*", {"sType": s_type})
    root = ffi.new(
        "VkPhysicalDeviceProperties2*",
        {"sType": lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, "pNext": props},
    )
    lib.vkGetPhysicalDeviceProperties2(physical_device, root)
    return props


class TimelineSubmit:
    """A VkSubmitInfo of one command buffer that waits for a value of one timeline semaphore
    (at `wait_stage`) and signals a value of another; set `wait_values[0]`,
    `signal_values[0]` and the command buffer before each submit."""

    def __init__(self, wait: object, wait_stage: int, signal: object) -> None:
        self.wait_values = ffi.new("uint64_t[1]")
        self.signal_values = ffi.new("uint64_t[1]")
        self.timeline = ffi.new(
            "VkTimelineSemaphoreSubmitInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                "pWaitSemaphoreValues": self.wait_values,
                "signalSemaphoreValueCount": 1,
                "pSignalSemaphoreValues": self.signal_values,
            },
        )
        self.stage = ffi.new("VkPipelineStageFlags[1]", [wait_stage])
        self.info = ffi.new(
            "VkSubmitInfo*",
            {
                "sType": lib.VK_STRUCTURE_TYPE_SUBMIT_INFO,
                "pNext": self.timeline,
                "pWaitSemaphores": wait,
                "pWaitDstStageMask": self.stage,
                "commandBufferCount": 1,
                "signalSemaphoreCount": 1,
                "pSignalSemaphores": signal,
            },
        )

    def prepare(self, wait: bool, wait_value: int, signal_value: int, cmd_array: object) -> object:
        """The VkSubmitInfo of `cmd_array`'s command buffer: waits for `wait_value` where `wait`,
        signals `signal_value`."""
        self.timeline.waitSemaphoreValueCount = self.info.waitSemaphoreCount = int(wait)
        self.wait_values[0] = wait_value
        self.signal_values[0] = signal_value
        self.info.pCommandBuffers = cmd_array
        return self.info
