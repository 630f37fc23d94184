"""The on-disk compile cache: warm hits skip parsing and lowering, keys change with what the
module depends on, the directory is private, corrupt entries are misses."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest

import pykern as pk
import pykern.jit as jit
from pykern.cache import DiskCache
from pykern.config import CompilerConfig

FACTOR = 3


def triple(x: pk.i32[:]):
    x[pk.global_id(0)] *= FACTOR


@pytest.fixture
def cache(tmp_path, monkeypatch):
    disk = DiskCache(tmp_path / "cache")
    monkeypatch.setattr(jit, "disk_cache", lambda: disk)
    return disk


def run_triple():
    k = pk.kernel(triple)
    x = np.arange(10, dtype=np.int32)
    k[10](x)
    return k, x


def test_warm_hit_skips_parsing_and_lowering(cache):
    cold, x = run_triple()
    assert not cold.compile(np.zeros(1, np.int32)).from_disk_cache
    np.testing.assert_array_equal(x, np.arange(10) * 3)
    warm, x = run_triple()  # a new kernel object: nothing in memory
    variant = warm.compile(np.zeros(1, np.int32))
    assert variant.from_disk_cache
    assert warm._source is None  # the source was never read or parsed
    np.testing.assert_array_equal(x, np.arange(10) * 3)
    assert [p.name for p in variant.params] == ["x"]


def test_key_covers_captured_globals(cache, monkeypatch):
    run_triple()
    monkeypatch.setattr(__import__(__name__), "FACTOR", 5)
    k, x = run_triple()
    assert not k.compile(np.zeros(1, np.int32)).from_disk_cache
    np.testing.assert_array_equal(x, np.arange(10) * 5)


def test_key_covers_argument_types(cache):
    @pk.kernel
    def copy(a: pk.Array, b: pk.Array):
        b[pk.global_id(0)] = a[pk.global_id(0)]

    copy.compile(np.zeros(2, np.int32), np.zeros(2, np.int32))
    again = pk.kernel(copy.__wrapped__)
    assert again.compile(np.zeros(2, np.int32), np.zeros(2, np.int32)).from_disk_cache
    assert not again.compile(np.zeros(2, np.float32), np.zeros(2, np.float32)).from_disk_cache


def test_corrupt_entry_is_a_miss(cache):
    run_triple()
    for f in cache.directory.glob("*.spv"):
        f.write_bytes(f.read_bytes()[:-4] + b"\0\0\0\0")
    k, x = run_triple()
    assert not k.compile(np.zeros(1, np.int32)).from_disk_cache
    np.testing.assert_array_equal(x, np.arange(10) * 3)


def test_entries_are_spirv_and_json_only(cache):
    run_triple()
    names = sorted(p.suffix for p in cache.directory.iterdir())
    assert set(names) == {".json", ".spv"}
    for meta in cache.directory.glob("*.json"):
        assert json.loads(meta.read_text())["format"] == 1


def test_directory_is_private(tmp_path):
    disk = DiskCache(tmp_path / "new")
    assert disk.enabled
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o700


def test_directory_writable_by_others_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.warns(UserWarning, match="writable by others"):
        disk = DiskCache(shared)
    assert not disk.enabled
    assert disk.load("0" * 64) is None


def test_config_from_environment(tmp_path):
    cfg = CompilerConfig.from_env({"PYKERN_CACHE": "0", "PYKERN_CACHE_DIR": str(tmp_path)})
    assert not cfg.cache_enabled and cfg.cache_dir == tmp_path
    cfg = CompilerConfig.from_env({"XDG_CACHE_HOME": str(tmp_path)})
    assert cfg.cache_enabled and cfg.cache_dir == tmp_path / "pykern"


def test_key_covers_which_builtin_a_closure_names(cache):
    def make(fn):
        def k(x: pk.f32[:]):
            x[pk.global_id(0)] = fn(x[pk.global_id(0)])
        return k

    x = np.full(4, 4.0, np.float32)
    pk.kernel(make(pk.sqrt))[4](x)
    pk.kernel(make(pk.floor))[4](x)  # same code object, another builtin
    np.testing.assert_array_equal(x, np.full(4, 2.0, np.float32))


def test_key_covers_module_attributes(cache, tmp_path, monkeypatch):
    import types
    cfg = types.ModuleType("kernel_cfg")
    cfg.SHIFT = 1
    monkeypatch.setitem(triple.__globals__, "kernel_cfg", cfg)

    def shift(x: pk.i32[:]):
        x[pk.global_id(0)] += kernel_cfg.SHIFT

    x = np.zeros(4, np.int32)
    pk.kernel(shift)[4](x)
    cfg.SHIFT = 10
    pk.kernel(shift)[4](x)
    np.testing.assert_array_equal(x, np.full(4, 11))
