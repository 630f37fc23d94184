"""The shape of the code of `pykern/` and `runtime/`, measured with `ast` (nothing is run).

- no function outside a kernel body is longer than 60 lines (a long one is several steps
  that want names of their own);
- at most 6 kernel bodies (functions decorated `@pk.kernel` or `@pk.kernel(...)`) are longer
  than 60 lines: a kernel is one GPU program and may need room, but few should;
- no kernel holds eight or more numbered registers of one name (names it assigns, like
  `c00..c33` or `seg2..seg16`; its parameters are bindings): such a run is an array unrolled
  by hand, which a loop over a tuple or a `@pk.func` says once;
- at most 30 imports of pykern sit inside functions (each a cycle held apart at run time).

The length of a function is the lines of its `def` statement, `end_lineno - lineno + 1`
(decorators not counted); a function that builds a kernel is measured without the lines of
the kernel body it holds, which is judged as a kernel. Each failure lists its offenders.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("pykern", "runtime")

LONGEST_FUNCTION = 60
LONG_KERNELS_ALLOWED = 6
REGISTERS_ALLOWED = 7  # numbered locals of one prefix in one kernel
FUNCTION_IMPORTS_ALLOWED = 30

NUMBERED = re.compile(r"^([A-Za-z_]+)\d+$")
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def sources() -> list[Path]:
    """The Python files of the measured folders, sorted."""
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def parsed() -> Iterator[tuple[str, ast.Module]]:
    """(path relative to the repository, syntax tree) for each measured file."""
    for path in sources():
        yield str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path))


def functions(tree: ast.Module) -> Iterator[FunctionNode]:
    """Every function of `tree`, nested ones and methods included."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def length(fn: FunctionNode) -> int:
    """Lines of the `def` statement, decorators not counted."""
    return (fn.end_lineno or fn.lineno) - fn.lineno + 1


def is_kernel(fn: FunctionNode) -> bool:
    """Whether `fn` is decorated `@pk.kernel` or `@pk.kernel(...)`."""
    for decorator in fn.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (isinstance(target, ast.Attribute) and target.attr == "kernel"
                and isinstance(target.value, ast.Name) and target.value.id == "pk"):
            return True
    return False


def kernels() -> Iterator[tuple[str, FunctionNode]]:
    """(file, function) for each kernel body."""
    for name, tree in parsed():
        for fn in functions(tree):
            if is_kernel(fn):
                yield name, fn


def inside_kernel(tree: ast.Module) -> set[int]:
    """ids of the functions of `tree` that are kernels or nested in one."""
    found: set[int] = set()
    for fn in functions(tree):
        if is_kernel(fn):
            found.update(id(inner) for inner in functions(fn))  # type: ignore[arg-type]
    return found


def length_outside_kernels(fn: FunctionNode) -> int:
    """Lines of `fn` less those of the kernel bodies it builds (each judged as a kernel)."""
    kernel_lines: set[int] = set()
    for inner in functions(fn):  # type: ignore[arg-type]
        if inner is not fn and is_kernel(inner):
            first = min([inner.lineno] + [d.lineno for d in inner.decorator_list])
            kernel_lines.update(range(first, (inner.end_lineno or inner.lineno) + 1))
    return length(fn) - len(kernel_lines)


def long_functions() -> list[str]:
    """Functions outside kernel bodies longer than the limit, as `file:line name (lines)`; a
    function that builds a kernel is measured without the kernel's body."""
    found = []
    for name, tree in parsed():
        kernel_parts = inside_kernel(tree)
        for fn in functions(tree):
            lines = length_outside_kernels(fn)
            if id(fn) not in kernel_parts and lines > LONGEST_FUNCTION:
                found.append(f"{name}:{fn.lineno} {fn.name} ({lines} lines)")
    return sorted(found)


def long_kernels() -> list[str]:
    """Kernel bodies longer than the limit, as `file:line name (lines)`."""
    return sorted(f"{name}:{fn.lineno} {fn.name} ({length(fn)} lines)"
                  for name, fn in kernels() if length(fn) > LONGEST_FUNCTION)


def local_names(fn: FunctionNode) -> set[str]:
    """The names `fn` assigns (its registers). Its parameters are not counted: a kernel's are
    its bindings (buffers and scalars, as many as the launch passes), not registers."""
    return {node.id for node in ast.walk(fn)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def register_runs() -> list[str]:
    """Kernels with too many numbered locals of one prefix, as `file:line name prefix: names`."""
    found = []
    for name, fn in kernels():
        groups: dict[str, list[str]] = defaultdict(list)
        for local in local_names(fn):
            match = NUMBERED.match(local)
            if match:
                groups[match.group(1)].append(local)
        for prefix, names in sorted(groups.items()):
            if len(names) > REGISTERS_ALLOWED:
                found.append(f"{name}:{fn.lineno} {fn.name} {prefix}*: {sorted(names)}")
    return sorted(found)


def is_pykern_import(node: ast.AST) -> bool:
    """Whether `node` imports pykern (or, relatively, a sibling module)."""
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").startswith("pykern")
    if isinstance(node, ast.Import):
        return any(alias.name.startswith("pykern") for alias in node.names)
    return False


def function_level_imports() -> list[str]:
    """Imports of pykern inside a function body, as `file:line`."""
    found = set()
    for name, tree in parsed():
        for fn in functions(tree):
            for node in ast.walk(fn):
                if is_pykern_import(node):
                    found.add(f"{name}:{node.lineno}")
    return sorted(found)


def test_the_measures_see_the_code():
    """The walk finds the files, the functions and the kernels it is meant to judge."""
    assert len(sources()) > 300
    assert sum(1 for _ in kernels()) > 50


def test_no_long_function_outside_kernels():
    found = long_functions()
    assert not found, f"{len(found)} functions over {LONGEST_FUNCTION} lines:\n" + "\n".join(found)


def test_few_long_kernels():
    found = long_kernels()
    assert len(found) <= LONG_KERNELS_ALLOWED, (
        f"{len(found)} kernels over {LONGEST_FUNCTION} lines (at most {LONG_KERNELS_ALLOWED}):\n"
        + "\n".join(found))


def test_no_kernel_unrolls_registers_by_hand():
    found = register_runs()
    assert not found, (f"kernels with more than {REGISTERS_ALLOWED} numbered locals of one "
                       "name:\n" + "\n".join(found))


def test_few_function_level_imports():
    found = function_level_imports()
    assert len(found) <= FUNCTION_IMPORTS_ALLOWED, (
        f"{len(found)} imports of pykern inside functions (at most "
        f"{FUNCTION_IMPORTS_ALLOWED}):\n" + "\n".join(found))
