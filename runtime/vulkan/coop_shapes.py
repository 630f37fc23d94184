"""The cooperative-matrix shapes of a device (`DeviceInfo.coop_shapes`), read once per physical
device with vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR (VK_KHR_cooperative_matrix)."""

from __future__ import annotations

from collections.abc import Iterable

from . import _vk
from ._vk import ffi, lib
from ..feature import COMPONENT_DTYPES, CoopShape

PROPERTIES_FUNCTION = "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"
# VK_COMPONENT_TYPE_BFLOAT16_KHR (VK_KHR_shader_bfloat16), newer than the `vulkan` package
COMPONENT_TYPE_BFLOAT16 = 1000141000

# VkComponentTypeKHR -> pykern's name for it (a key of COMPONENT_DTYPES); types not listed
# (NVIDIA's packed int8 and fp8 ones) are left out of the shapes
COMPONENT_NAMES: dict[int, str] = {
    lib.VK_COMPONENT_TYPE_FLOAT16_KHR: "f16",
    lib.VK_COMPONENT_TYPE_FLOAT32_KHR: "f32",
    lib.VK_COMPONENT_TYPE_FLOAT64_KHR: "f64",
    COMPONENT_TYPE_BFLOAT16: "bf16",
    lib.VK_COMPONENT_TYPE_SINT8_KHR: "i8",
    lib.VK_COMPONENT_TYPE_SINT16_KHR: "i16",
    lib.VK_COMPONENT_TYPE_SINT32_KHR: "i32",
    lib.VK_COMPONENT_TYPE_SINT64_KHR: "i64",
    lib.VK_COMPONENT_TYPE_UINT8_KHR: "u8",
    lib.VK_COMPONENT_TYPE_UINT16_KHR: "u16",
    lib.VK_COMPONENT_TYPE_UINT32_KHR: "u32",
    lib.VK_COMPONENT_TYPE_UINT64_KHR: "u64",
}

# one VkCooperativeMatrixPropertiesKHR as plain numbers:
# (MSize, NSize, KSize, AType, BType, CType, ResultType, scope)
RawProperties = tuple[int, int, int, int, int, int, int, int]


def query_coop_shapes(instance: object, physical_device: object) -> tuple[CoopShape, ...]:
    """The shapes the device offers (the caller checks that it has VK_KHR_cooperative_matrix
    and that the layers let us use it); () where the instance lacks the function."""
    function = _vk.load_instance_function(instance, PROPERTIES_FUNCTION)
    if function is None:
        return ()
    return coop_shapes_of(read_properties(function, physical_device))


def read_properties(function: object, physical_device: object) -> list[RawProperties]:
    """Every VkCooperativeMatrixPropertiesKHR the driver lists, through `function`."""
    count = ffi.new("uint32_t*")
    _vk.check(function(physical_device, count, ffi.NULL), PROPERTIES_FUNCTION)
    items = ffi.new("VkCooperativeMatrixPropertiesKHR[]", count[0])
    for i in range(count[0]):  # the driver checks each entry's sType
        items[i].sType = lib.VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR
    # VK_INCOMPLETE (a count that grew between the calls) still fills the entries asked for
    _vk.check(function(physical_device, count, items), PROPERTIES_FUNCTION)
    return [
        (p.MSize, p.NSize, p.KSize, p.AType, p.BType, p.CType, p.ResultType, p.scope)
        for p in (items[i] for i in range(count[0]))
    ]


def coop_shapes_of(properties: Iterable[RawProperties]) -> tuple[CoopShape, ...]:
    """The shapes pykern can use among `properties`: subgroup scope, A and B of one type, C and
    the result of one type, both types known; sorted by (m, n, k, A name, C name), once each.
    The types are `COMPONENT_DTYPES`' values (pykern dtypes once pykern is imported)."""
    kept = set()
    for m, n, k, a, b, c, result, scope in properties:
        if scope != lib.VK_SCOPE_SUBGROUP_KHR or a != b or c != result:
            continue
        if a in COMPONENT_NAMES and c in COMPONENT_NAMES:
            kept.add((m, n, k, COMPONENT_NAMES[a], COMPONENT_NAMES[c]))
    return tuple(CoopShape(m, n, k, COMPONENT_DTYPES[a], COMPONENT_DTYPES[c])
                 for m, n, k, a, c in sorted(kept))
