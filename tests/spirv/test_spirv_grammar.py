"""The generated enum module matches the Khronos grammar it was generated from."""

from __future__ import annotations

import json

import pytest

from pykern.spirv.encoding import generate_grammar
from pykern.spirv.encoding.grammar import (
    GLSL,
    MAGIC_NUMBER,
    Capability,
    Decoration,
    Dim,
    FunctionControl,
    MemorySemantics,
    Op,
    StorageClass,
)

CORE, GLSL_PATH = generate_grammar.grammar_paths()
needs_grammar = pytest.mark.skipif(
    not (CORE.exists() and GLSL_PATH.exists()),
    reason=f"SPIR-V grammar JSON not found in {CORE.parent} (Debian package spirv-headers; "
           f"or set {generate_grammar.GRAMMAR_DIR_ENV})")


@needs_grammar
def test_regenerating_changes_nothing(tmp_path):
    out = tmp_path / "grammar.py"
    assert generate_grammar.main(["--out", str(out)]) == 0
    committed = generate_grammar.DEFAULT_OUT.read_bytes()
    assert out.read_bytes() == committed, (
        "pykern/spirv/encoding/grammar.py is stale: run "
        "`python -m pykern.spirv.encoding.generate_grammar`")


@needs_grammar
def test_every_opcode_and_glsl_instruction_is_there():
    core = json.loads(CORE.read_text())
    glsl = json.loads(GLSL_PATH.read_text())
    for inst in core["instructions"]:
        assert Op[inst["opname"].removeprefix("Op")] == inst["opcode"]
    for inst in glsl["instructions"]:
        assert GLSL[inst["opname"]] == inst["opcode"]


@needs_grammar
def test_paths_come_from_arguments_or_environment(monkeypatch, tmp_path):
    assert generate_grammar.grammar_paths(tmp_path)[0] == tmp_path / generate_grammar.CORE_FILE
    monkeypatch.setenv(generate_grammar.GRAMMAR_DIR_ENV, str(tmp_path))
    assert generate_grammar.grammar_paths()[1] == tmp_path / generate_grammar.GLSL_FILE


def test_known_values():
    # values fixed by the SPIR-V specification
    assert MAGIC_NUMBER == 0x07230203
    assert Op.TypeInt == 21 and Op.ExtInst == 12 and Op.Decorate == 71
    assert Capability.Shader == 1 and StorageClass.StorageBuffer == 12
    assert Decoration.NoContraction == 42 and GLSL.NMin == 79
    assert Dim.Dim1D == 0 and FunctionControl.None_ == 0


def test_bit_enums_are_flags():
    both = MemorySemantics.Acquire | MemorySemantics.Release
    assert isinstance(both, MemorySemantics) and int(both) == 0x6


def test_render_is_deterministic_and_names_are_identifiers():
    core = {
        "magic_number": "0x07230203", "major_version": 1, "minor_version": 6, "revision": 1,
        "instructions": [{"opname": "OpNop", "opcode": 0}],
        "operand_kinds": [
            {"category": "ValueEnum", "kind": "Dim",
             "enumerants": [{"enumerant": "1D", "value": 0}]},
            {"category": "BitEnum", "kind": "LoopControl",
             "enumerants": [{"enumerant": "None", "value": "0x0000"},
                            {"enumerant": "Unroll", "value": "0x0001"}]},
            {"category": "Id", "kind": "IdRef"},
        ],
    }
    glsl = {"version": 100, "revision": 2, "instructions": [{"opname": "Round", "opcode": 1}]}
    text = generate_grammar.render(core, glsl)
    assert text == generate_grammar.render(core, glsl)
    assert "GENERATED FILE" in text.splitlines()[0]
    namespace: dict = {}
    exec(compile(text, "grammar.py", "exec"), namespace)  # the output is valid Python
    assert namespace["Dim"].Dim1D == 0
    assert namespace["LoopControl"].None_ == 0 and namespace["LoopControl"].Unroll == 1
    assert "IdRef" not in namespace
