"""Cooperative matrices on the device side: the shapes a device offers (`DeviceInfo.coop_shapes`),
the VK_KHR_cooperative_matrix / VK_KHR_shader_bfloat16 features, and how they are enabled.

lavapipe offers neither extension; NVIDIA's driver (the H200) offers both. The tests that see
a device check what it has, whichever it is; the shape filter and the hand-made bfloat16 struct
are checked on numbers from the Vulkan headers, so that their logic is tested on lavapipe too.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pykern as pk
import pykern.runtime as rt
from pykern.runtime.vulkan._vk import ffi, lib
from pykern.runtime.vulkan.coop_shapes import COMPONENT_TYPE_BFLOAT16, coop_shapes_of
from pykern.runtime.feature import COMPONENT_DTYPES, CoopShape, Feature, component_name
from pykern.runtime.vulkan.features import (CORE_MEMBERS, FEATURE_STRUCTS,
                                     SHADER_BFLOAT16_FEATURES_STYPE, build_enable_chain)
from pykern.runtime.vulkan.raw_struct import RawFeatures
from rt_helpers import run_python

COOP = "VK_KHR_cooperative_matrix"
BF16 = "VK_KHR_shader_bfloat16"
BF16_MEMBERS = ("shaderBFloat16Type", "shaderBFloat16DotProduct",
                "shaderBFloat16CooperativeMatrix")
F16, F32 = lib.VK_COMPONENT_TYPE_FLOAT16_KHR, lib.VK_COMPONENT_TYPE_FLOAT32_KHR
S8, S32 = lib.VK_COMPONENT_TYPE_SINT8_KHR, lib.VK_COMPONENT_TYPE_SINT32_KHR
U8, U32 = lib.VK_COMPONENT_TYPE_UINT8_KHR, lib.VK_COMPONENT_TYPE_UINT32_KHR
SUBGROUP, WORKGROUP = lib.VK_SCOPE_SUBGROUP_KHR, lib.VK_SCOPE_WORKGROUP_KHR


def test_lavapipe_offers_no_cooperative_matrices():
    for info in rt.devices():
        if "llvmpipe" not in info.name:
            continue
        assert COOP not in info.extensions
        assert info.coop_shapes == ()
        assert not info.features.has(Feature.COOPERATIVE_MATRIX)
        assert not info.features.has(Feature.BFLOAT16_COOPERATIVE_MATRIX)
        assert "    cooperative matrices: none" in str(info).splitlines()


def test_the_validation_layer_hides_cooperative_matrices():
    """These tests run under the validation layer, which predates VK_KHR_cooperative_matrix:
    no device reports the feature or its shapes, and none enables the extensions."""
    assert rt.validation_enabled()
    for info in rt.devices():
        assert info.coop_shapes == ()
        assert not info.features.cooperative_matrix and not info.features.bfloat16
        assert not info.features.has(Feature.COOPERATIVE_MATRIX)
    enabled = rt.get_device().enabled_extensions
    assert COOP not in enabled and BF16 not in enabled


def test_coop_shape_fields_and_dtypes():
    shape = CoopShape(16, 8, 16, pk.f16, pk.f32)
    assert (shape.m, shape.n, shape.k, shape.a, shape.c) == (16, 8, 16, pk.f16, pk.f32)
    assert shape == (16, 8, 16, pk.f16, pk.f32) and CoopShape._fields == ("m", "n", "k", "a", "c")
    assert str(shape) == "16x8x16 f16->f32"
    # import pykern put its dtypes into the runtime's table
    for name in ("f16", "f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"):
        assert COMPONENT_DTYPES[name] is getattr(pk, name)
        assert component_name(getattr(pk, name)) == name
    assert COMPONENT_DTYPES["bf16"] is getattr(pk, "bf16", "bf16")
    assert component_name("bf16") == "bf16"


def test_shapes_keep_subgroup_scope_and_matching_types_sorted_once():
    """NVIDIA's list (as the issue quotes it, in the driver's order, with a repeat, a
    workgroup-scope entry and mixed types that pykern cannot use)."""
    listed = [
        (16, 16, 16, F16, F16, F32, F32, SUBGROUP),
        (16, 8, 16, F16, F16, F16, F16, SUBGROUP),
        (16, 16, 16, F16, F16, F16, F16, SUBGROUP),
        (16, 8, 8, F16, F16, F32, F32, SUBGROUP),
        (16, 16, 32, U8, U8, U32, U32, SUBGROUP),
        (16, 16, 32, S8, S8, S32, S32, SUBGROUP),
        (16, 16, 16, COMPONENT_TYPE_BFLOAT16, COMPONENT_TYPE_BFLOAT16, F32, F32, SUBGROUP),
        (16, 16, 16, F16, F16, F32, F32, SUBGROUP),  # again
        (64, 64, 16, F16, F16, F32, F32, WORKGROUP),  # VK_NV_cooperative_matrix2's scope
        (16, 16, 32, S8, U8, S32, S32, SUBGROUP),  # A and B differ
        (16, 16, 16, F16, F16, F16, F32, SUBGROUP),  # C and the result differ
        (16, 16, 32, 1000491000, 1000491000, S32, S32, SUBGROUP),  # packed int8: unknown
    ]
    shapes = coop_shapes_of(listed)
    assert [str(s) for s in shapes] == [
        "16x8x8 f16->f32", "16x8x16 f16->f16", "16x16x16 bf16->f32", "16x16x16 f16->f16",
        "16x16x16 f16->f32", "16x16x32 i8->i32", "16x16x32 u8->u32"]
    assert CoopShape(16, 16, 16, pk.f16, pk.f32) in shapes
    assert shapes[-1].a == pk.u8 and shapes[-1].c == pk.u32
    assert coop_shapes_of([]) == ()


def test_the_summary_shows_the_shapes_on_one_line():
    info = rt.devices()[0]
    shapes = (CoopShape(16, 8, 8, pk.f16, pk.f32), CoopShape(16, 16, 16, pk.f16, pk.f16))
    lines = str(replace(info, coop_shapes=shapes)).splitlines()
    assert "    cooperative matrices: 16x8x8 f16->f32, 16x16x16 f16->f16" in lines


def test_the_bfloat16_features_struct_is_laid_out_as_the_headers_say():
    """sType, pNext, then three VkBool32: the layout of VkPhysicalDeviceMultiviewFeatures,
    which the binding declares, so cffi's own layout of that one is the witness."""
    twin = "VkPhysicalDeviceMultiviewFeatures"
    raw = RawFeatures(SHADER_BFLOAT16_FEATURES_STYPE, BF16_MEMBERS,
                      shaderBFloat16CooperativeMatrix=True)
    assert raw.size == ffi.sizeof(twin) == 32
    seen = ffi.cast(twin + "*", raw.pointer)
    assert seen.sType == 1000141000 and seen.pNext == ffi.NULL
    assert (seen.multiview, seen.multiviewGeometryShader, seen.multiviewTessellationShader) == \
        (0, 0, 1)
    raw.shaderBFloat16Type = True
    assert seen.multiview == 1 and raw.shaderBFloat16Type and not raw.shaderBFloat16DotProduct
    other = ffi.new(twin + "*")
    raw.pNext = other
    assert seen.pNext == other and raw.pNext == other


