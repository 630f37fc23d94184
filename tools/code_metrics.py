"""The structure metrics of pykern's code: functions over 60 lines outside kernel bodies, kernel
bodies over 60 lines, kernels with eight or more numbered registers of one name (`c00 .. c33`),
and imports of pykern inside functions.

    python tools/code_metrics.py [ROOT]

A kernel body is a function decorated with `@pk.kernel` or `@pk.func`; a function that defines
kernels inside it is measured without their bodies. pykern/spirv/encoding/grammar.py (generated)
is left out.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

LIMIT = 60


def is_kernel(fn: ast.AST) -> bool:
    """Decorated with pk.kernel or pk.func (called or not)."""
    return isinstance(fn, ast.FunctionDef) and any(
        re.search(r"\b(kernel|func)\b", ast.unparse(d)) for d in fn.decorator_list)


def lines(node: ast.AST) -> int:
    return node.end_lineno - node.lineno + 1  # type: ignore[attr-defined]


def numbered_registers(fn: ast.FunctionDef) -> dict[str, int]:
    """name stem -> how many distinct numbered names (x0, x1, ...) the kernel assigns."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            m = re.fullmatch(r"([A-Za-z_]*?[A-Za-z_])(\d+)", node.id)
            if m:
                found.setdefault(m.group(1), set()).add(node.id)
    return {stem: len(names) for stem, names in found.items()}


def inside_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST | None:
    """The function `node` sits in (None at module or class level)."""
    p = parents.get(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
        p = parents.get(p)
    return p


def measure(root: Path) -> dict[str, list[str]]:
    report: dict[str, list[str]] = {"long functions": [], "long kernel bodies": [],
                                    "numbered registers": [], "imports inside functions": []}
    files = sorted([*root.joinpath("pykern").rglob("*.py"),
                    *root.joinpath("runtime").rglob("*.py")])
    for path in files:
        if path.name == "grammar.py":
            continue
        tree = ast.parse(path.read_text())
        where = path.relative_to(root)
        parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and is_kernel(node):
                if lines(node) > LIMIT:
                    report["long kernel bodies"].append(f"{where}:{node.lineno} {node.name} "
                                                        f"({lines(node)})")
                for stem, n in numbered_registers(node).items():
                    if n >= 8:
                        report["numbered registers"].append(f"{where}:{node.lineno} "
                                                            f"{node.name}: {stem}* x{n}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                enclosing = inside_function(node, parents)
                if enclosing is not None and is_kernel(enclosing):
                    continue
                own = lines(node) - sum(lines(k) for k in ast.walk(node)
                                        if k is not node and is_kernel(k))
                if own > LIMIT:
                    report["long functions"].append(f"{where}:{node.lineno} {node.name} ({own})")
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and \
                    inside_function(node, parents):
                if isinstance(node, ast.ImportFrom):
                    ours = node.level > 0 or (node.module or "").startswith("pykern")
                else:
                    ours = any(a.name.startswith("pykern") for a in node.names)
                if ours:
                    report["imports inside functions"].append(f"{where}:{node.lineno}")
    return report


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parents[1])
    for name, items in measure(root).items():
        print(f"{name}: {len(items)}")
        for item in items:
            print(f"  {item}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
