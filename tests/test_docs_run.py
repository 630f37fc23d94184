"""Every ```python block of README.md and docs/*.md runs as written, and prints what it shows.

The conventions (docs/testing.md, "Code blocks in the documentation", says them to users):

- a ```python block is a complete program: it runs on its own, in a fresh namespace, in the
  order of the file; the blocks of one file share one process, so a file costs one start;
- a ```text block right after it (blank lines between are allowed) is what the program prints,
  compared line by line (trailing spaces ignored); `...` in it stands for any text, as in
  doctest's ELLIPSIS;
- `<!-- needs: FEATURE -->` on the line before the fence marks a block that needs hardware:
  FEATURE is `gpu` (a discrete or integrated GPU) or a feature of `pk.get_device().info
  .features` (`cooperative_matrix`, `bfloat16`, ...); where the current device lacks it the
  block is skipped, with the reason, and shows as skipped here.

Run as a script (`python tests/test_docs_run.py FILE.md OUT.json`), this module is the child
process that runs one file's blocks and writes what each did.
"""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import re
import runpy
import subprocess
import sys
import tempfile
import textwrap
import traceback
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^([ \t]*)```([\w+-]*)[ \t]*$")  # indented too (in a list item)
NEEDS = re.compile(r"^<!--\s*needs:\s*([\w, ]+?)\s*-->\s*$")
GPU_KINDS = ("discrete", "integrated", "virtual")


@dataclass
class Block:
    """A ```python block: its source, the line of its fence, what it should print (None when
    no ```text block follows) and the features it needs."""

    source: str
    line: int
    expected: str | None
    needs: tuple[str, ...]


def fenced(text: str) -> list[tuple[str, int, str, tuple[str, ...]]]:
    """Every fenced block of `text`: (language, line of the opening fence, body, needs)."""
    lines = text.splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        start = i
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            i += 1
        previous = NEEDS.match(lines[start - 1].strip()) if start else None
        needs = tuple(n.strip() for n in previous.group(1).split(",")) if previous else ()
        body = textwrap.dedent("\n".join(lines[start + 1:i]) + "\n")
        found.append((opening.group(2), start + 1, body, needs))
        i += 1
    return found


def python_blocks(text: str) -> list[Block]:
    """The ```python blocks of `text`, each with the ```text block that follows it, if any."""
    blocks: list[Block] = []
    found = fenced(text)
    lines = text.splitlines()
    for k, (language, line, body, needs) in enumerate(found):
        if language != "python":
            continue
        expected = None
        if k + 1 < len(found) and found[k + 1][0] == "text":
            closing = line + body.count("\n") + 1  # the closing fence's line (1-based)
            between = lines[closing:found[k + 1][1] - 1]
            if all(not s.strip() for s in between):
                expected = found[k + 1][2]
        blocks.append(Block(body, line, expected, needs))
    return blocks


def output_matches(expected: str, printed: str) -> bool:
    """Whether `printed` is `expected`, trailing spaces aside, where `...` matches anything."""
    def tidy(s: str) -> str:
        return "\n".join(line.rstrip() for line in s.strip("\n").splitlines())

    pattern = ".*?".join(re.escape(piece) for piece in tidy(expected).split("..."))
    return re.fullmatch(pattern, tidy(printed), re.S) is not None


# ---------------------------------------------------------------- the child process

def missing_feature(needs: tuple[str, ...]) -> str | None:
    """Why the current device cannot run a block that needs `needs`, or None if it can."""
    import pykern as pk

    info = pk.get_device().info
    for need in needs:
        if need == "gpu":
            ok = info.kind in GPU_KINDS
        else:
            ok = bool(getattr(info.features, need))  # an unknown name is a mistake: it raises
        if not ok:
            return f"needs {need}, which {info.name} lacks"
    return None


def run_block(block: Block, path: pathlib.Path) -> dict:
    """Runs one block as the script `path`; what it printed, or the traceback it raised."""
    import pykern as pk

    skip = missing_feature(block.needs)
    if skip is not None:
        return {"skip": skip}
    path.write_text(block.source)
    device = pk.get_device().info.index
    printed = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stdout(printed):
            runpy.run_path(str(path), run_name="__main__")
    except BaseException:  # noqa: BLE001 - reported to the test, which fails
        error = traceback.format_exc()
    with contextlib.suppress(Exception):
        pk.sync()
    if pk.get_device().info.index != device:
        pk.set_device(device)  # a block that chose a device does not choose for the next
    return {"printed": printed.getvalue(), "error": error}


def child_main(markdown: str, out: str) -> None:
    blocks = python_blocks(pathlib.Path(markdown).read_text())
    results = []
    with tempfile.TemporaryDirectory() as folder:
        stem = pathlib.Path(markdown).stem
        for n, block in enumerate(blocks):
            script = pathlib.Path(folder) / f"{stem}_block{n}_line{block.line}.py"
            results.append(run_block(block, script))
    pathlib.Path(out).write_text(json.dumps(results))


# ---------------------------------------------------------------- the tests

_RESULTS: dict[pathlib.Path, list[dict]] = {}


def results_of(document: pathlib.Path, tmp: pathlib.Path) -> list[dict]:
    """What each block of `document` did, from one child process (run once per file)."""
    if document not in _RESULTS:
        out = tmp / f"{document.stem}.json"
        if not (tmp / "examples").exists():  # blocks import examples/ as from a checkout
            (tmp / "examples").symlink_to(ROOT / "examples")
        child = subprocess.run([sys.executable, __file__, str(document), str(out)],
                               capture_output=True, text=True, timeout=600, cwd=tmp)
        assert child.returncode == 0 and out.exists(), \
            f"running the blocks of {document.name} failed:\n{child.stderr[-4000:]}"
        _RESULTS[document] = json.loads(out.read_text())
    return _RESULTS[document]


CASES = [(doc, n) for doc in DOCUMENTS for n in range(len(python_blocks(doc.read_text())))]


@pytest.mark.parametrize(("document", "n"), CASES,
                         ids=[f"{d.relative_to(ROOT)}:{python_blocks(d.read_text())[n].line}"
                              for d, n in CASES])
def test_block_runs_and_prints_what_it_shows(document, n, tmp_path_factory):
    block = python_blocks(document.read_text())[n]
    result = results_of(document, tmp_path_factory.getbasetemp())[n]
    where = f"{document.relative_to(ROOT)}:{block.line}"
    if "skip" in result:
        pytest.skip(f"{where} {result['skip']}")
    assert result["error"] is None, f"{where} raised:\n{result['error']}\n{block.source}"
    if block.expected is not None:
        assert output_matches(block.expected, result["printed"]), (
            f"{where} printed:\n{result['printed']}\nbut the document shows:\n{block.expected}")


def test_the_extractor_reads_outputs_and_needs():
    text = ("<!-- needs: gpu -->\n```python\nprint(1)\n```\n\n```text\n1\n```\n"
            "```python\nx = 2\n```\nprose\n```text\nnot output\n```\n"
            "- a list item:\n\n  ```python\n  if True:\n      y = 3\n  ```\n")
    first, second, third = python_blocks(text)
    assert third.source == "if True:\n    y = 3\n"
    assert (first.source, first.line, first.needs) == ("print(1)\n", 2, ("gpu",))
    assert first.expected == "1\n"
    assert (second.expected, second.needs) == (None, ())
    assert output_matches("a ... c\n", "a b b c  \n") and not output_matches("a\n", "b\n")
    assert output_matches("x\n...\nz", "x\ny1\ny2\nz\n")


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(markdown: pathlib.Path) -> set[str]:
    """The anchors GitHub gives the headings of `markdown` (lower case, punctuation dropped,
    spaces as hyphens; a repeated heading gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    in_fence = False
    for line in markdown.read_text().splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(ROOT)) for d in DOCUMENTS])
def test_relative_links_point_to_files_and_headings_that_exist(document):
    broken = []
    prose = re.sub(r"^```.*?^```", "", document.read_text(), flags=re.S | re.M)
    prose = re.sub(r"`[^`]*`", "", prose)  # code spans: kernel[grid](*args) is no link
    for target in LINK.findall(prose):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto: ...: not checked here
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        if not linked.exists():
            broken.append(f"{target}: no file {linked.relative_to(ROOT)}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    assert not broken, f"{document.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


if __name__ == "__main__":
    child_main(sys.argv[1], sys.argv[2])
