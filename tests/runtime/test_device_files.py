"""`detach_device_files`: a forked child (or a process whose device never finishes) points the
driver's device descriptors at /dev/null, so the driver's exit code cannot reach the device.
The device nodes of a real GPU are stood in for by a file in a temporary directory."""

from __future__ import annotations

import os

from pykern.runtime.vulkan import device_files


def test_device_descriptors_are_pointed_at_dev_null(tmp_path, monkeypatch):
    node = tmp_path / "nvidia0"
    node.write_bytes(b"device")
    other = tmp_path.parent / f"{tmp_path.name}-other"
    other.write_bytes(b"not a device")
    monkeypatch.setattr(device_files, "DEVICE_FILE_PREFIXES", (str(tmp_path) + "/",))
    fd, keep = os.open(node, os.O_RDONLY), os.open(other, os.O_RDONLY)
    try:
        assert device_files.device_file_descriptors() == [fd]
        assert device_files.detach_device_files() == 1
        assert os.readlink(f"/proc/self/fd/{fd}") == os.devnull
        assert os.read(fd, 6) == b""  # what the driver reads from it now: nothing
        assert os.readlink(f"/proc/self/fd/{keep}") == str(other)  # other files untouched
        assert device_files.detach_device_files() == 0
    finally:
        os.close(fd)
        os.close(keep)
        other.unlink()
