"""Checks of an example's --help: its docstring shown whole (not cut mid-sentence) and every
option's default stated."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def help_text(script: str) -> str:
    done = subprocess.run([sys.executable, script, "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def option_entries(text: str) -> dict[str, str]:
    """Each option of the help's options section (`--name`), with its help text joined."""
    lines = text.split("\noptions:\n", 1)[1].splitlines()
    entries: dict[str, str] = {}
    current = None
    for line in lines:
        stripped = line.strip()
        if line.startswith("  -"):
            current = stripped.split()[0].rstrip(",")
            if current == "-h":
                current = "--help"
            entries[current] = stripped
        elif current is not None and stripped:
            entries[current] += " " + stripped
    return entries


def check_help(script: str) -> None:
    """The script's docstring appears whole in its --help, and every option but --help says
    its default."""
    text = help_text(script)
    doc = ast.get_docstring(ast.parse((ROOT / script).read_text()))
    assert doc and " ".join(doc.split()) in " ".join(text.split())
    entries = option_entries(text)
    assert len(entries) > 2
    for option, entry in entries.items():
        if option != "--help":
            assert "default" in entry, (option, entry)
