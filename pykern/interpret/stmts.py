"""IR statements to indented Python source lines: one method per node class, dispatched by a
table."""

from __future__ import annotations

from collections.abc import Callable

from pykern import ir
from pykern.interpret import names, tile_codegen
from pykern.interpret.walk import synchronises
from pykern.interpret.exprs import ExprCodegen
from pykern.interpret.names import AssertSite

INDENT = "    "


class StmtCodegen:
    """Turns the statements of one kernel (and of its device functions) into Python lines."""

    def __init__(self, exprs: ExprCodegen):
        self.exprs = exprs
        self.state = exprs.state

    def block(self, stmts: tuple[ir.Stmt, ...], depth: int) -> list[str]:
        lines: list[str] = []
        for s in stmts:
            method = _DISPATCH.get(type(s))
            if method is None:
                raise AssertionError(f"no interpretation for IR statement {type(s).__name__}")
            out = method(self, s, depth)
            if s.loc.line:  # where it came from, for a reader of the generated source
                out[0] += f"  # line {int(s.loc.line)}"
            lines += out
        return lines or [INDENT * depth + "pass"]

    def expr(self, e: ir.Expr) -> str:
        return self.exprs.expr(e)

    # ------------------------------------------------------------ one method per node class

    def _assign(self, s: ir.Assign, depth: int) -> list[str]:
        return [INDENT * depth + f"{names.local(s.name)} = {self.expr(s.value)}"]

    def _store(self, s: ir.Store, depth: int) -> list[str]:
        # the value before the indices, as Python (and the compiled backends) evaluate them
        pad = INDENT * depth
        value = self.state.temp()
        first = pad + f"{value} = {self.expr(s.value)}"
        addr, allowed, fail = self.exprs.address(s.array, s.indices, s.loc)
        buffer = self.exprs.geometry[s.array].buffer
        return [first,
                pad + f"if not ({allowed}):",
                pad + INDENT + fail,
                pad + f"{buffer}[{addr}] = {value}"]

    def _coop_store(self, s: ir.CoopStore, depth: int) -> list[str]:
        return [INDENT * depth + line for line in tile_codegen.store(self.exprs, s)]

    def _eval(self, s: ir.Eval, depth: int) -> list[str]:
        return [INDENT * depth + self.expr(s.value)]

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
        return self.tracked(s, [f"for {names.local(s.var)} in {iterable}:"], depth)

    def _while(self, s: ir.While, depth: int) -> list[str]:
        if not self.synchronising(s):
            return [INDENT * depth + f"while {self.expr(s.cond)}:"] + \
                self.block(s.body, depth + 1)
        return self.tracked(s, [], depth, cond=s.cond)

    def synchronising(self, s: ir.Stmt) -> bool:
        return synchronises((s,), self.exprs.lockstep_functions)

    def tracked(self, s: ir.ForRange | ir.While, header: list[str], depth: int,
                cond: ir.Expr | None = None) -> list[str]:
        """A loop whose body synchronises, keeping the invocation's iteration in its progress
        path (pushed before, counted at each test of the loop, popped after): the runner
        answers a subgroup's invocations in the same iteration together, and those that left
        the loop only once the others have."""
        pad, inner = INDENT * depth, INDENT * (depth + 1)
        if not self.synchronising(s):
            return [pad + header[0]] + self.block(s.body, depth + 1)
        path = names.PATH
        lines = [pad + f"{path}.append({self.state.position()})", pad + f"{path}.append(0)"]
        if cond is None:
            lines += [pad + header[0], inner + f"{path}[-1] += 1"]
        else:  # the condition may synchronise too: it is tested in the loop's own iteration
            lines += [pad + "while True:", inner + f"{path}[-1] += 1",
                      inner + f"if not ({self.expr(cond)}):", inner + INDENT + "break"]
        lines += self.block(s.body, depth + 1)
        return lines + [pad + f"del {path}[-2:]"]

    def _break(self, s: ir.Break, depth: int) -> list[str]:
        return [INDENT * depth + "break"]

    def _continue(self, s: ir.Continue, depth: int) -> list[str]:
        return [INDENT * depth + "continue"]

    def _return(self, s: ir.Return, depth: int) -> list[str]:
        value = "" if s.value is None else " " + self.expr(s.value)
        return [INDENT * depth + "return" + value]

    def _barrier(self, s: ir.Barrier, depth: int) -> list[str]:
        # the runner resumes the workgroup's invocations once all of them got to a barrier
        return [INDENT * depth + "yield None  # barrier"]

    def _assert(self, s: ir.Assert, depth: int) -> list[str]:
        self.state.asserts.append(AssertSite(s.message, s.loc))
        site = len(self.state.asserts) - 1
        pad = INDENT * depth
        return [pad + f"if not {self.expr(s.cond)}:",
                pad + INDENT + f"{names.ASSERT_FAILED}({site}, {names.INVOCATION})"]


_DISPATCH: dict[type, Callable[[StmtCodegen, ir.Stmt, int], list[str]]] = {
    ir.Assign: StmtCodegen._assign,
    ir.Store: StmtCodegen._store,
    ir.Eval: StmtCodegen._eval,
    ir.If: StmtCodegen._if,
    ir.ForRange: StmtCodegen._for_range,
    ir.While: StmtCodegen._while,
    ir.Break: StmtCodegen._break,
    ir.Continue: StmtCodegen._continue,
    ir.Return: StmtCodegen._return,
    ir.Barrier: StmtCodegen._barrier,
    ir.Assert: StmtCodegen._assert,
    ir.CoopStore: StmtCodegen._coop_store,
}
