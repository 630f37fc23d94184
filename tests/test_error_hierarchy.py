"""One root for pykern's errors: every exception class pykern defines is a `pk.PykernError`
(keeping the builtin base its kind of mistake has), and failures injected where pykern meets
the world (a hung, missing or crashing spirv-val; corrupt cache files; a lost device or no
memory inside an op; bad arguments) escape only as pk errors, after which the next launch
works and tensors that existed are intact."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import pykern as pk
import pykern.jit.kernel as jit
import pykern.runtime as rt
from pykern.config import CompilerConfig
from pykern.fuse.refusal import FuseError
from pykern.runtime.files import UnsafePathError
from pykern.runtime.grid import GridError
from pykern.spirv.encoding.validate import (SpirvToolFailedError, SpirvToolMissingError,
                                   SpirvToolTimeoutError, SpirvValidationError)

config_module = importlib.import_module("pykern.config")
validate_module = importlib.import_module("pykern.spirv.encoding.validate")

# modules that are programs or need optional packages, not part of the library
NOT_IMPORTED = ("pykern.__main__", "pykern.mypy_plugin", "pykern.spirv.encoding.generate_grammar")


def pykern_exception_classes() -> set[type]:
    """Every exception class (warnings aside) defined in a module of pykern or its runtime."""
    for package in (pk, rt):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name in NOT_IMPORTED:
                continue
            try:
                importlib.import_module(info.name)
            except pk.DeviceUnavailable:  # the Vulkan binding, on a machine without Vulkan
                continue
    found, pending = set(), [BaseException]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("pykern") and not issubclass(cls, Warning):
            found.add(cls)
    return found


def test_every_exception_class_pykern_defines_is_a_pk_error():
    classes = pykern_exception_classes()
    assert {pk.CompileError, SpirvToolTimeoutError, pk.linalg.LinAlgError} <= classes
    outside = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes
                     if not issubclass(c, pk.PykernError))
    assert not outside


@pytest.mark.parametrize("cls, bases", [
    (pk.CompileError, ()), (pk.KernelTypeError, (pk.CompileError,)),
    (FuseError, (pk.CompileError, TypeError)),
    (pk.LaunchError, ()), (GridError, (pk.LaunchError, ValueError)),
    (pk.DeviceError, (RuntimeError,)), (pk.OutOfDeviceMemory, (pk.DeviceError,)),
    (pk.DeviceLost, (pk.DeviceError,)), (pk.DeviceUnavailable, (pk.DeviceError,)),
    (pk.GraphError, (pk.DeviceError,)),
    (pk.ToolError, (RuntimeError,)), (SpirvToolMissingError, (pk.ToolError,)),
    (SpirvToolTimeoutError, (pk.ToolError,)), (SpirvToolFailedError, (pk.ToolError,)),
    (pk.InternalError, (RuntimeError,)), (SpirvValidationError, (pk.InternalError,)),
    (pk.KernelIndexError, (IndexError,)), (pk.KernelAssertionError, (AssertionError,)),
    (pk.linalg.LinAlgError, (ValueError,)), (UnsafePathError, (OSError,)),
])
def test_each_error_keeps_its_builtin_base(cls, bases):
    assert issubclass(cls, pk.PykernError)
    for base in bases:
        assert issubclass(cls, base)


# ------------------------------------------------------------------ spirv-val failures


@pytest.fixture
def tool_timeout(monkeypatch):
    """PYKERN_TOOL_TIMEOUT=0.5, read afresh (the configuration is read once per process);
    the process's own configuration again afterwards."""
    monkeypatch.setenv("PYKERN_TOOL_TIMEOUT", "0.5")
    config_module.config.cache_clear()
    yield 0.5
    monkeypatch.undo()
    config_module.config.cache_clear()
    config_module.config()


def fake_tool(folder: Path, body: str) -> Path:
    """A spirv-val in `folder` that runs the shell `body` instead of checking anything."""
    folder.mkdir(exist_ok=True)
    script = folder / "spirv-val"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


STEP = 0.0


def add_step(x: pk.f32[:]):
    x[pk.global_id(0)] += STEP


