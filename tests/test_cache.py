"""The on-disk compile cache: warm hits skip translation and lowering, keys change with what
the module depends on (the text compiled above all), the directory and its files are private
at every open, and any entry that is corrupt, tampered with, of the wrong shape or that fails
re-validation is a miss, recompiled and replaced."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
import stat
import struct
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import pykern as pk
import pykern.jit.kernel as jit
import pykern.jit.cache as pkcache
from pykern.jit.cache import DiskCache
from pykern.config import CompilerConfig

FACTOR = 3

# the SPIR-V modules' disk cache, filled by compiles for a Vulkan device (the host backend's
# cache is tested in tests/llvm/test_llvm_diskcache.py)
pytestmark = pytest.mark.usefixtures("on_vulkan")


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
    assert warm._source is not None  # the source was read, for the key
    assert warm._irs == {}  # but never translated
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
        assert json.loads(meta.read_text())["format"] == pkcache.FORMAT_VERSION


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
    assert disk.load("0" * 64, (), (1, 1, 1), 128) is None


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


def test_key_covers_attributes_of_any_object(cache, monkeypatch):
    import types
    settings_ = types.SimpleNamespace(SHIFT=1)
    monkeypatch.setitem(triple.__globals__, "kernel_settings", settings_)

    def shift(x: pk.i32[:]):
        x[pk.global_id(0)] += kernel_settings.SHIFT

    x = np.zeros(4, np.int32)
    pk.kernel(shift)[4](x)
    settings_.SHIFT = 10
    pk.kernel(shift)[4](x)
    np.testing.assert_array_equal(x, np.full(4, 11))


def test_key_covers_funcs_reached_through_attributes(cache, monkeypatch):
    import types

    @pk.func
    def plus_one(v):
        return v + 1

    @pk.func
    def plus_ten(v):
        return v + 10

    helpers = types.SimpleNamespace(bump=plus_one)
    monkeypatch.setitem(triple.__globals__, "kernel_helpers", helpers)

    def bumped(x: pk.i32[:]):
        x[pk.global_id(0)] = kernel_helpers.bump(x[pk.global_id(0)])

    x = np.zeros(4, np.int32)
    pk.kernel(bumped)[4](x)
    helpers.bump = plus_ten  # the same kernel text, another function's text behind the name
    pk.kernel(bumped)[4](x)
    np.testing.assert_array_equal(x, np.full(4, 11))


# ---------------------------------------------------------------- the key is the text compiled

EDITED = """import pykern as pk


@pk.func
def scale(v):
    return v * {factor}


@pk.kernel
def scaled(x: pk.i32[:]):
    i = pk.global_id(0)
    x[i] = scale(x[i]) + {shift}
"""


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.pop(name, None)
    return module


@pytest.mark.parametrize("edited", [{"shift": 1000}, {"factor": 30}], ids=["kernel", "func"])
def test_file_edited_while_running_is_keyed_on_the_text_compiled(cache, tmp_path, edited):
    """The running process compiles what the file says when the kernel is first launched; that
    module must not be found later by the code the file held when it was imported."""
    path = tmp_path / f"edited_{'_'.join(edited)}.py"
    original = {"factor": 3, "shift": 1}
    path.write_text(EDITED.format(**original))
    running = import_file(path, "edited_running")  # its code is the original's
    path.write_text(EDITED.format(**{**original, **edited}))  # edited before the first launch
    x = np.arange(8, dtype=np.int32)
    running.scaled[8](x)
    now = {**original, **edited}
    np.testing.assert_array_equal(x, np.arange(8) * now["factor"] + now["shift"])
    path.write_text(EDITED.format(**original))  # the edit undone: a later run has the original
    later = import_file(path, "edited_later")
    x = np.arange(8, dtype=np.int32)
    later.scaled[8](x)
    np.testing.assert_array_equal(x, np.arange(8) * 3 + 1)


# ---------------------------------------------------------------- tampering and wrong shapes

N = 4096


def copy_triple(a: pk.i32[:], b: pk.i32[:]):
    i = pk.global_id(0)
    b[i] = a[i] * 3


COPY_TRIPLE_PARAMS = (("a", pk.i32[:]), ("b", pk.i32[:]))


def run_copy_triple():
    """A fresh kernel object (nothing in memory) over N elements: a wrong workgroup, wrong
    bindings or a wrong module show in its results."""
    k = pk.kernel(copy_triple)
    a, b = np.arange(N, dtype=np.int32), np.zeros(N, np.int32)
    k[N](a, b)
    np.testing.assert_array_equal(a, np.arange(N))
    np.testing.assert_array_equal(b, np.arange(N) * 3)
    return k.compile(a, b, grid=N).from_disk_cache


def the_entry(cache):
    (meta,) = cache.directory.glob("*.json")
    return meta, meta.with_suffix(".spv"), meta.stem


def tamperings(doc):
    """Every document that differs from `doc` in one value, or in the order of one list."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            for changed in tamperings(v):
                yield {**doc, k: changed}
    elif isinstance(doc, list):
        if doc != doc[::-1]:
            yield doc[::-1]  # parameters swapped
        for i, v in enumerate(doc):
            for changed in tamperings(v):
                yield doc[:i] + [changed] + doc[i + 1:]
    elif isinstance(doc, bool):
        yield not doc
    elif isinstance(doc, int):
        yield doc * 4 + 1  # a workgroup of 256 becomes 1025: 3 in 4 results would be wrong
    elif isinstance(doc, str):
        yield doc[::-1] + "0"


