"""The op table of docs/tensor.md, written from the registry: one row per exported op, grouped
by kind, with where it is exported, its numpy and PyTorch names, how it differentiates and its
doc line. `python -m pykern.ops.doc_table` rewrites the table between the file's markers; a
test (tests/ops/test_op_registry.py) checks that the committed table is current.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pykern  # noqa: F401  (imports every op module, which declares its ops)
from pykern.ops.registry import KINDS, Op, all_ops

BEGIN = "<!-- op table: written by `python -m pykern.ops.doc_table`; do not edit -->"
END = "<!-- end of the op table -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "tensor.md"

_GRAD = {"formula": "formula", "rule": "rule", "composite": "composite", "inline": "recorded",
         "linear": "linear", "none": "—", "refused": "refused"}
_WHERE = {"pk": "pk", "array_api": "xp", "linalg": "pk.linalg", "fft": "pk.fft",
          "random": "pk.random", "nn.functional": "F"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _row(op: Op) -> str:
    where = ", ".join(_WHERE[e] for e in op.exports)
    numpy = ", ".join(f"`np.{n}`" for n in op.aliases.numpy)
    torch = ", ".join([f"`torch.{n}`" for n in op.aliases.torch]
                      + [f"`{n}`" for n in op.aliases.aten])
    name = op.name.rpartition(".")[2] if "." in op.name else op.name
    return (f"| `{name}` | {where} | {numpy or '—'} | {torch or '—'} | "
            f"{_GRAD[op.grad]} | {_cell(op.doc)} |")


def table() -> str:
    """The markdown of the op table (between the markers, markers included)."""
    lines = [BEGIN, "",
             "| op | in | numpy | PyTorch | gradient | what |",
             "| --- | --- | --- | --- | --- | --- |"]
    ops = sorted((op for op in all_ops() if op.exports),
                 key=lambda op: (KINDS.index(op.kind), op.name))
    lines += [_row(op) for op in ops]
    return "\n".join(lines + ["", END])


def rewritten(text: str) -> str:
    """`text` (docs/tensor.md) with the table between its markers replaced by `table()`."""
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + table() + text[stop:]


def main() -> int:
    """Rewrites docs/tensor.md's op table in place."""
    DOC.write_text(rewritten(DOC.read_text()))
    print(f"wrote the op table ({sum(1 for op in all_ops() if op.exports)} ops) into {DOC}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
