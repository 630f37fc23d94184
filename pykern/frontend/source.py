"""Getting a kernel's syntax tree, where it came from, and the names it can see."""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pykern.errors import CompileError
from pykern.ir import Loc
from pykern.frontend.depth import check_nesting

_MISSING = object()


@dataclass(frozen=True)
class KernelSource:
    """The parsed function plus what is needed to report errors in the user's coordinates."""

    fn: Callable
    tree: ast.FunctionDef
    text: str  # the dedented source, part of the cache key
    file: str
    line_offset: int  # add to ast line numbers to get file line numbers
    col_offset: int  # indentation removed by dedent

    @cached_property
    def nesting_depth(self) -> int:
        """The depth of the function's syntax tree, walked once per source (every variant and
        specialisation translates the same tree); a located CompileError when it is deeper than
        a kernel may nest (`depth.check_nesting`)."""
        return check_nesting(self.tree, self.error)

    def loc(self, node: ast.AST) -> Loc:
        return Loc(self.file, getattr(node, "lineno", 1) + self.line_offset,
                   getattr(node, "col_offset", 0) + self.col_offset + 1)

    def error(self, node: ast.AST | Loc, message: str, cls: type[CompileError] = CompileError
              ) -> CompileError:
        """A CompileError located at `node`, showing the source line with a caret."""
        loc = node if isinstance(node, Loc) else self.loc(node)
        line = linecache.getline(loc.file, loc.line) or None
        return cls(message, loc.file, loc.line, loc.col, line)

    def lookup(self, name: str) -> Any:
        """A non-local name as the function sees it: closure, then globals, then builtins.
        Returns `_MISSING` when it is not defined."""
        code = self.fn.__code__
        if name in code.co_freevars and self.fn.__closure__ is not None:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            try:
                return cell.cell_contents
            except ValueError:
                return _MISSING
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return getattr(builtins, name, _MISSING)


def is_missing(value: object) -> bool:
    return value is _MISSING


def check_function(fn: object, decorator: str) -> None:
    """Raises unless `fn` can be compiled: TypeError naming what was passed when it is not a
    Python function (an int, a class, a builtin, a bound method, ...), a located CompileError
    for a lambda (its body is an expression, not statements). Reads no source."""
    if inspect.isfunction(fn):
        if fn.__name__ == "<lambda>":
            raise _lambda_error(fn, decorator)
        return
    raise TypeError(f"{decorator} needs a function defined with def, got {_what(fn)}")


def _what(obj: object) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if inspect.ismethod(obj):
        return f"the bound method {name} (decorate a plain function: kernels have no self)"
    if inspect.isclass(obj):
        return f"the class {name}"
    if inspect.isbuiltin(obj):
        return f"the builtin {name}"
    return f"{type(obj).__name__} {obj!r:.60}"


def _lambda_error(fn: Callable, decorator: str) -> CompileError:
    code = fn.__code__  # type: ignore[attr-defined]
    line = linecache.getline(code.co_filename, code.co_firstlineno) or None
    # the `lambda` keyword is the last one before where its body starts
    positions = code.co_positions() if hasattr(code, "co_positions") else ()  # Python 3.11+
    body_col = min((c for ln, _, c, end in positions
                    if ln == code.co_firstlineno and c is not None and end), default=None)
    col = (line or "").rfind("lambda", 0, body_col) + 1 or 1
    return CompileError(f"{decorator} needs a function defined with def, not a lambda",
                        code.co_filename, code.co_firstlineno, col, line)


