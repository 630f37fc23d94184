"""A hung spirv-val or spirv-dis is stopped and reported as a pykern error, not as a raw
subprocess.TimeoutExpired."""

from __future__ import annotations

import importlib
import os
import stat
import subprocess
import time

import pytest

# the module, not the function `pykern.spirv.encoding.validate` that the package exports
validate_module = importlib.import_module("pykern.spirv.encoding.validate")

# any bytes do: the fake tools never read them
MODULE = b"\x03\x02\x23\x07" + bytes(16)


@pytest.fixture
def hung_tools(tmp_path, monkeypatch):
    """spirv-val and spirv-dis that never answer, first on PATH; a 0.5 s tool timeout."""
    for tool in ("spirv-val", "spirv-dis"):
        script = tmp_path / tool
        # exec: the killed process is the sleep itself, so no orphan keeps the pipes open
        script.write_text("#!/bin/sh\nexec sleep 30\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(validate_module, "TIMEOUT_S", 0.5)
    return tmp_path


@pytest.mark.parametrize("call, tool", [
    (validate_module.validate, "spirv-val"),
    (validate_module.disassemble, "spirv-dis"),
])
def test_a_hung_tool_is_stopped_with_a_clear_error(hung_tools, call, tool):
    start = time.monotonic()
    with pytest.raises(validate_module.SpirvToolTimeoutError) as info:
        call(MODULE)
    assert time.monotonic() - start < 10
    text = str(info.value)
    assert f"{tool} ({hung_tools / tool}) did not finish within 0.5 s" in text
    assert "spirv-tools" in text
    assert not isinstance(info.value, subprocess.TimeoutExpired)
    assert info.value.__suppress_context__  # the raw TimeoutExpired is not chained into it
