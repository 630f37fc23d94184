"""Device listing, selection and configuration."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pykern.runtime as rt
import pytest
from pykern.runtime.config import Config
from pykern.runtime.selection import choose_default, select


def test_devices_lists_lavapipe_with_features_and_limits():
    listed = rt.devices()
    assert [i.index for i in listed] == list(range(len(listed)))
    assert [i.kind for i in listed].count("host") == 1 and listed[-1].kind == "host"
    infos = listed[:-1]
    assert infos, "no Vulkan device"
    for info in infos:
        assert info.kind in ("discrete", "integrated", "cpu", "virtual", "other")
        assert info.memory > 0
        assert info.api_version >= (1, 2, 0)
        assert len(info.limits.max_workgroup_count) == 3
        assert len(info.limits.max_workgroup_size) == 3
        assert info.limits.max_push_constants_size >= 128
        assert info.features.subgroup_size >= 1
        assert info.name in str(info) and info.kind in str(info)
    cpu = [i for i in infos if "llvmpipe" in i.name]
    if cpu:  # what docs/testing.md promises about lavapipe
        lav = cpu[0]
        assert lav.kind == "cpu"
        assert lav.limits.max_workgroup_count[0] == 65535
        assert lav.limits.max_storage_buffer_range == 128 * 2**20
        assert lav.features.subgroup_size == 8
        assert lav.features.float32_atomic_add and lav.features.fp64 and lav.features.int64
        assert not lav.features.cooperative_matrix
        assert {"basic", "arithmetic", "ballot", "shuffle"} <= lav.features.subgroup_operations


def test_device_info_is_frozen():
    info = rt.devices()[0]
    with pytest.raises(AttributeError):
        info.name = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        info.features.fp16 = False  # type: ignore[misc]


def test_get_device_returns_one_shared_device():
    assert rt.get_device() is rt.get_device() is rt.current()


def test_set_device_by_index_and_by_name_substring():
    first = rt.devices()[0]
    by_index = rt.set_device(0)
    assert by_index.info == first and rt.get_device() is by_index
    assert rt.set_device("0") is by_index
    fragment = first.name.split()[0].upper()  # case-insensitive
    assert rt.set_device(fragment) is by_index


def test_set_device_bad_name_lists_devices():
    with pytest.raises(rt.DeviceError) as err:
        rt.set_device("no-such-gpu-9000")
    text = str(err.value)
    assert "no-such-gpu-9000" in text
    for info in rt.devices():
        assert info.name in text
    with pytest.raises(rt.DeviceError):
        rt.set_device(len(rt.devices()))


def test_default_prefers_discrete_then_integrated_then_host_then_cpu():
    base = rt.devices()[0]
    infos = [
        replace(base, index=i, kind=k)
        for i, k in enumerate(["cpu", "host", "integrated", "discrete", "discrete"])
    ]
    assert choose_default(infos) == 3
    assert choose_default(infos[:3]) == 2
    assert choose_default(infos[:2]) == 1
    assert choose_default(infos[:1]) == 0
    assert select(infos, "vulkan") == 3  # the default without the host
    assert select(infos[:2], "vulkan") == 0
    assert select(infos, "host") == 1 and select(infos, "cpu") == 0


def test_pykern_device_that_matches_nothing_is_named_in_the_error():
    with pytest.raises(rt.DeviceError, match="PYKERN_DEVICE: no device matches 'zzz'") as e:
        select(rt.devices(), "zzz", source="PYKERN_DEVICE")
    assert "(host)" in str(e.value)  # the listing names every device


def test_select_name_substring_takes_first_match():
    base = rt.devices()[0]
    infos = [replace(base, index=0, name="NVIDIA H200"), replace(base, index=1, name="llvmpipe")]
    assert select(infos, "h200") == 0
    assert select(infos, "LLVM") == 1
    assert select(infos, 1) == 1


def test_config_reads_environment_once_into_an_object():
    config = Config.from_env(
        {
            "PYKERN_DEVICE": "llvm",
            "PYKERN_VALIDATE": "1",
            "PYKERN_TIMEOUT": "2.5",
            "PYKERN_CACHE": "0",
        }
    )
    assert config == Config(device="llvm", validate=True, timeout=2.5)
    assert Config.from_env({"PYKERN_CACHE": "0"}) == Config()
    assert not Config.from_env({"PYKERN_VALIDATE": "0"}).validate
    with pytest.raises(rt.DeviceError, match="PYKERN_TIMEOUT"):
        Config.from_env({"PYKERN_TIMEOUT": "soon"})


def test_cache_directory_follows_the_compile_cache_rules():
    def cache_dir(**env):
        return Config.from_env(env).cache_dir

    assert cache_dir(PYKERN_CACHE_DIR="/tmp/pk") == Path("/tmp/pk")
    assert cache_dir(XDG_CACHE_HOME="/x", HOME="/home/u") == Path("/x/pykern")
    assert cache_dir(HOME="/home/u") == Path("/home/u/.cache/pykern")
    assert cache_dir(PYKERN_CACHE="0", PYKERN_CACHE_DIR="/tmp/pk") is None
    assert cache_dir(PYKERN_CACHE="1", PYKERN_CACHE_DIR="/tmp/pk") == Path("/tmp/pk")


def test_validation_layer_records_errors():
    """The messenger really hears the layer: an invalid call is reported as an error."""
    from pykern.runtime.vulkan._vk import ffi, lib

    device = rt.get_device()
    info = ffi.new(
        "VkBufferCreateInfo*",
        {
            "sType": lib.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
            "size": 0,  # invalid: VUID-VkBufferCreateInfo-size-00912
            "usage": lib.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
        },
    )
    handle = ffi.new("VkBuffer*")
    result = device.fn.vkCreateBuffer(device.handle, info, ffi.NULL, handle)
    if result == 0 and handle[0] != ffi.NULL:
        device.fn.vkDestroyBuffer(device.handle, handle[0], ffi.NULL)
    messages = rt.validation_messages()
    rt.clear_validation_messages()
    assert any("00912" in m.id_name or "size" in m.text for m in messages), messages
    assert rt.validation_messages() == []
