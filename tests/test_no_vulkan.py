"""pykern on a machine without a usable Vulkan, and the configuration read on first use.

Each case runs in a fresh Python, with Vulkan taken away for real in one of three ways:

- "package": the `vulkan` package cannot be imported (`sys.modules['vulkan'] = None`);
- "loader": the package is there but its dlopen of libvulkan.so.1 fails (LD_LIBRARY_PATH names
  a directory whose libvulkan.so.1 is not a library, which the dynamic loader finds first);
- "driver": the loader is there but finds no driver (VK_DRIVER_FILES names no file), so
  vkCreateInstance fails with VK_ERROR_INCOMPATIBLE_DRIVER.

Then `import pykern` works, `pk.devices()` lists the host device only, kernels and tensors run
on it (also with `spirv-val` missing from PATH), asking for a Vulkan device raises
`pk.DeviceUnavailable` saying what to install, and compiling to SPIR-V and the interpreter
still work.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BLOCK_PACKAGE = "import sys\nsys.modules['vulkan'] = None  # import vulkan now fails\n"

# what each way of missing Vulkan must tell the user to install
ADVICE = {
    "package": "pip install vulkan",
    "loader": "apt install libvulkan1",
    "driver": "mesa-vulkan-drivers",
}


def run_python(body: str, folder: Path, env: dict[str, str] | None = None, prelude: str = "",
               timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs `prelude` then `body` as a script in `folder` (kernels need a source file), in a
    fresh Python with `env` as its environment; fails the test, showing the output, when it
    does not exit with 0."""
    script = folder / "program.py"
    script.write_text(prelude + textwrap.dedent(body))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=timeout, cwd=folder,
                            env=os.environ.copy() if env is None else env, check=False)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result


def without_vulkan(way: str, tmp_path: Path) -> tuple[dict[str, str], str]:
    """The environment and the prelude of a Python that lacks Vulkan in the way `way` names."""
    env = os.environ.copy()
    if way == "package":
        return env, BLOCK_PACKAGE
    if way == "loader":
        (tmp_path / "libvulkan.so.1").write_bytes(b"")  # found first, and not a library
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(tmp_path), env.get("LD_LIBRARY_PATH")) if p)
        return env, ""
    assert way == "driver"
    nowhere = str(tmp_path / "no-driver.json")
    env.pop("VK_ADD_DRIVER_FILES", None)
    env.update(VK_DRIVER_FILES=nowhere, VK_ICD_FILENAMES=nowhere)
    return env, ""


KERNEL = """
import numpy as np
import pykern as pk

@pk.kernel
def saxpy(a: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i] + y[i]

x = np.arange(10, dtype=np.float32)
y = np.full(10, 0.5, dtype=np.float32)
out = np.zeros(10, dtype=np.float32)
"""


@pytest.mark.parametrize("way", ["package", "loader", "driver"])
def test_without_vulkan_the_host_device_runs_kernels_and_tensors(way, tmp_path):
    env, prelude = without_vulkan(way, tmp_path)
    env["PATH"] = str(tmp_path)  # no spirv-val, no spirv-dis: the host needs neither
    env.pop("PYKERN_DEVICE", None)
    run_python(KERNEL + f"""
import sys

advice = {ADVICE[way]!r}
(info,) = pk.devices()
assert info.kind == "host" and "host" in info.name, info
assert pk.get_device().info == info
saxpy[x.size](2.0, x, y, out)
np.testing.assert_array_equal(out, 2.0 * x + y)
t = pk.asarray(x) * 3.0 + pk.ones(x.size)
np.testing.assert_array_equal(t.numpy(), x * 3.0 + 1.0)
assert float(pk.sum(t)) == float((x * 3.0 + 1.0).sum())
for which in ("vulkan", "llvmpipe", 1):
    try:
        pk.set_device(which)
    except pk.DeviceUnavailable as error:  # a pk.DeviceError
        message = str(error)
        assert advice in message and "host" in message, (which, message)
    else:
        raise AssertionError(f"set_device({{which!r}}) did not raise pk.DeviceUnavailable")
assert issubclass(pk.DeviceUnavailable, pk.DeviceError)
assert pk.get_device().info.kind == "host"  # the failed choice changed nothing
pk.sync()
assert "vulkan" not in sys.modules or sys.modules["vulkan"] is None or {way!r} != "package"
""", tmp_path, env, prelude)


def test_the_loader_simulation_is_real(tmp_path):
    """The "loader" case makes the `vulkan` package's own dlopen fail, as on a machine without
    libvulkan1, rather than pretending."""
    env, _ = without_vulkan("loader", tmp_path)
    run_python("""
try:
    import vulkan  # noqa: F401
except OSError:
    pass
else:
    raise AssertionError("libvulkan.so.1 was loaded")
""", tmp_path, env)


