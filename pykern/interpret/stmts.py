"""IR statements to Python source lines, and a whole kernel to the source of its module.

The module defines `bind(...)`, called once per launch with the launch's values (buffers,
geometry, scalars, grid, the out-of-bounds reporter) as keyword arguments; it returns
`invocation(_gid0, _gid1, _gid2, _lid0, _lid1, _lid2, _grp0, _grp1, _grp2)`, which runs the
kernel body once. Launch values are closure variables of `invocation`, the fastest names after
its own locals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import ir
from ..dtypes import DType
from . import names
from .exprs import ExprCodegen
from .names import AccessSite, CodegenState

INDENT = "    "


@dataclass(frozen=True)
class GeneratedKernel:
    """The source of one kernel's module and what the runner must know to call it."""

    source: str
    bind_params: tuple[str, ...]
    sites: tuple[AccessSite, ...]
    lockstep: bool  # True once the body has barriers: `invocation` is then a generator


class StmtCodegen:
    """Turns the statements of one kernel into indented Python lines."""

    def __init__(self, kernel: ir.Kernel, state: CodegenState):
        self.state = state
        self.exprs = ExprCodegen(kernel, state)
        self.barriers = 0  # a barrier statement would emit `yield` and count itself here

    def block(self, stmts: tuple[ir.Stmt, ...], depth: int) -> list[str]:
        lines: list[str] = []
        for s in stmts:
            method = _DISPATCH.get(type(s))
            if method is None:
                raise AssertionError(f"no interpretation for IR statement {type(s).__name__}")
            out = method(self, s, depth)
            if s.loc.line:  # where it came from, for a reader of the generated source
                out[0] += f"  # line {s.loc.line}"
            lines += out
        return lines or [INDENT * depth + "pass"]

    def expr(self, e: ir.Expr) -> str:
        return self.exprs.expr(e)

    # ------------------------------------------------------------ one method per node class

    def _assign(self, s: ir.Assign, depth: int) -> list[str]:
        return [INDENT * depth + f"{names.local(s.name)} = {self.expr(s.value)}"]

    def _store(self, s: ir.Store, depth: int) -> list[str]:
        # the indices before the value, as the SPIR-V lowering evaluates them
        pad = INDENT * depth
        addr, inside, fail = self.exprs.address(s.array, s.indices, s.loc)
        return [pad + f"if not {inside}:",
                pad + INDENT + fail,
                pad + f"{names.buffer(s.array)}[{addr}] = {self.expr(s.value)}"]

    def _if(self, s: ir.If, depth: int) -> list[str]:
        pad = INDENT * depth
        lines = [pad + f"if {self.expr(s.cond)}:"] + self.block(s.body, depth + 1)
        if s.orelse:
            lines += [pad + "else:"] + self.block(s.orelse, depth + 1)
        return lines

    def _for_range(self, s: ir.ForRange, depth: int) -> list[str]:
        # Python's range already has the IR's semantics: bounds evaluated once, in order, a
        # hidden counter, the variable left at the last value taken (unchanged if none)
        start, stop, step = (self.expr(e) for e in (s.start, s.stop, s.step))
        if isinstance(s.step, ir.Const):  # the frontend refuses a constant zero step
            iterable = f"range({start}, {stop})" if s.step.value == 1 else \
                f"range({start}, {stop}, {step})"
        else:
            iterable = f"_range({start}, {stop}, {step})"
        return ([INDENT * depth + f"for {names.local(s.var)} in {iterable}:"]
                + self.block(s.body, depth + 1))

    def _while(self, s: ir.While, depth: int) -> list[str]:
        return [INDENT * depth + f"while {self.expr(s.cond)}:"] + self.block(s.body, depth + 1)

    def _break(self, s: ir.Break, depth: int) -> list[str]:
        return [INDENT * depth + "break"]

    def _continue(self, s: ir.Continue, depth: int) -> list[str]:
        return [INDENT * depth + "continue"]

    def _return(self, s: ir.Return, depth: int) -> list[str]:
        return [INDENT * depth + "return"]


_DISPATCH: dict[type, Callable[[StmtCodegen, ir.Stmt, int], list[str]]] = {
    ir.Assign: StmtCodegen._assign,
    ir.Store: StmtCodegen._store,
    ir.If: StmtCodegen._if,
    ir.ForRange: StmtCodegen._for_range,
    ir.While: StmtCodegen._while,
    ir.Break: StmtCodegen._break,
    ir.Continue: StmtCodegen._continue,
    ir.Return: StmtCodegen._return,
}


def bind_params(kernel: ir.Kernel) -> tuple[str, ...]:
    """The names `bind` takes, in order: what the runner must supply for a launch."""
    out = [names.OUT_OF_BOUNDS, *names.GRID, *names.NUM_GROUPS]
    for p in kernel.params:
        if not p.is_array:
            out.append(names.scalar(p.name))
            continue
        a = p.name
        ndim = p.type.ndim  # type: ignore[union-attr]
        out += [names.buffer(a), names.offset(a), names.length(a)]
        out += [names.shape(a, k) for k in range(ndim)]
        out += [names.stride(a, k) for k in range(ndim)]
    return tuple(out)


def zero(t: DType, state: CodegenState) -> str:
    """The value a local has before its first assignment (the GPU's is undefined)."""
    if t.is_float:
        return state.float_constant(0.0, t)
    return "False" if t.kind == "b" else "0"


def generate(kernel: ir.Kernel) -> GeneratedKernel:
    """The Python module source that interprets `kernel`."""
    state = CodegenState()
    stmts = StmtCodegen(kernel, state)
    inner = INDENT * 2
    body = [inner + f"{names.local(v.name)} = {zero(v.type, state)}" for v in kernel.locals]
    body += stmts.block(kernel.body, 2)
    params = bind_params(kernel)
    ids = ", ".join(names.GLOBAL_IDS + names.LOCAL_IDS + names.GROUP_IDS)
    header = [
        f"# kernel {kernel.name!r} from {kernel.loc}, workgroup {kernel.workgroup}, as Python",
        "# by pykern.interpret: ints are Python ints wrapped to their width, floats numpy scalars",
        "# of their type; an array is a flat buffer a_NAME indexed at off_NAME + sum(i * stride).",
        *(["", *state.constant_lines()] if state.constants else []),
        "",
        "",
        *wrap_call("def bind(", params, "):"),
        INDENT + f"def invocation({ids}):",
    ]
    source = "\n".join(header + body + [INDENT + "return invocation", ""])
    return GeneratedKernel(source=source, bind_params=params, sites=tuple(state.sites),
                           lockstep=stmts.barriers > 0)


def wrap_call(opening: str, args: tuple[str, ...], closing: str, width: int = 100) -> list[str]:
    """`opening` + the comma-separated `args` + `closing`, over several lines when long."""
    lines = [opening]
    for k, arg in enumerate(args):
        text = arg + (", " if k < len(args) - 1 else "")
        if len(lines[-1]) + len(text.rstrip()) > width:
            lines[-1] = lines[-1].rstrip()
            lines.append(" " * len(opening))
        lines[-1] += text
    lines[-1] += closing
    return lines
