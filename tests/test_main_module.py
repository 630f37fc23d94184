"""`python -m pykern` tells the version, devices, default device, tools, Vulkan pieces,
llvmlite and the cache directory, also on a machine without Vulkan or spirv-val."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pykern as pk


def run_main(tmp_path: Path, **env: str) -> list[str]:
    environ = {**os.environ, "PYKERN_CACHE_DIR": str(tmp_path / "cache"), **env}
    result = subprocess.run([sys.executable, "-m", "pykern"], capture_output=True, text=True,
                            env=environ, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def line_starting(lines: list[str], prefix: str) -> str:
    found = [line for line in lines if line.startswith(prefix)]
    assert len(found) == 1, f"no single line starting {prefix!r} in:\n" + "\n".join(lines)
    return found[0]


def test_it_reports_what_this_machine_has(tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "entry.spv").write_bytes(b"\0" * 3 * 2**20)
    lines = run_main(tmp_path, PYKERN_DEVICE="host")
    assert lines[0].startswith(f"pykern {pk.__version__} (Python ")
    names = [f"  [{d.index}] {d.name} ({d.kind}" for d in pk.devices()]
    for name in names:
        assert any(line.startswith(name) for line in lines), name
    host = next(d for d in pk.devices() if d.kind == "host")
    assert line_starting(lines, "default device:") == \
        f"default device: [{host.index}] {host.name} (chosen by PYKERN_DEVICE='host')"
    assert line_starting(lines, "kernel cache:") == \
        f"kernel cache: {tmp_path / 'cache'} (1 files, 3.0 MiB)"
    import llvmlite

    assert line_starting(lines, "llvmlite:") == f"llvmlite: {llvmlite.__version__}"
    val = line_starting(lines, "spirv-val:")
    assert "SPIRV-Tools" in val or val.endswith("not found (Debian/Ubuntu package spirv-tools)")
    line_starting(lines, "Vulkan loader:")


def test_it_works_without_vulkan_and_without_spirv_tools(tmp_path):
    # no driver for the loader, no spirv-val on PATH, and no cache: each is said
    lines = run_main(tmp_path, VK_DRIVER_FILES=str(tmp_path / "none.json"),
                     VK_ICD_FILENAMES=str(tmp_path / "none.json"),
                     PATH=os.path.dirname(sys.executable), PYKERN_CACHE="0", PYKERN_DEVICE="")
    devices = [line for line in lines if line.startswith("  [")]
    assert len(devices) == 1 and "(host" in devices[0]
    assert line_starting(lines, "Vulkan devices: none usable:")
    assert line_starting(lines, "default device:").startswith("default device: [0] host")
    assert line_starting(lines, "spirv-val:") == \
        "spirv-val: not found (Debian/Ubuntu package spirv-tools)"
    assert line_starting(lines, "kernel cache:") == "kernel cache: off (PYKERN_CACHE=0)"