@pytest.mark.parametrize("way", ["package", "driver"])
def test_without_vulkan_kernels_compile_and_interpret(way, tmp_path):
    env, prelude = without_vulkan(way, tmp_path)
    run_python(KERNEL + """
from pykern import ir

assert isinstance(saxpy.ir(2.0, x, y, out), ir.Kernel)
words = saxpy.spirv(2.0, x, y, out)  # spirv-val has passed it
assert int.from_bytes(words[:4], "little") == 0x07230203, words[:4]
text = saxpy.asm(2.0, x, y, out)
assert "OpEntryPoint GLCompute" in text and "OpFMul" in text, text

@pk.kernel(interpret=True)
def saxpy_interpreted(a: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i] + y[i]

saxpy_interpreted[x.size](2.0, x, y, out)
np.testing.assert_array_equal(out, 2.0 * x + y)
""", tmp_path, env, prelude)


def test_interpret_set_after_import_is_honoured(tmp_path):
    """PYKERN_INTERPRET set after `import pykern` (and after the decoration) still holds: with
    Vulkan blocked, the launch can only succeed in the interpreter."""
    run_python(KERNEL + """
import os

os.environ["PYKERN_INTERPRET"] = "1"
saxpy[x.size](2.0, x, y, out)
np.testing.assert_array_equal(out, 2.0 * x + y)
""", tmp_path, prelude=BLOCK_PACKAGE)


def test_decorating_reads_no_configuration(tmp_path):
    """`import pykern` makes the op library's kernels and the user decorates more: none of it
    reads the configuration (`config()` caches what it read; its cache stays untouched)."""
    run_python("""
import pykern as pk
from pykern import config
import pykern.runtime.selection as selection

@pk.kernel(debug=True)
def fill(x: pk.f32[:]):
    x[pk.global_id(0)] = 1.0

info = config.config.cache_info()
assert info.hits == 0 and info.misses == 0, info
assert selection._runtime is None  # nor the runtime's
""", tmp_path)


def test_debug_set_after_import_is_honoured(tmp_path):
    """PYKERN_DEBUG set after the decoration, before the first launch: the out-of-bounds write
    of the last invocation is reported (on the device)."""
    run_python("""
import os

import numpy as np
import pykern as pk

@pk.kernel
def shift(x: pk.f32[:]):
    x[pk.global_id(0) + 1] = 1.0

os.environ["PYKERN_DEBUG"] = "1"
x = np.zeros(8, dtype=np.float32)
try:
    shift[x.size](x)
except pk.KernelIndexError as error:
    assert "8" in str(error), error
else:
    raise AssertionError("the out-of-bounds write went unreported")
""", tmp_path)


def test_device_set_after_import_is_honoured(tmp_path):
    """PYKERN_DEVICE set after `import pykern`, before the first device use, is the one used."""
    run_python("""
import os

import pykern as pk

os.environ["PYKERN_DEVICE"] = "no such device"
try:
    pk.get_device()
except pk.DeviceError as error:
    assert "PYKERN_DEVICE: no device matches 'no such device'" in str(error), error
else:
    raise AssertionError("PYKERN_DEVICE was not read")
""", tmp_path)


def test_a_driver_that_lists_no_device_leaves_the_host():
    """Where the instance is made but lists no device, the host device is the default, and
    naming a Vulkan device raises DeviceUnavailable naming the driver to install."""
    from pykern.runtime import DeviceError, DeviceUnavailable
    from pykern.runtime.host.host_device import host_info
    from pykern.runtime.selection import choose_default, select

    infos = [host_info(0)]
    assert choose_default(infos) == 0 and select(infos, "host") == 0
    why = "the Vulkan driver lists no device. Install mesa-vulkan-drivers"
    for which in (1, "NVIDIA", "vulkan"):
        with pytest.raises(DeviceUnavailable, match="mesa-vulkan-drivers") as error:
            select(infos, which, "PYKERN_DEVICE", why)
        assert isinstance(error.value, DeviceError)


def test_vulkan_back_after_shutdown_is_found(tmp_path):
    """Without Vulkan only the host is listed; `shutdown()` forgets the runtime, and the next
    use looks afresh (here: Vulkan is back)."""
    run_python("""
import sys

import pykern as pk
import pykern.runtime as rt

assert [d.kind for d in pk.devices()] == ["host"]
del sys.modules["vulkan"]  # the package can be imported again ...
assert [d.kind for d in pk.devices()] == ["host"]  # ... but the first answer stands
rt.shutdown()
assert len(pk.devices()) > 1, "no Vulkan device after shutdown() with Vulkan back"
assert pk.devices()[-1].kind == "host"
""", tmp_path, prelude=BLOCK_PACKAGE)
