"""Runs a notebook's code cells in order and stores their outputs in the .ipynb file.

    python examples/run_notebook.py examples/tour.ipynb

It does what Jupyter's "Restart and run all" does, without Jupyter: each code cell runs in one
shared namespace (registered in `linecache` under a name of its own, so that kernels defined in
cells can be compiled), and what it shows is stored as Jupyter stores it: what it printed (a
`stream` output), the value of a final expression (`execute_result`, with its `repr`, and a PNG
image when the value is a matplotlib figure), or the exception it raised (`error`, after which
the run stops). Each cell's metadata records a hash of the source it ran, so a test can tell
that the stored outputs belong to the cells as they are now.
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import hashlib
import io
import json
import linecache
import os
import sys
import traceback
from pathlib import Path
from typing import Any

METADATA_KEY = "pykern"  # cell metadata: {"pykern": {"source_sha256": ...}}


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def lines(text: str) -> list[str]:
    """Text as the notebook format keeps it: a list of lines, each with its newline."""
    return text.splitlines(True)


def figure_png(value: Any) -> bytes | None:
    """The PNG of `value` where it is a matplotlib figure (rendered off-screen), else None."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return None
    if not isinstance(value, Figure):
        return None
    png = io.BytesIO()
    FigureCanvasAgg(value).print_png(png)
    return png.getvalue()


def display(value: Any, count: int) -> dict:
    """The `execute_result` output of a cell whose last expression is `value`."""
    data: dict[str, Any] = {"text/plain": lines(repr(value))}
    png = figure_png(value)
    if png is not None:
        data["image/png"] = base64.b64encode(png).decode("ascii")
    return {"output_type": "execute_result", "execution_count": count, "data": data,
            "metadata": {}}


def run_cell(source: str, name: str, namespace: dict, count: int) -> tuple[list[dict], bool]:
    """Runs one cell; its outputs, and whether it ran without an exception."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    tree = ast.parse(source, name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out, err = io.StringIO(), io.StringIO()
    value, failure = None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(tree, name, "exec"), namespace)  # noqa: S102 - the notebook's own code
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"),  # noqa: S307
                             namespace)
        except Exception as error:  # noqa: BLE001 - stored as the cell's error output
            failure = error
    outputs = [{"output_type": "stream", "name": stream, "text": lines(text.getvalue())}
               for stream, text in (("stdout", out), ("stderr", err)) if text.getvalue()]
    if failure is not None:
        outputs.append({"output_type": "error", "ename": type(failure).__name__,
                        "evalue": str(failure),
                        "traceback": traceback.format_exception(failure)})
    elif value is not None:
        outputs.append(display(value, count))
    return outputs, failure is None


def run_notebook(path: Path) -> int:
    """Runs every code cell of the notebook at `path` and writes their outputs into it; the
    number of the cell that raised, or -1 when all ran."""
    notebook = json.loads(path.read_text())
    namespace: dict = {"__name__": "__main__"}
    count = 0
    failed = -1
    for i, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if failed >= 0:  # after an error, as Jupyter leaves them: not run
            cell["outputs"], cell["execution_count"] = [], None
            continue
        count += 1
        cell["outputs"], ok = run_cell(source, f"<notebook-cell-{i}>", namespace, count)
        cell["execution_count"] = count
        cell.setdefault("metadata", {})[METADATA_KEY] = {"source_sha256": source_hash(source)}
        if not ok:
            failed = i
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    failed = run_notebook(args.notebook)
    if failed >= 0:
        print(f"{args.notebook}: cell {failed} raised; its error is stored, later cells were "
              "not run", file=sys.stderr)
        return 1
    print(f"{args.notebook}: every cell ran; outputs stored")
    return 0


if __name__ == "__main__":
    sys.exit(main())