def test_every_metadata_value_is_covered_by_the_hash(cache):
    assert not run_copy_triple()
    meta, _, _ = the_entry(cache)
    original = json.loads(meta.read_text())
    changes = list(tamperings(original))
    assert len(changes) >= 3
    for changed in changes:
        meta.write_text(json.dumps(changed))
        assert not run_copy_triple(), f"a changed entry was used: {changed}"
    assert run_copy_triple()  # recompiled and replaced: whole again


def test_module_whose_layout_a_load_would_not_plan_is_not_stored(cache):
    """Entries hold no layout: one a load would plan otherwise is never written."""
    variant = pk.kernel(copy_triple).compile(np.zeros(1, np.int32), np.zeros(1, np.int32))
    for f in cache.directory.iterdir():
        f.unlink()
    layout = variant.module.layout
    push = jit.target_for(pk.get_device()).max_push_constants_size
    odd = dataclasses.replace(layout, buffers=layout.buffers[::-1])
    cache.store("1" * 64, variant.module.words, variant.params, odd, push)
    assert not list(cache.directory.iterdir())
    cache.store("1" * 64, variant.module.words, variant.params, layout, push)
    entry = cache.load("1" * 64, COPY_TRIPLE_PARAMS, layout.workgroup, push)
    assert entry is not None and entry.layout == layout and entry.params == variant.params


def test_entry_renamed_to_another_key_is_a_miss(cache):
    run_triple()
    tripled = set(cache.directory.iterdir())

    def quadruple(x: pk.i32[:]):
        x[pk.global_id(0)] *= 4

    pk.kernel(quadruple)[10](np.zeros(10, np.int32))
    for new in set(cache.directory.iterdir()) - tripled:  # triple's entry under quadruple's key
        shutil.copyfile(next(p for p in tripled if p.suffix == new.suffix), new)
    k = pk.kernel(quadruple)
    x = np.arange(10, dtype=np.int32)
    k[10](x)
    np.testing.assert_array_equal(x, np.arange(10) * 4)
    assert not k.compile(x).from_disk_cache


DEEP = 100_000
RAW_DOCUMENTS = [
    b"", b"[]", b"null", b"{}", b"0", b'"x"', b"NaN", b"[" * DEEP + b"]" * DEEP,
    b'{"a":' * DEEP + b"1" + b"}" * DEEP, b"\xff\xfe\x00{", b"1" * 5000,
    b'{"format": 2, "format": 2}', b" " * (2 << 20) + b"{}",
]


@pytest.mark.parametrize("raw", RAW_DOCUMENTS, ids=range(len(RAW_DOCUMENTS)))
def test_metadata_that_is_not_a_document_of_ours_is_a_miss(cache, raw):
    run_copy_triple()
    meta, _, _ = the_entry(cache)
    meta.write_bytes(raw)
    assert not run_copy_triple()
    assert run_copy_triple()


def json_values():
    scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                        max_leaves=12)


@st.composite
def wrong_documents(draw, valid):
    """Any JSON at all, or the valid document with keys dropped, added, or given any value."""
    if draw(st.booleans()):
        return draw(json_values())
    doc = dict(valid)
    for k in draw(st.lists(st.sampled_from(sorted(valid)), max_size=3, unique=True)):
        if draw(st.booleans()):
            del doc[k]
        else:
            doc[k] = draw(json_values() | st.sampled_from(list(valid.values())))
    doc.update(draw(st.dictionaries(st.text(max_size=6), json_values(), max_size=2)))
    return doc


def well_formed(doc, valid) -> bool:
    """The documented shape: the keys of a valid document, its format (an int), and one access
    (an int 0 to 3) per parameter. Only the hash tells a well-formed document from a real one."""
    return (type(doc) is dict and doc.keys() == valid.keys()
            and type(doc["format"]) is int and doc["format"] == valid["format"]
            and type(doc["access"]) is list and len(doc["access"]) == len(valid["access"])
            and all(type(a) is int and 0 <= a <= 3 for a in doc["access"]))


