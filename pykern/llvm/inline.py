"""Device functions that contain a barrier or a subgroup exchange, inlined into the kernel's IR
before lowering, so that the region splitter (`pykern.llvm.regions`) sees every barrier and
exchange in the kernel's own body (`prepare`: exchanges and calls of exchanging functions are
first made statements of their own, `pykern.llvm.hoist`).

A call whose statement is the whole of it (`wait()`, `x = reduce(v)`) is replaced by its
function's body, the function's parameters and locals renamed to kernel locals of their own
(`_pk_inline<N>_<name>`); a call inside an expression (`mean = reduce(v) / n`, an `if`'s
condition, a loop's bounds) is first moved before its statement into a local of its own. A
function's `return` must be its last statement (a `return` elsewhere would need a jump the IR
has no statement for), and a call that runs only sometimes within its statement (the right of
`and`/`or`, a branch of a conditional expression) or again and again (a `while` condition)
cannot be moved; these are reported, as data, for a located error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TypeVar

from pykern import ir
from pykern.llvm.hoist import exchanging_functions, hoist_exchanges
from pykern.llvm.support import Unsupported
from pykern.passes.rewrite import rewrite

N = TypeVar("N", bound=ir.Node)


def prepare(kernel: ir.Kernel) -> tuple[ir.Kernel, Unsupported | None]:
    """`kernel` as the region splitter takes it: exchanges hoisted into statements of their
    own and every function with a barrier or an exchange inlined; the first construct that
    cannot be (None where every one could)."""
    inlined, problem = inline_barrier_calls(hoist_exchanges(kernel))
    if problem is not None:
        return kernel, problem
    return hoist_exchanges(inlined), None


def barrier_functions(kernel: ir.Kernel) -> set[str]:
    """The functions that contain a barrier or an exchange, or call one that does (callees
    come first)."""
    found: set[str] = exchanging_functions(kernel)
    for f in kernel.functions:
        if any(isinstance(n, ir.Barrier) or (isinstance(n, ir.Call) and n.function in found)
               for n in ir.walk(f)):
            found.add(f.name)
    return found


def inline_barrier_calls(kernel: ir.Kernel) -> tuple[ir.Kernel, Unsupported | None]:
    """`kernel` with every call of a barrier function inlined, and the first call that cannot
    be (None where every one could)."""
    names = barrier_functions(kernel)
    if not names:
        return kernel, None
    inliner = _Inliner(kernel, names)
    body = inliner.block(kernel.body)
    if inliner.problem is not None:
        return kernel, inliner.problem
    return replace(kernel, body=body, locals=kernel.locals + tuple(inliner.new_locals)), None


@dataclass
class _Inliner:
    kernel: ir.Kernel
    names: set[str]
    new_locals: list[ir.Local] = field(default_factory=list)
    problem: Unsupported | None = None
    count: int = 0

    def block(self, body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        return tuple(new for s in body for new in self.stmt(s))

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.Eval) and self.is_barrier_call(s.value):
            return self.inline(s.value, None)  # type: ignore[arg-type]
        if isinstance(s, ir.Assign) and self.is_barrier_call(s.value):
            return self.inline(s.value, s.name)  # type: ignore[arg-type]
        if isinstance(s, ir.If):
            pre, cond = self.hoist(s.cond)
            return pre + [replace(s, cond=cond, body=self.block(s.body),
                                  orelse=self.block(s.orelse))]
        if isinstance(s, ir.ForRange):  # the bounds are evaluated once, before the loop
            pre_start, start = self.hoist(s.start)
            pre_stop, stop = self.hoist(s.stop)
            pre_step, step = self.hoist(s.step)
            return pre_start + pre_stop + pre_step + [
                replace(s, start=start, stop=stop, step=step, body=self.block(s.body))]
        if isinstance(s, ir.While):
            self.refuse_in(s.cond, "the condition of a while loop")
            return [replace(s, body=self.block(s.body))]
        pre, new = self.hoist(s)
        return pre + [new]

    def hoist(self, node: N) -> tuple[list[ir.Stmt], N]:
        """`node` (a statement without nested blocks, or an expression) with each call of a
        barrier function in it replaced by a local of its value, and the statements that
        compute those locals first, innermost calls first (Python evaluates a call's
        arguments before it)."""
        for n in ir.walk(node):
            if isinstance(n, ir.Logical):
                self.refuse_in(n.rhs, "the right operand of 'and'/'or'")
            elif isinstance(n, ir.IfExp):
                self.refuse_in(n.then, "a conditional expression")
                self.refuse_in(n.orelse, "a conditional expression")
        pre: list[ir.Stmt] = []

        def visit(n: ir.Node) -> ir.Node:
            if not self.is_barrier_call(n):
                return n
            assert isinstance(n, ir.Call)
            self.count += 1
            name = f"_pk_inline{self.count}_value"
            self.new_locals.append(ir.Local(name=name, type=n.type, loc=n.loc))
            pre.extend(self.inline(n, name))
            return ir.LocalRef(name=name, type=n.type, loc=n.loc)

        return pre, rewrite(node, visit)

    def refuse_in(self, node: ir.Node, where: str) -> None:
        """Records the first barrier call in `node`, which runs only sometimes (or again and
        again) where it is: it cannot be moved before its statement."""
        nested = next((n for n in ir.walk(node) if self.is_barrier_call(n)), None)
        if nested is not None and self.problem is None:
            self.problem = Unsupported(nested.loc, "a call of a @pk.func with pk.barrier() in "
                                                   f"{where}")

    def is_barrier_call(self, node: ir.Node) -> bool:
        return isinstance(node, ir.Call) and node.function in self.names

    def inline(self, call: ir.Call, target: str | None) -> list[ir.Stmt]:
        fn = next(f for f in self.kernel.functions if f.name == call.function)
        self.count += 1
        prefix = f"_pk_inline{self.count}_"
        renamed: dict[str, str] = {}
        for local in (*fn.params, *fn.locals):
            if local.name not in renamed:
                renamed[local.name] = prefix + local.name
                self.new_locals.append(replace(local, name=prefix + local.name))
        stmts: list[ir.Stmt] = [ir.Assign(name=renamed[p.name], value=a, loc=call.loc)
                                for p, a in zip(fn.params, call.args, strict=True)]
        body = [rewrite(s, lambda n: _rename(n, renamed)) for s in fn.body]
        if body and isinstance(body[-1], ir.Return):
            last = body.pop()
            assert isinstance(last, ir.Return)
            if last.value is not None:
                body.append(ir.Assign(name=target, value=last.value, loc=last.loc)
                            if target is not None else ir.Eval(value=last.value, loc=last.loc))
        early = next((n for s in body for n in ir.walk(s) if isinstance(n, ir.Return)), None)
        if early is not None and self.problem is None:
            self.problem = Unsupported(early.loc, "a 'return' before the end of a @pk.func "
                                                  "with pk.barrier() or a subgroup operation")
        return stmts + list(self.block(tuple(body)))


def _rename(node: ir.Node, names: dict[str, str]) -> ir.Node:
    if isinstance(node, ir.LocalRef) and node.name in names:
        return replace(node, name=names[node.name])
    if isinstance(node, ir.Assign) and node.name in names:
        return replace(node, name=names[node.name])
    if isinstance(node, ir.ForRange) and node.var in names:
        return replace(node, var=names[node.var])
    return node