def _source_lines(fn: Callable) -> tuple[list[str], int, str] | None:
    """`fn`'s source lines (from its first decorator to its last line of code), its first
    line's number and its file, as `inspect.getsourcelines` finds them but from the line numbers
    the code object carries, without tokenizing the file from the function on (which was half
    of a warm compile). None where that does not apply (no file lines, a code object without
    positions): `inspect` then decides."""
    code = getattr(fn, "__code__", None)
    file = getattr(code, "co_filename", "")
    if code is None or not hasattr(code, "co_positions") or not file or file.startswith("<") \
            and not file.startswith("<ipython-input"):
        return None
    linecache.checkcache(file)  # a file edited since: its new text, as inspect reads it
    lines = linecache.getlines(file, getattr(fn, "__globals__", None))
    first = code.co_firstlineno
    last = _last_line(code)
    if not lines or last is None or not 1 <= first <= last <= len(lines):
        return None
    # statements that make no code (a bare annotation, `pass`) may follow the last that
    # does: the block goes on to the last line of code or comment (as inspect keeps them)
    # indented deeper than its first, up to code back at that indentation
    indent = len(lines[first - 1]) - len(lines[first - 1].lstrip())
    n = last
    while n < len(lines):
        line = lines[n]
        text = line.strip()
        if text:
            deeper = len(line) - len(line.lstrip()) > indent
            if not deeper and not text.startswith("#"):
                break
            if deeper:
                last = n + 1
        n += 1
    block = lines[first - 1:last]
    if not block[-1].endswith("\n"):
        block[-1] += "\n"
    return block, first, file


def _last_line(code: Any) -> int | None:
    """The last line any instruction of `code` (or of a function or class inside it) spans."""
    last = None
    for _, end, _, _ in code.co_positions():
        if end is not None and (last is None or end > last):
            last = end
    for const in code.co_consts:
        if hasattr(const, "co_positions"):
            inner = _last_line(const)
            if inner is not None and (last is None or inner > last):
                last = inner
    return last


def load_source(fn: Callable) -> KernelSource:
    """Parses `fn`'s source. Works for functions defined inside other functions (dedented)."""
    check_function(fn, "a kernel or @pk.func")
    try:
        found = _source_lines(fn)
        if found is None:
            lines, first_line = inspect.getsourcelines(fn)
            file = inspect.getsourcefile(fn) or inspect.getfile(fn)
        else:
            lines, first_line, file = found
    except (OSError, TypeError) as e:
        code = getattr(fn, "__code__", None)
        raise CompileError(
            f"cannot read the source of {fn.__qualname__} ({e}): pykern compiles a kernel or "
            "@pk.func from its source text, which Python keeps only for code in a file or a "
            "Jupyter/IPython cell (inspect.getsource, as Triton, Warp and Taichi read it too); "
            "code typed at the plain python prompt, given to `python -c` or run by exec() of a "
            "string has none. Put it in a .py file (or a notebook cell) and run that "
            "(docs/language.md, 'Where kernels can be defined')",
            getattr(code, "co_filename", "<unknown>"), getattr(code, "co_firstlineno", 0)
        ) from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip())
    try:
        try:
            module = ast.parse(text)
        except SyntaxError:
            if found is None:
                raise
            # the lines the code object names did not make the whole function (a string
            # literal running back to the margin, say): as inspect reads it
            lines, first_line = inspect.getsourcelines(fn)
            text = textwrap.dedent("".join(lines))
            module = ast.parse(text)
    except (SyntaxError, RecursionError, MemoryError) as e:
        # Python compiled the function, so this is source that changed on disk since, or
        # nesting too deep for the parser at this recursion limit
        why = "an expression is nested too deeply" if not isinstance(e, SyntaxError) else \
            f"its source does not parse ({e.msg})"
        raise CompileError(f"cannot compile {fn.__qualname__}: {why}", file, first_line,
                           indent + 1, lines[0]) from None
    tree = next((n for n in module.body if isinstance(n, (ast.FunctionDef,
                                                          ast.AsyncFunctionDef))), None)
    if tree is None:
        raise CompileError(f"cannot compile {fn.__qualname__}: no function definition found at "
                           "its source lines", file, first_line, indent + 1, lines[0])
    src = KernelSource(fn, tree, text, file, first_line - 1, indent)  # type: ignore[arg-type]
    if isinstance(tree, ast.AsyncFunctionDef):
        raise src.error(tree, "a kernel cannot be 'async def'")
    return src
