"""The VkPipelineCache on disk: named by device, saved at close, checked before use."""

from __future__ import annotations

import os
import stat

import numpy as np
import pykern.runtime as rt
import pytest
from pykern.runtime.programs.pipeline_cache import HEADER, file_name, header_matches, unwrap, wrap
from rt_helpers import args_for, layout_of, slots, spv


def use_a_program(device):
    layout = layout_of(slots("counts", writable=("counts",)), [], (64, 1, 1))
    program = device.create_program(spv("count"), layout)
    counts = device.create_buffer(4 * 64)
    counts.upload(np.zeros(64, np.uint32))
    device.launch(program, (64,), [counts], args_for(layout))
    assert (counts.read_into(np.empty(64, np.uint32)) == 1).all()


def test_saved_at_close_and_loaded_by_the_next_run(tmp_path):
    directory = tmp_path / "cache"
    device = rt.open_device(cache_dir=directory)
    use_a_program(device)
    path = device.pipeline_cache.path
    info = device.info
    device.close()
    assert path == directory / file_name(info)
    assert f"{info.vendor_id:04x}-{info.device_id:04x}" in path.name
    assert info.pipeline_cache_uuid in path.name
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    data = unwrap(path.read_bytes(), info)
    assert data is not None and header_matches(data, info)
    assert not [p for p in directory.iterdir() if p.name.startswith(".tmp")]

    again = rt.open_device(cache_dir=directory)
    assert again.pipeline_cache.loaded_bytes == len(data)
    use_a_program(again)
    again.close()


def corrupt_variants(data: bytes, info) -> list[bytes]:
    size, version, vendor, device, uuid = HEADER.unpack_from(data)
    body = data[HEADER.size :]
    other_uuid = bytes(b ^ 0xFF for b in uuid)
    return [
        b"",
        b"garbage",
        wrap(data)[:-1] + bytes([wrap(data)[-1] ^ 1]),  # one bit flipped: the digest fails
        wrap(HEADER.pack(size, version, vendor, device, other_uuid) + body),  # another UUID
        wrap(HEADER.pack(size, version, vendor + 1, device, uuid) + body),  # another vendor
        wrap(HEADER.pack(size, 2, vendor, device, uuid) + body),  # another header version
        wrap(HEADER.pack(len(data) + 1, version, vendor, device, uuid) + body),  # bad length
        wrap(data[:10]),  # too short for a header
    ]


def test_corrupt_or_mismatched_files_are_ignored(tmp_path):
    device = rt.open_device(cache_dir=tmp_path)
    use_a_program(device)
    path, info = device.pipeline_cache.path, device.info
    device.close()
    data = unwrap(path.read_bytes(), info)
    for contents in corrupt_variants(data, info):
        assert unwrap(contents, info) is None
        path.write_bytes(contents)
        device = rt.open_device(cache_dir=tmp_path)
        assert device.pipeline_cache.loaded_bytes == 0
        use_a_program(device)  # works, with a cache that starts empty
        device.close()
        assert unwrap(path.read_bytes(), info) is not None  # rewritten whole at close


def test_no_file_when_the_cache_is_off(tmp_path):
    device = rt.open_device(cache_dir=None)
    assert device.pipeline_cache.path is None
    use_a_program(device)
    assert not device.save_pipeline_cache()
    device.close()


def test_a_directory_others_may_write_is_refused(tmp_path):
    directory = tmp_path / "open"
    directory.mkdir()
    os.chmod(directory, 0o777)
    with pytest.warns(UserWarning, match="writable by others"):
        device = rt.open_device(cache_dir=directory)
    assert device.pipeline_cache.path is None
    device.close()
    assert list(directory.iterdir()) == []


def test_saving_twice_writes_only_changes(tmp_path):
    device = rt.open_device(cache_dir=tmp_path)
    use_a_program(device)
    assert device.save_pipeline_cache()
    assert not device.save_pipeline_cache()  # nothing new since
    device.close()


def test_a_file_others_may_write_or_a_link_is_refused_and_replaced(tmp_path):
    device = rt.open_device(cache_dir=tmp_path)
    use_a_program(device)
    path = device.pipeline_cache.path
    device.close()
    os.chmod(path, 0o666)
    with pytest.warns(UserWarning, match="writable by others"):
        device = rt.open_device(cache_dir=tmp_path)
    assert device.pipeline_cache.loaded_bytes == 0
    use_a_program(device)
    device.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # a new file in its place
    real = tmp_path / "elsewhere.bin"
    path.rename(real)
    path.symlink_to(real)
    with pytest.warns(UserWarning, match="symbolic link"):
        device = rt.open_device(cache_dir=tmp_path)
    assert device.pipeline_cache.loaded_bytes == 0
    device.close()


def test_a_directory_made_writable_by_others_after_opening_is_not_written(tmp_path):
    directory = tmp_path / "cache"
    device = rt.open_device(cache_dir=directory)
    use_a_program(device)
    os.chmod(directory, 0o777)
    with pytest.warns(UserWarning, match="writable by others"):
        assert not device.save_pipeline_cache()
    device.close()
    assert list(directory.iterdir()) == []
