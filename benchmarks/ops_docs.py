"""`--write-docs`: puts the `ops` table of a run into docs/performance.md, between two markers,
with the command, date, device and peer that made it; the rest of the file is kept as it is.
A file without the markers gets them, in a new section at its end.
"""

from __future__ import annotations

import os
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "performance.md"
START = "<!-- ops-table:start (written by python -m benchmarks --only ops --write-docs) -->"
END = "<!-- ops-table:end -->"
SECTION = "## Tensor ops against torch (`--only ops`)"


def write_docs(path: Path, table: str, meta: dict[str, object]) -> None:
    """Replaces what lies between the markers of `path` with `table` and how it was made."""
    block = f"{START}\n{_made_by(meta)}\n\n{table}\n{END}"
    text = path.read_text() if path.exists() else ""
    start, end = text.find(START), text.find(END)
    if start >= 0 and end > start:
        text = text[:start] + block + text[end + len(END):]
    else:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\n{block}\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # a run cut short leaves the old file whole


def _made_by(meta: dict[str, object]) -> str:
    device = meta.get("device")
    name, driver = ((device.get("name"), device.get("driver")) if isinstance(device, dict)
                    else ("?", "?"))
    peer = meta.get("ops_peer") or "no torch peer (pykern figures only)"
    return (f"`{meta.get('command')}`, {meta.get('date')}; pykern on {name} ({driver}); "
            f"{peer}. ratio: pykern / torch (above 1: pykern ahead); max rel. error: "
            f"normwise against a float64 reference, with the bound for the result's dtype.")
