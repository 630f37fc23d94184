"""spirv-val / spirv-dis wrappers."""

from __future__ import annotations

import importlib
import shutil
import subprocess

import pytest

from pykern.spirv.function import FunctionBuilder
from pykern.spirv.encoding.grammar import Capability, ExecutionMode, ExecutionModel
from pykern.spirv.encoding.module import ModuleBuilder
from pykern.spirv.encoding.types import I32

# the module, not the function `pykern.spirv.encoding.validate` that the package exports
validate_module = importlib.import_module("pykern.spirv.encoding.validate")

pytestmark = pytest.mark.skipif(shutil.which("spirv-val") is None,
                                reason="spirv-val not installed (package spirv-tools)")


def module(valid: bool = True) -> bytes:
    m = ModuleBuilder()
    if valid:
        m.require(Capability.Shader)  # without it, GLCompute is not allowed
    fn = FunctionBuilder(m, name="entry")
    fn.return_()
    fn.finish()
    m.entry_point(ExecutionModel.GLCompute, fn.id, "main", ())
    m.execution_mode(fn.id, ExecutionMode.LocalSize, 1, 1, 1)
    return m.assemble()


def test_valid_module_passes():
    validate_module.validate(module())


def test_invalid_module_raises_with_message_and_disassembly():
    with pytest.raises(validate_module.SpirvValidationError) as info:
        validate_module.validate(module(valid=False))
    text = str(info.value)
    assert "spirv-val rejected the module" in text
    assert "Shader" in text  # spirv-val names the missing capability
    assert "OpEntryPoint GLCompute %entry" in text  # the full disassembly follows
    assert isinstance(info.value, RuntimeError)


def test_garbage_still_reports():
    with pytest.raises(validate_module.SpirvValidationError, match="no disassembly"):
        validate_module.validate(b"\x00" * 20)


def test_disassemble():
    text = validate_module.disassemble(module())
    assert "OpCapability Shader" in text and "OpFunctionEnd" in text


def test_tools_run_with_an_argument_list_stdin_and_a_timeout(monkeypatch):
    seen = {}
    real_run = subprocess.run

    def spy(args, **kwargs):
        seen.update(kwargs, args=args)
        return real_run(args, **kwargs)

    monkeypatch.setattr(validate_module.subprocess, "run", spy)
    validate_module.validate(module(), "vulkan1.2")
    assert isinstance(seen["args"], list) and seen["args"][-3:] == ["--target-env", "vulkan1.2",
                                                                     "-"]
    assert "shell" not in seen and seen["timeout"] > 0 and seen["input"] == module()


def test_missing_tool_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(validate_module.shutil, "which", lambda name: None)
    with pytest.raises(validate_module.SpirvToolMissingError, match="spirv-val is not installed"):
        validate_module.validate(module())
    with pytest.raises(validate_module.SpirvToolMissingError, match="spirv-dis"):
        validate_module.disassemble(module())


def test_unused_type_in_a_module_is_fine():
    m = ModuleBuilder()
    m.require(Capability.Shader)
    m.type_id(I32)
    fn = FunctionBuilder(m)
    fn.return_()
    fn.finish()
    m.entry_point(ExecutionModel.GLCompute, fn.id, "main", ())
    m.execution_mode(fn.id, ExecutionMode.LocalSize, 1, 1, 1)
    validate_module.validate(m.assemble())