def check_the_failure_then_a_launch(monkeypatch, path: str, expected: type, match: str,
                                    step: float) -> None:
    """Launching a new kernel object (nothing compiled in memory, the disk cache off: spirv-val
    runs) with PATH = `path` raises `expected` (a pk error) and leaves the tensor as it was;
    with the real PATH, the same launch works."""
    monkeypatch.setattr(jit, "disk_cache", lambda: None)
    monkeypatch.setattr(sys.modules[__name__], "STEP", step)
    kept = pk.asarray(np.arange(8, dtype=np.float32))
    k = pk.kernel(add_step)
    with monkeypatch.context() as m:
        m.setenv("PATH", path)
        start = time.monotonic()
        with pytest.raises(expected, match=match) as info:
            k[8](kept)
        assert time.monotonic() - start < 20
    assert isinstance(info.value, pk.PykernError)
    np.testing.assert_array_equal(kept.numpy(), np.arange(8))
    k[8](kept)
    np.testing.assert_array_equal(kept.numpy(), np.arange(8) + np.float32(step))


@pytest.mark.usefixtures("on_vulkan")
def test_a_hung_spirv_val_is_a_tool_error(tmp_path, monkeypatch, tool_timeout):
    # exec: the killed process is the sleep itself, so no orphan keeps the pipes open
    hung = fake_tool(tmp_path / "hung", "exec sleep 30")
    check_the_failure_then_a_launch(monkeypatch, f"{hung}:{os.environ['PATH']}", pk.ToolError,
                                    "did not finish within 0.5 s", 0.25)


