"""Deep expressions: how deep a kernel may nest, and the bounded depth handed to the backends.

Python's parser accepts a left-deep 600-term sum (a 600-level tree), but every traversal of
the compiler recurses over expressions, and the interpreter's generated Python may nest at
most 200 parentheses. So:

- the frontend translates up to `MAX_NESTING` levels of source (statements and expressions
  together), with Python's recursion limit raised for the duration (`recursion_room`); deeper
  source is a located CompileError;
- `Splitter` cuts every IR expression deeper than `MAX_IR_DEPTH` into pieces computed into
  fresh locals first, in the same order and under the same conditions as before, so the
  backends only ever see shallow trees.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from typing import TypeVar

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.dtypes import DType
from pykern.errors import CompileError

MAX_NESTING = 1000  # source levels; Python itself compiles about 3,000 at its default limit
MAX_IR_DEPTH = 32  # expression levels the backends see
# Python frames the translator uses per source level (visit, dispatch, visit_X, a handler,
# a comprehension), with room to spare
_FRAMES_PER_LEVEL = 8

# expressions whose value no statement before them can change (pre-computing something else
# before them keeps the result)
_STABLE = (ir.Const, ir.LocalRef, ir.ScalarParam, ir.Builtin, ir.ArrayDim)


# ---------------------------------------------------------------- the source


def nesting(tree: ast.AST) -> tuple[int, ast.AST | None]:
    """The depth of `tree` and, if it is deeper than MAX_NESTING, the outermost expression on
    a path that is too deep (where the error points). Iterative: any depth is fine."""
    deepest, culprit = 0, None
    stack: list[tuple[ast.AST, int, ast.AST | None]] = [(tree, 1, None)]
    while stack:
        node, depth, root = stack.pop()
        if isinstance(node, ast.expr) and root is None:
            root = node
        if depth > deepest:
            deepest = depth
        if depth > MAX_NESTING and culprit is None:
            culprit = root or node
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1, root))
    return deepest, culprit


def check_nesting(tree: ast.AST, error: Callable[[ast.AST, str], CompileError]) -> int:
    """The depth of `tree`; raises a located CompileError when it is deeper than
    MAX_NESTING."""
    depth, culprit = nesting(tree)
    if culprit is not None:
        raise error(culprit, f"expression nested too deeply: {depth} levels, more than the "
                             f"{MAX_NESTING} a kernel may have (split it with intermediate "
                             "variables)")
    return depth


@contextmanager
def recursion_room(levels: int) -> Iterator[None]:
    """Python's recursion limit raised, while the block runs, so that `levels` more source
    levels can be translated from here (a device function's body from a deep call site
    too)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + _FRAMES_PER_LEVEL * levels)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


# ---------------------------------------------------------------- the IR


Pieces = tuple[list[ir.Stmt], ir.Expr, int]  # statements to run first, the expression, its depth


@dataclass(frozen=True, kw_only=True)
class Bind(ir.Expr):
    """`value`, also stored in the local `name`, which the expression reads again after this
    (the middle operand of a chained comparison, `a < f() < c`, is evaluated once). Only the
    frontend makes these, and the `Splitter` turns each into an assignment placed where the
    value is evaluated (under the same conditions): no backend sees one."""

    name: str
    value: ir.Expr