def test_wrong_shaped_metadata_is_a_miss_even_with_a_valid_hash(cache):
    """A document of the wrong shape is a miss even when its hash is right (re-sealed after it
    was changed): nothing of it is used, nothing raises, the entry is recompiled."""
    run_copy_triple()
    meta, spv, key = the_entry(cache)
    valid = json.loads(meta.read_text())
    words = spv.read_bytes()

    @settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(doc=wrong_documents(valid), reseal=st.booleans())
    @example(doc=[], reseal=False)
    @example(doc=None, reseal=False)
    @example(doc={**valid, "access": valid["access"][::-1]}, reseal=False)  # swapped params
    @example(doc={**valid, "access": [4, 3]}, reseal=True)
    @example(doc={**valid, "access": [True, 2]}, reseal=True)
    @example(doc={**valid, "access": [[1], 2]}, reseal=True)
    @example(doc={**valid, "access": [1]}, reseal=True)
    @example(doc={**valid, "format": True}, reseal=True)
    @example(doc={**valid, "format": 2.0}, reseal=True)
    def check(doc, reseal):
        if reseal and isinstance(doc, dict):
            doc = {**doc, "sha256": pkcache.entry_digest(key, doc, words)}
        assume(doc != valid and not (reseal and well_formed(doc, valid)))
        meta.write_text(json.dumps(doc))
        assert cache.load(key, COPY_TRIPLE_PARAMS, (256, 1, 1), 128) is None
        assert not run_copy_triple()

    check()
    assert run_copy_triple()


def test_module_failing_revalidation_is_recompiled_and_replaced(tmp_path, monkeypatch):
    from pykern.spirv.encoding.validate import validate
    disk = DiskCache(tmp_path / "cache", validate)
    monkeypatch.setattr(jit, "disk_cache", lambda: disk)
    run_copy_triple()
    meta, spv, key = the_entry(disk)
    words = spv.read_bytes() + struct.pack("<I", (1 << 16) | 0xFFFF)  # an unknown instruction
    spv.write_bytes(words)
    doc = json.loads(meta.read_text())
    meta.write_text(json.dumps({**doc, "sha256": pkcache.entry_digest(key, doc, words)}))
    with pytest.warns(UserWarning, match="spirv-val"):
        assert not run_copy_triple()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_copy_triple()  # the entry was replaced


# ---------------------------------------------------------------- checked at every open


def test_directory_made_writable_by_others_after_start_up_is_refused(cache):
    assert not run_copy_triple()
    cache.directory.chmod(0o777)
    with pytest.warns(UserWarning, match="writable by others"):
        assert not run_copy_triple()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not run_copy_triple()  # the cache is off now, and says so once
    assert len(list(cache.directory.iterdir())) == 2


def test_directory_swapped_for_a_link_after_start_up_is_refused(cache, tmp_path):
    run_copy_triple()
    moved = tmp_path / "moved"
    cache.directory.rename(moved)
    cache.directory.symlink_to(moved)  # the same entries, through a symbolic link
    with pytest.warns(UserWarning, match="symbolic link"):
        assert not run_copy_triple()


def test_entry_file_writable_by_others_is_refused_and_replaced(cache):
    run_copy_triple()
    meta, spv, _ = the_entry(cache)
    for f in (meta, spv):
        f.chmod(0o666)
        with pytest.warns(UserWarning, match="writable by others"):
            assert not run_copy_triple()
        assert stat.S_IMODE(f.stat().st_mode) == 0o600  # a new file in its place
        assert run_copy_triple()


def test_entry_file_swapped_for_a_link_is_refused(cache, tmp_path):
    run_copy_triple()
    _, spv, _ = the_entry(cache)
    real = tmp_path / "real.spv"
    shutil.move(spv, real)
    spv.symlink_to(real)
    with pytest.warns(UserWarning, match="symbolic link"):
        assert not run_copy_triple()
    assert not spv.is_symlink()
    assert run_copy_triple()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_entry_or_directory_of_another_user_is_refused(cache):
    run_copy_triple()
    meta, _, _ = the_entry(cache)
    os.chown(meta, 54321, -1)
    with pytest.warns(UserWarning, match="belongs to another user"):
        assert not run_copy_triple()
    assert run_copy_triple()
    os.chown(cache.directory, 54321, -1)
    with pytest.warns(UserWarning, match="belongs to another user"):
        assert not run_copy_triple()


def test_key_covers_the_compilers_own_source(tmp_path, monkeypatch):
    """A module compiled by another pykern (upgraded, or edited without a version bump) is
    never loaded: the key covers a digest of pykern's source, which any edit changes."""
    from pykern.jit import cache

    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    (package / "sub" / "b.py").write_text("y = 2\n")
    digest = cache.source_digest([package])
    (package / "sub" / "b.py").write_text("y = 3\n")
    assert cache.source_digest([package]) != digest

    @pk.kernel
    def ident(x: pk.f32[:]):
        x[pk.global_id(0)] = 1.0

    before = cache.cache_key(ident.source, ("v",), "target", "0.1.0")
    monkeypatch.setattr(cache, "compiler_fingerprint", lambda: digest)
    assert cache.cache_key(ident.source, ("v",), "target", "0.1.0") != before