@pytest.mark.usefixtures("on_vulkan")
def test_a_missing_spirv_val_is_a_tool_error(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    check_the_failure_then_a_launch(monkeypatch, str(tmp_path / "empty"), pk.ToolError,
                                    "spirv-val is not installed", 0.5)


@pytest.mark.usefixtures("on_vulkan")
def test_a_crashing_spirv_val_is_a_tool_error(tmp_path, monkeypatch):
    crashing = fake_tool(tmp_path / "crashing", "kill -SEGV $$")
    check_the_failure_then_a_launch(monkeypatch, f"{crashing}:{os.environ['PATH']}",
                                    pk.ToolError, "spirv-val .* crashed", 0.75)


@pytest.mark.usefixtures("on_vulkan")
def test_a_spirv_val_that_cannot_run_is_a_tool_error(tmp_path, monkeypatch):
    folder = tmp_path / "unrunnable"
    folder.mkdir()
    script = folder / "spirv-val"
    script.write_text("#!/nonexistent/interpreter\n")
    script.chmod(0o755)
    check_the_failure_then_a_launch(monkeypatch, f"{folder}:{os.environ['PATH']}",
                                    pk.ToolError, "could not be run", 1.25)


def test_a_bad_tool_timeout_setting_is_a_tool_error():
    assert CompilerConfig.from_env({"PYKERN_TOOL_TIMEOUT": "2.5"}).tool_timeout_s == 2.5
    assert CompilerConfig.from_env({}).tool_timeout_s == validate_module.DEFAULT_TIMEOUT_S
    for bad in ("soon", "0", "-1", "inf", "nan"):
        with pytest.raises(pk.ToolError, match="PYKERN_TOOL_TIMEOUT"):
            CompilerConfig.from_env({"PYKERN_TOOL_TIMEOUT": bad})


# ------------------------------------------------------------------ corrupt cache files

# compiles a kernel and runs two tensor ops on each device named on the command line
CACHE_PROGRAM = """
import json, sys
import numpy as np
import pykern as pk

@pk.kernel
def affine(a: pk.f32, x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i] + 1.0

results = {}
for device in sys.argv[1:]:
    pk.set_device(device)
    x = np.arange(8, dtype=np.float32)
    out = np.empty_like(x)
    affine[8](2.0, x, out)
    t = pk.asarray(x)
    results[device] = [out.tolist(), pk.exp(t).numpy().tolist(), float((t @ t).numpy())]
print(json.dumps(results))
"""


def run_with_cache(program: Path, cache_dir: Path, devices: list[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYKERN_")}
    env.update(PYKERN_CACHE_DIR=str(cache_dir), PYTHONWARNINGS="ignore")
    result = subprocess.run([sys.executable, str(program), *devices], env=env,
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def corrupt(cache_dir: Path, shift: int) -> int:
    """Truncates, fills with garbage or empties (in turn, from `shift`) every file of the
    cache; returns how many there were."""
    files = sorted(p for p in cache_dir.rglob("*") if p.is_file())
    rng = np.random.default_rng(shift)
    for i, path in enumerate(files):
        data = path.read_bytes()
        kind = (i + shift) % 3
        if kind == 0:
            path.write_bytes(data[:len(data) // 2])
        elif kind == 1:
            path.write_bytes(rng.integers(0, 256, max(len(data), 16), dtype=np.uint8).tobytes())
        else:
            path.write_bytes(b"")
    return len(files)


def test_corrupt_cache_files_are_misses(tmp_path):
    devices = ["host"] + (["vulkan"] if any(d.kind != "host" for d in pk.devices()) else [])
    cache, program = tmp_path / "cache", tmp_path / "program.py"
    program.write_text(CACHE_PROGRAM)
    first = run_with_cache(program, cache, devices)
    x = np.arange(8, dtype=np.float32)
    for device in devices:
        np.testing.assert_array_equal(first[device][0], 2 * x + 1)
    for shift in (0, 1):
        assert corrupt(cache, shift) >= 2 * len(devices)  # a module and its metadata each
        assert run_with_cache(program, cache, devices) == first


# ------------------------------------------------------------------ the device fails


@pytest.mark.usefixtures("on_vulkan")
def test_a_device_lost_inside_an_op_is_a_device_error(monkeypatch):
    device = pk.get_device()
    kept = pk.asarray(np.arange(6, dtype=np.float32))
    pk.sync()
    with monkeypatch.context() as m:
        m.setattr(device.fn, "vkQueueSubmit", lambda *args: -4)  # VK_ERROR_DEVICE_LOST
        with pytest.raises(pk.DeviceLost, match="VK_ERROR_DEVICE_LOST"):
            (kept * 3).numpy()
    np.testing.assert_array_equal(kept.numpy(), np.arange(6))
    np.testing.assert_array_equal((kept * 3).numpy(), np.arange(6) * 3)


def test_out_of_memory_inside_an_op_is_a_device_error(monkeypatch):
    device = pk.get_device()
    a = pk.asarray(np.ones((37, 11), np.float32))  # an output size no other test recycles
    b = pk.asarray(np.ones((11, 53), np.float32))

    def no_memory(*args, **kwargs):
        raise pk.OutOfDeviceMemory("injected")

    with monkeypatch.context() as m:
        target = device if device.info.kind == "host" else device.allocator
        m.setattr(target, "create_buffer" if device.info.kind == "host" else "allocate",
                  no_memory)
        with pytest.raises(pk.OutOfDeviceMemory, match="injected"):
            pk.matmul(a, b).numpy()
    np.testing.assert_array_equal(a.numpy(), np.ones((37, 11)))
    np.testing.assert_array_equal(pk.matmul(a, b).numpy(), np.full((37, 53), 11.0))
    with pytest.raises(pk.OutOfDeviceMemory):
        pk.empty((2**40,), pk.f32)  # 4 TiB: refused by pykern's own accounting
    np.testing.assert_array_equal((a + a).numpy(), np.full((37, 11), 2.0))


# ------------------------------------------------------------------ bad arguments


@pk.kernel
def scaled(a: pk.f32, x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i]


@pytest.mark.parametrize("call, expected", [
    (lambda x, o: scaled[4](2.0, x), pk.LaunchError),  # too few arguments
    (lambda x, o: scaled[4](2.0, x.astype(pk.f64), o), pk.LaunchError),  # dtype
    (lambda x, o: scaled[4](2.0, x.reshape((2, 2)), o), pk.LaunchError),  # ndim
    (lambda x, o: scaled[4]("two", x, o), pk.LaunchError),  # a string for a scalar
    (lambda x, o: scaled[-1](2.0, x, o), pk.LaunchError),  # grid
    (lambda x, o: scaled[(1, 2, 3, 4)](2.0, x, o), pk.LaunchError),
    (lambda x, o: pk.kernel(undefined_name)[4](x), pk.CompileError),
])
def test_bad_arguments_are_pk_errors_and_the_next_launch_works(call, expected):
    x = pk.asarray(np.arange(4, dtype=np.float32))
    out = pk.zeros(4)
    with pytest.raises(expected) as info:
        call(x, out)
    assert isinstance(info.value, pk.PykernError)
    np.testing.assert_array_equal(x.numpy(), np.arange(4))
    scaled[4](2.0, x, out)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(4))


def undefined_name(x: pk.f32[:]):
    x[pk.global_id(0)] = not_defined_anywhere  # noqa: F821
