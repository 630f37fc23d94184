"""pykern's logging: PYKERN_LOG, the device choice, compiles and cache hits, and no formatting
when the level is off."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykern as pk
from pykern.config import CompilerConfig
from pykern.jit import compile_log
from pykern.runtime import Config
from pykern.runtime.logs import level_from_env

SCRIPT = textwrap.dedent("""
    import numpy as np
    import pykern as pk

    @pk.kernel
    def twice(x: pk.f32[:], out: pk.f32[:]):
        out[pk.global_id(0)] = 2.0 * x[pk.global_id(0)]

    out = np.empty(4, np.float32)
    twice[4](np.arange(4, dtype=np.float32), out)
    print(out.tolist())
""")


def run_script(tmp_path, **env: str) -> subprocess.CompletedProcess:
    script = tmp_path / "logged.py"
    script.write_text(SCRIPT)
    environ = {k: v for k, v in os.environ.items() if k != "PYKERN_LOG"}
    environ.update(PYKERN_CACHE_DIR=str(tmp_path / "cache"), **env)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=environ, timeout=300)


def test_pykern_log_info_tells_the_device_chosen_and_each_compile(tmp_path):
    result = run_script(tmp_path, PYKERN_LOG="info", PYKERN_DEVICE="host")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[0.0, 2.0, 4.0, 6.0]"  # the program's own output intact
    lines = result.stderr.splitlines()
    assert any(line.startswith("pykern.runtime INFO: device [") and "(host)" in line
               and "chosen by PYKERN_DEVICE='host'" in line for line in lines), lines
    compiled = [line for line in lines if "compiled twice(" in line]
    assert len(compiled) == 1 and "x: pk.f32[:], out: pk.f32[:]" in compiled[0]
    assert "(LLVM) in " in compiled[0] and compiled[0].endswith(" ms")
    assert not any(" DEBUG: " in line for line in lines)


def test_without_pykern_log_nothing_is_written(tmp_path):
    result = run_script(tmp_path)
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_a_bad_pykern_log_is_an_error_naming_the_variable():
    with pytest.raises(ValueError, match=r"PYKERN_LOG='loud' is none of warning, info, debug"):
        level_from_env("loud")
    assert level_from_env(" DEBUG ") == logging.DEBUG and level_from_env("") is None
    with pytest.raises(ValueError, match="PYKERN_LOG='loud'"):
        Config.from_env({"PYKERN_LOG": "loud"})  # what the runtime reads at its start
    with pytest.raises(ValueError, match="PYKERN_LOG='loud'"):
        CompilerConfig.from_env({"PYKERN_LOG": "loud"})  # and the compiler


def make_kernel() -> pk.Kernel:
    def add_one(x: pk.f32[:], out: pk.f32[:]):
        out[pk.global_id(0)] = x[pk.global_id(0)] + 1.0
    return pk.kernel(add_one)


def test_debug_level_reports_memory_and_disk_cache_hits(caplog):
    caplog.set_level(logging.DEBUG, logger="pykern.jit")
    x, out = np.ones(3, np.float32), np.empty(3, np.float32)
    first = make_kernel()
    first.compile(x, out)
    first.compile(x, out)  # the same kernel object: found in memory
    second = make_kernel()  # a new object of the same source: the disk cache has it
    second[3](x, out)
    np.testing.assert_array_equal(out, x + 1)
    messages = [r.getMessage() for r in caplog.records if r.name == "pykern.jit"]
    built = [m for m in messages if "add_one(" in m]
    assert built[0].startswith(("compiled add_one(", "disk cache hit: add_one("))
    assert built[1].startswith("memory cache hit: add_one(x: pk.f32[:], out: pk.f32[:])")
    assert built[2].startswith("disk cache hit: add_one(") and "loaded in" in built[2]


def test_nothing_is_formatted_when_the_level_is_off(monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="pykern")

    def refuse(*args: object) -> str:
        raise AssertionError("a message was formatted while its level is off")

    monkeypatch.setattr(compile_log, "describe", refuse)
    kernel = make_kernel()
    x, out = np.ones(2, np.float32), np.empty(2, np.float32)
    kernel[2](x, out)
    kernel.compile(x, out)
    np.testing.assert_array_equal(out, x + 1)


def test_debug_level_reports_each_op_plan_made(caplog):
    from pykern.tensor.core import dispatch

    caplog.set_level(logging.DEBUG, logger="pykern.tensor")
    dispatch.clear()
    a = pk.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(3):  # the first call makes the plan, the others replay it
        np.testing.assert_array_equal((a + a).numpy(), 2 * np.arange(6).reshape(2, 3))
    made = [r.getMessage() for r in caplog.records
            if r.name == "pykern.tensor" and r.getMessage().startswith("op plan made:")]
    assert len(made) == 1 and "f32[2, 3], f32[2, 3]" in made[0] and "1 launches" in made[0]