class Splitter:
    """Rewrites a statement so that none of its expressions is deeper than MAX_IR_DEPTH.

    A piece cut out of an expression is assigned to a fresh local (`new_local(type, loc)` makes
    one and returns its name) by a statement placed before, and the expression reads the local
    instead. Evaluation order is kept: when a later operand needs statements first, the
    operands before it are computed into locals before those statements. Conditions are kept:
    a piece of the right side of `and`/`or` or of a branch of `x if c else y` is computed inside
    an `if`, and a `while` whose condition needs statements tests it at the top of its body."""

    def __init__(self, new_local: Callable[[DType, ir.Loc], str]):
        self.new_local = new_local

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        """`s` as statements whose expressions are shallow (`[s]` itself, usually). The bodies
        of compound statements are left alone: they were split when they were translated."""
        slots = list(_operand_slots(s))  # a compound statement's are its head's
        if not slots:
            return [s]
        pre, values, _ = self.operands([_get(s, slot) for slot in slots], top=True)
        if not pre:
            return [_with(s, slots, values)]
        if isinstance(s, ir.While):
            return [self.test_in_body(s, pre, values[0])]
        return pre + [_with(s, slots, values)]

    def test_in_body(self, loop: ir.While, pre: list[ir.Stmt], cond: ir.Expr) -> ir.While:
        """`while c: body` as `while True: (pre); if not c: break; body` (a `continue` goes to
        the top, so it tests again, as before)."""
        loc = loop.loc
        leave = ir.If(cond=ir.UnaryOp(op=ir.UnaryOpKind.NOT, operand=cond, type=dt.bool_,
                                      loc=loc),
                      body=(ir.Break(loc=loc),), loc=loc)
        return ir.While(cond=ir.Const(value=True, type=dt.bool_, loc=loc),
                        body=(*pre, leave, *loop.body), loc=loc)

    # ------------------------------------------------------------ expressions

    def operands(self, exprs: list[ir.Expr], top: bool = False
                 ) -> tuple[list[ir.Stmt], list[ir.Expr], int]:
        """The operands `exprs`, evaluated left to right, each made shallow (a `top` one, the
        operand of a statement, is never cut out itself); also the depth of the deepest."""
        pre: list[ir.Stmt] = []
        done: list[ir.Expr] = []
        depths: list[int] = []
        for e in exprs:
            first, value, depth = self.shaped(e) if top else self.expr(e)
            if first:
                # the operands before this one are evaluated before its statements run
                for i, earlier in enumerate(done):
                    if not isinstance(earlier, _STABLE):
                        pre, done[i], depths[i] = self.spill(pre, earlier)
                pre += first
            done.append(value)
            depths.append(depth)
        return pre, done, max(depths, default=0)

    def expr(self, e: ir.Expr) -> Pieces:
        """`e` made shallow, cut out into a local when it is as deep as allowed."""
        pre, node, depth = self.shaped(e)
        if depth >= MAX_IR_DEPTH:
            return self.spill(pre, node)
        return pre, node, depth

    def shaped(self, e: ir.Expr) -> Pieces:
        """`e` with shallow operands (`e` itself when they are)."""
        if isinstance(e, ir.Logical):
            return self.logical(e)
        if isinstance(e, ir.IfExp):
            return self.if_exp(e)
        if isinstance(e, Bind):
            pre, value, _ = self.expr(e.value)
            return pre + [ir.Assign(name=e.name, value=value, loc=e.loc)], \
                ir.LocalRef(name=e.name, type=e.type, loc=e.loc), 1
        slots = list(_operand_slots(e))
        pre, values, depth = self.operands([_get(e, slot) for slot in slots])
        return pre, _with(e, slots, values), 1 + depth

    def logical(self, e: ir.Logical) -> Pieces:
        pre, lhs, lhs_depth = self.expr(e.lhs)
        rhs_pre, rhs, rhs_depth = self.expr(e.rhs)
        if not rhs_pre:
            return pre, _with(e, [("lhs", None), ("rhs", None)], [lhs, rhs]), \
                1 + max(lhs_depth, rhs_depth)
        # the right side runs only where the left does not decide: an `if` around it
        name = self.new_local(dt.bool_, e.loc)
        result = ir.LocalRef(name=name, type=dt.bool_, loc=e.loc)
        undecided = result if e.op is ir.LogicalKind.AND else ir.UnaryOp(
            op=ir.UnaryOpKind.NOT, operand=result, type=dt.bool_, loc=e.loc)
        pre = pre + [ir.Assign(name=name, value=lhs, loc=e.loc),
                     ir.If(cond=undecided, body=(*rhs_pre, ir.Assign(name=name, value=rhs,
                                                                     loc=e.loc)), loc=e.loc)]
        return pre, result, 1

    def if_exp(self, e: ir.IfExp) -> Pieces:
        pre, cond, cond_depth = self.expr(e.cond)
        then_pre, then, then_depth = self.expr(e.then)
        else_pre, orelse, else_depth = self.expr(e.orelse)
        if not then_pre and not else_pre:
            slots = [("cond", None), ("then", None), ("orelse", None)]
            return pre, _with(e, slots, [cond, then, orelse]), \
                1 + max(cond_depth, then_depth, else_depth)
        # only the branch taken is evaluated: an `if` choosing which pieces run
        name = self.new_local(e.type, e.loc)
        pre = pre + [ir.If(cond=cond,
                           body=(*then_pre, ir.Assign(name=name, value=then, loc=e.loc)),
                           orelse=(*else_pre, ir.Assign(name=name, value=orelse, loc=e.loc)),
                           loc=e.loc)]
        return pre, ir.LocalRef(name=name, type=e.type, loc=e.loc), 1

    def spill(self, pre: list[ir.Stmt], e: ir.Expr) -> Pieces:
        """`e` computed into a fresh local after `pre`; the expression becomes a read of it."""
        name = self.new_local(e.type, e.loc)
        return pre + [ir.Assign(name=name, value=e, loc=e.loc)], \
            ir.LocalRef(name=name, type=e.type, loc=e.loc), 1


Slot = tuple[str, int | None]  # a field holding an operand, or item k of a tuple field
N = TypeVar("N", bound=ir.Node)


def _operand_slots(node: ir.Node) -> Iterator[Slot]:
    """Where `node`'s operand expressions are, in evaluation order (the order of the fields,
    as the backends evaluate them)."""
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, ir.Expr):
            yield f.name, None
        elif isinstance(value, tuple):
            for k, item in enumerate(value):
                if isinstance(item, ir.Expr):
                    yield f.name, k


def _get(node: ir.Node, slot: Slot) -> ir.Expr:
    name, k = slot
    return getattr(node, name) if k is None else getattr(node, name)[k]


def _with(node: N, slots: list[Slot], values: list[ir.Expr]) -> N:
    """`node` with `values` in its operand `slots`: `node` itself when none changed."""
    changes: dict[str, object] = {}
    for (name, k), value in zip(slots, values):
        if _get(node, (name, k)) is value:
            continue
        if k is None:
            changes[name] = value
        else:
            items = list(changes.get(name, getattr(node, name)))  # type: ignore[call-overload]
            items[k] = value
            changes[name] = tuple(items)
    return replace(node, **changes) if changes else node
