"""Golden SPIR-V: the disassembly of a few kernels is kept in tests/kernels/golden/*.spvasm so a
change in code generation shows up in review. Each is compiled for a fixed target (the default
one; `loops_capped` for a device that cuts loops short, as lavapipe does), so the files do not
depend on the device at hand. Each golden file is re-assembled with spirv-as and validated with
spirv-val. Regenerate with: PYKERN_UPDATE_GOLDEN=1 make test"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import pykern as pk
from pykern.spirv.lower import DEFAULT_TARGET, lower
from pykern.spirv.target import Target
from pykern.spirv.encoding.validate import disassemble

GOLDEN = pathlib.Path(__file__).parent / "golden"
THIS_FILE = "tests/kernels/test_golden.py"


@pk.kernel
def saxpy(a: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i] + y[i]


@pk.kernel
def floor_mod(a: pk.i32[:], b: pk.i32[:], out: pk.i32[:]):
    i = pk.global_id(0)
    out[i] = a[i] // b[i] + a[i] % b[i]


@pk.kernel
def loops(n: pk.i32, out: pk.f32[:]):
    i = pk.global_id(0)
    total = 0.0
    for k in range(n):
        if k % 2 == 0:
            continue
        total += pk.sqrt(float(k))
    while total > 100.0:
        total = total / 2.0
    out[i] = total


F = np.zeros(4, np.float32)
I = np.zeros(4, np.int32)
CAPPED = Target(loop_iteration_cap=65535)
CASES = {
    "saxpy": (saxpy, (1.0, F, F, F), DEFAULT_TARGET),
    "floor_mod": (floor_mod, (I, I, I), DEFAULT_TARGET),
    "loops": (loops, (3, F), DEFAULT_TARGET),
    "loops_capped": (loops, (3, F), CAPPED),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_spvasm(name):
    kernel, args, target = CASES[name]
    # loop sites name their file: the golden text holds this file's name, not where it lives
    text = disassemble(lower(kernel.ir(*args), target).words).replace(__file__, THIS_FILE)
    path = GOLDEN / f"{name}.spvasm"
    if os.environ.get("PYKERN_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}; PYKERN_UPDATE_GOLDEN=1 creates it"
    assert text == path.read_text(), f"SPIR-V of {name} changed; PYKERN_UPDATE_GOLDEN=1 to accept"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_file_validates(name, tmp_path):
    if shutil.which("spirv-as") is None:
        pytest.skip("spirv-as not installed")
    binary = tmp_path / f"{name}.spv"
    subprocess.run(["spirv-as", "--target-env", "vulkan1.2", "-o", str(binary),
                    str(GOLDEN / f"{name}.spvasm")], check=True, timeout=30)
    result = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(binary)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
