"""`python -m pykern`: what pykern finds on this machine.

Prints the version, every device (index, name, kind, memory, features), the default device and
why, the tools pykern uses (`spirv-val`, `spirv-dis`), the Vulkan loader and binding, llvmlite,
and the compile cache directory with its size. It works where Vulkan is missing: it says which
piece is. It compiles nothing and opens no Vulkan device.
"""

from __future__ import annotations

import ctypes.util
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pykern as pk
from pykern.config import config
from pykern.runtime import selection

TOOL_TIMEOUT_S = 10


def package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def tool(name: str) -> str:
    """`path (version)` of a SPIRV-Tools program on PATH, or "not found"."""
    path = shutil.which(name)
    if path is None:
        return "not found (Debian/Ubuntu package spirv-tools)"
    try:
        result = subprocess.run([path, "--version"], capture_output=True, text=True,
                                timeout=TOOL_TIMEOUT_S, check=False)
        version = (result.stdout or result.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        version = "version unknown"
    return f"{path} ({version})"


def directory_size(folder: Path) -> tuple[int, int]:
    """(files, bytes) under `folder`."""
    files = size = 0
    for root, _, names in os.walk(folder):
        for name in names:
            try:
                size += os.stat(os.path.join(root, name)).st_size
                files += 1
            except OSError:
                continue  # removed meanwhile
    return files, size


def cache_line() -> str:
    settings = config()
    if not settings.cache_enabled:
        return "off (PYKERN_CACHE=0)"
    folder = settings.cache_dir
    if not folder.is_dir():
        return f"{folder} (not made yet)"
    files, size = directory_size(folder)
    return f"{folder} ({files} files, {size / 2**20:.1f} MiB)"


def vulkan_lines(runtime: selection.Runtime) -> list[str]:
    binding = package_version("vulkan")
    loader = ctypes.util.find_library("vulkan")
    lines = [f"Vulkan loader: {loader or 'not found (Debian/Ubuntu package libvulkan1)'}",
             f"vulkan package: {binding or 'not installed (pip install vulkan)'}"]
    if runtime.vulkan_unavailable:
        lines.append(f"Vulkan devices: none usable: {runtime.vulkan_unavailable}")
    return lines


def default_line(runtime: selection.Runtime) -> str:
    try:
        index = runtime.default_index()
    except pk.DeviceError as error:  # PYKERN_DEVICE names none of them: say so, on one line
        return f"default device: none ({str(error).splitlines()[0]})"
    why = f"PYKERN_DEVICE={runtime.config.device!r}" if runtime.config.device \
        else "the default order: discrete GPU, integrated GPU, host, CPU Vulkan"
    return f"default device: [{index}] {runtime.infos[index].name} (chosen by {why})"


def report() -> str:
    runtime = selection._get_runtime()  # lists the devices; opens none
    llvmlite = package_version("llvmlite")
    lines = [f"pykern {pk.__version__} (Python {platform.python_version()}, numpy "
             f"{package_version('numpy')}, {sys.platform})", "", "devices:"]
    lines += [f"  {line}" for info in runtime.infos for line in str(info).splitlines()]
    lines += [default_line(runtime), "", *vulkan_lines(runtime),
              f"spirv-val: {tool('spirv-val')}", f"spirv-dis: {tool('spirv-dis')}",
              f"llvmlite: {llvmlite or 'not installed (the host device needs it)'}",
              f"kernel cache: {cache_line()}"]
    return "\n".join(lines)


def main() -> int:
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