def walk(root) -> dict[int, object]:
    """The structs of a pNext chain by sType, each as a VkBaseOutStructure."""
    found, node = {}, ffi.cast("VkBaseOutStructure*", root.pNext)
    while node != ffi.NULL:
        found[node.sType] = node
        node = node.pNext
    return found


def supported_with(**on: bool) -> dict[str, bool]:
    supported = {name: False for name in CORE_MEMBERS}
    supported.update({m: False for fs in FEATURE_STRUCTS for m in fs.members})
    return {**supported, **on}


def test_the_enable_chain_names_the_coop_structs_only_without_validation():
    supported = supported_with(cooperativeMatrix=True, shaderBFloat16Type=True,
                               shaderBFloat16CooperativeMatrix=True)
    root, structs, enable = build_enable_chain(supported, [COOP, BF16])
    assert COOP in enable and BF16 in enable
    chain = walk(root)
    coop = ffi.cast("VkPhysicalDeviceCooperativeMatrixFeaturesKHR*",
                    chain[lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR])
    assert coop.cooperativeMatrix == 1 and coop.cooperativeMatrixRobustBufferAccess == 0
    bf16 = ffi.cast("VkPhysicalDeviceMultiviewFeatures*", chain[1000141000])  # same layout
    assert (bf16.multiview, bf16.multiviewGeometryShader, bf16.multiviewTessellationShader) == \
        (1, 0, 1)  # the type and cooperative matrices; no dot product
    root, structs, enable = build_enable_chain(supported, [COOP, BF16], validate=True)
    assert COOP not in enable and BF16 not in enable
    assert not {lib.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
                1000141000} & set(walk(root))
    _, _, enable = build_enable_chain(supported, [])  # a device without the extensions
    assert COOP not in enable and BF16 not in enable


