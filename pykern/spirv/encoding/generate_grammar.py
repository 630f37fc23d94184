"""Writes `pykern/spirv/encoding/grammar.py` from the Khronos SPIR-V grammar files.

The enums of the SPIR-V layer are never typed by hand: they come from `spirv.core.grammar.json`
and `extinst.glsl.std.450.grammar.json` (Debian package `spirv-headers`). Run

    python -m pykern.spirv.encoding.generate_grammar [--grammar-dir DIR] [--core FILE] [--glsl FILE]
                                            [--out FILE]

after updating the headers and commit the result; `tests/spirv/test_grammar.py` checks that
regenerating changes nothing. The grammar directory can also be given by `SPIRV_GRAMMAR_DIR`.
"""

from __future__ import annotations

import argparse
import json
import keyword
import os
import sys
from collections.abc import Sequence
from pathlib import Path

DEFAULT_GRAMMAR_DIR = Path("/usr/include/spirv/unified1")
CORE_FILE = "spirv.core.grammar.json"
GLSL_FILE = "extinst.glsl.std.450.grammar.json"
DEFAULT_OUT = Path(__file__).with_name("grammar.py")
GRAMMAR_DIR_ENV = "SPIRV_GRAMMAR_DIR"

_ENUM_CATEGORIES = {"ValueEnum": "enum.IntEnum", "BitEnum": "enum.IntFlag"}


def grammar_paths(grammar_dir: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """The core and GLSL.std.450 grammar files in `grammar_dir`, else `$SPIRV_GRAMMAR_DIR`,
    else the Debian location."""
    base = Path(grammar_dir or os.environ.get(GRAMMAR_DIR_ENV) or DEFAULT_GRAMMAR_DIR)
    return base / CORE_FILE, base / GLSL_FILE


def render(core: dict, glsl: dict) -> str:
    """The text of grammar.py for the two parsed grammar files; the same input gives the same
    text byte for byte."""
    out = [_header(core, glsl)]
    out.append(_enum_class("Op", "enum.IntEnum", "SPIR-V opcodes, without their `Op` prefix.",
                           [(i["opname"].removeprefix("Op"), str(i["opcode"]))
                            for i in core["instructions"]]))
    for kind in core["operand_kinds"]:
        base = _ENUM_CATEGORIES.get(kind["category"])
        if base is None:
            continue  # ids, literals and composites are not enums
        members = [(_member_name(kind["kind"], e["enumerant"]), _value(e["value"]))
                   for e in kind["enumerants"]]
        doc = f"SPIR-V operand kind {kind['kind']} ({kind['category']})."
        out.append(_enum_class(kind["kind"], base, doc, members))
    out.append(_enum_class("GLSL", "enum.IntEnum", "GLSL.std.450 extended instructions.",
                           [(i["opname"], str(i["opcode"])) for i in glsl["instructions"]]))
    return "\n\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grammar-dir",
                        help=f"folder of the grammar files (or ${GRAMMAR_DIR_ENV})")
    parser.add_argument("--core", help=f"path of {CORE_FILE}")
    parser.add_argument("--glsl", help=f"path of {GLSL_FILE}")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="file to write")
    args = parser.parse_args(argv)
    core_path, glsl_path = grammar_paths(args.grammar_dir)
    core = json.loads(Path(args.core or core_path).read_text(encoding="utf-8"))
    glsl = json.loads(Path(args.glsl or glsl_path).read_text(encoding="utf-8"))
    Path(args.out).write_text(render(core, glsl), encoding="utf-8")
    return 0


# ---------------------------------------------------------------- rendering helpers


def _header(core: dict, glsl: dict) -> str:
    major, minor, rev = core["major_version"], core["minor_version"], core["revision"]
    version_word = (major << 16) | (minor << 8)
    return f'''\
# GENERATED FILE, DO NOT EDIT.
# Written by pykern/spirv/encoding/generate_grammar.py from {CORE_FILE}
# (SPIR-V {major}.{minor} revision {rev}) and {GLSL_FILE}
# (version {glsl["version"]} revision {glsl["revision"]}), Khronos Group, MIT-style license.
# Regenerate with: python -m pykern.spirv.encoding.generate_grammar
"""SPIR-V opcodes, operand enums and GLSL.std.450 instructions from the Khronos grammar."""

import enum

MAGIC_NUMBER = {core["magic_number"]}
GRAMMAR_VERSION = ({major}, {minor})
GRAMMAR_VERSION_WORD = 0x{version_word:08x}
GRAMMAR_REVISION = {rev}
GLSL_STD_450_VERSION = {glsl["version"]}
GLSL_STD_450_REVISION = {glsl["revision"]}
'''


def _enum_class(name: str, base: str, doc: str, members: list[tuple[str, str]]) -> str:
    lines = [f"class {name}({base}):", f'    """{doc}"""', ""]
    lines += [f"    {member} = {value}" for member, value in members]
    return "\n".join(lines) + "\n"


def _member_name(kind: str, enumerant: str) -> str:
    # `1D` is no identifier (Khronos's own headers write Dim1D); `None` is a keyword
    if not enumerant[0].isalpha() and enumerant[0] != "_":
        return kind + enumerant
    if keyword.iskeyword(enumerant):
        return enumerant + "_"
    return enumerant


def _value(value: int | str) -> str:
    # bit enums are written in hex in the grammar; keep that, it shows the bit
    return f"0x{int(value, 16):04x}" if isinstance(value, str) else str(value)


if __name__ == "__main__":
    sys.exit(main())