WITHOUT_VALIDATION = """
import json
import pykern as pk
from pykern.jit.pipeline import target_for
from pykern.runtime.feature import Feature, component_name
out = []
for info in rt.devices():
    out.append({"name": info.name, "coop": "VK_KHR_cooperative_matrix" in info.extensions,
                "feature": info.features.has(Feature.COOPERATIVE_MATRIX),
                "bf16": info.features.has(Feature.BFLOAT16_COOPERATIVE_MATRIX),
                "shapes": [[s.m, s.n, s.k, component_name(s.a), component_name(s.c)]
                           for s in info.coop_shapes],
                "dtypes": all(s.a == getattr(pk, component_name(s.a), "bf16") and
                              s.c == getattr(pk, component_name(s.c), "bf16")
                              for s in info.coop_shapes),
                "summary": str(info)})
device = rt.get_device()
target = target_for(device)
layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
counts = device.create_buffer(4 * 1000)
counts.upload(np.zeros(1000, np.uint32))
device.launch(device.create_program(spv("count"), layout), (1000,), [counts], args_for(layout))
print(json.dumps({"devices": out, "default": device.info.index,
                  "enabled": list(device.enabled_extensions),
                  "target_shapes": target.coop_shapes == device.info.coop_shapes,
                  "target_feature": Feature.COOPERATIVE_MATRIX in target.features,
                  "counted": int(counts.read_into(np.empty(1000, np.uint32)).sum())}))
"""


def test_without_validation_the_device_reports_and_enables_what_it_has():
    """In a process without the layer (as users run): on lavapipe nothing; on a device with
    VK_KHR_cooperative_matrix (NVIDIA) its shapes, the feature on, the extension enabled, the
    compiler's target told, and the device still runs a shader."""
    result, _ = run_python(WITHOUT_VALIDATION, timeout=120, PYKERN_VALIDATE="0",
                           VK_LAYER_ENABLES="")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["counted"] == 1000 and report["target_shapes"]
    for dev in report["devices"]:
        shapes = [tuple(s) for s in dev["shapes"]]
        assert shapes == sorted(set(shapes)) and dev["dtypes"]
        assert dev["feature"] == bool(shapes), dev  # a device with the feature lists shapes
        if not dev["coop"]:
            assert not dev["feature"] and not dev["bf16"] and not shapes
        line = "    cooperative matrices: " + (
            ", ".join(f"{m}x{n}x{k} {a}->{c}" for m, n, k, a, c in shapes) or "none")
        assert line in dev["summary"].splitlines()
        if "NVIDIA" in dev["name"]:  # what docs/testing.md says of the H200
            assert dev["feature"]
            assert {(16, 16, 16, "f16", "f16"), (16, 16, 16, "f16", "f32")} <= set(shapes)
    default = report["devices"][report["default"]]
    assert (COOP in report["enabled"]) == default["feature"] == report["target_feature"]
