"""Statements and the kernel as a whole: a `@pk.kernel` function's `ast` to an `ir.Kernel`."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from .. import dtypes as dt
from .. import ir
from ..dtypes import ArrayType, DType
from ..errors import CompileError, KernelTypeError
from .exprs import ExprTranslator, Value
from .source import KernelSource
from .typerules import PyConst


class Translator(ExprTranslator):
    """One translation of one kernel variant. `visit` records the node being translated so an
    unexpected failure can still be reported at a location."""

    def __init__(self, src: KernelSource, params: Mapping[str, DType | ArrayType],
                 constants: Mapping[str, object]):
        self.src = src
        self.params = dict(params)
        self.constants = dict(constants)
        self.locals: dict[str, ir.Local] = {}
        self.access: dict[str, ir.Access] = {n: ir.Access.NONE for n, t in params.items()
                                             if isinstance(t, ArrayType)}
        self.assigned = assigned_names(src.tree)
        self.loop_depth = 0

    # ------------------------------------------------------------ plumbing

    def loc(self, node: ast.AST) -> ir.Loc:
        return self.src.loc(node)

    def error(self, node: ast.AST, message: str, cls: type[CompileError] = CompileError
              ) -> CompileError:
        return self.src.error(node, message, cls)

    def note_access(self, array: str, how: ir.Access) -> None:
        self.access[array] |= how

    def block(self, stmts: list[ast.stmt]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for stmt in stmts:
            result = self.visit(stmt)
            if result is not None:
                out.extend(result if isinstance(result, list) else [result])
        return tuple(out)

    # ------------------------------------------------------------ the kernel

    def kernel(self, workgroup: tuple[int, int, int]) -> ir.Kernel:
        fn = self.src.tree
        loc = self.loc(fn)
        prologue: list[ir.Stmt] = [grid_mask(loc)]
        for name, t in self.params.items():
            if name in self.assigned:
                if isinstance(t, ArrayType):
                    raise self.error(fn, f"array parameter '{name}' cannot be re-assigned")
                # a scalar parameter the body assigns to becomes a local initialised from it
                self.locals[name] = ir.Local(name=name, type=t, loc=loc)
                prologue.append(ir.Assign(name=name, value=ir.ScalarParam(name=name, type=t,
                                                                          loc=loc), loc=loc))
        for name in self.constants:
            if name in self.assigned:
                raise self.error(fn, f"constexpr parameter '{name}' cannot be re-assigned")
        body = self.block(strip_docstring(fn.body))
        params = tuple(
            ir.Param(name=n, type=t, access=self.access.get(n, ir.Access.NONE), loc=loc)
            for n, t in self.params.items()
        )
        return ir.Kernel(name=fn.name, params=params, locals=tuple(self.locals.values()),
                         body=tuple(prologue) + body, workgroup=workgroup, loc=loc)

    # ------------------------------------------------------------ assignment

    def assign_local(self, name: str, value: Value, node: ast.AST,
                     declared: DType | None = None) -> ir.Stmt:
        """`name = value`: the first assignment (or an annotation) gives the variable its type;
        later ones must match it (a Python number converts)."""
        if isinstance(self.params.get(name), ArrayType):
            raise self.error(node, f"array parameter '{name}' cannot be re-assigned")
        local = self.locals.get(name)
        if local is None:
            t = declared if declared is not None else self.strong(value, node).type
            local = self.locals[name] = ir.Local(name=name, type=t, loc=self.loc(node))
        elif declared is not None and declared != local.type:
            raise self.error(node, f"'{name}' is declared {declared.name} here but has type "
                                   f"{local.type.name} since {local.loc}", KernelTypeError)
        if declared is not None:
            return ir.Assign(name=name, value=self.typed(value, local.type, node),
                             loc=self.loc(node))
        if isinstance(value, ir.Expr) and value.type != local.type:
            raise self.error(node, f"cannot assign a {value.type.name} value to '{name}', which "
                                   f"has type {local.type.name} since {local.loc} (convert it "
                                   f"explicitly, e.g. pk.{local.type.name}(...))",
                             KernelTypeError)
        return ir.Assign(name=name, value=self.typed(value, local.type, node), loc=self.loc(node))

    def store(self, target: ast.Subscript, value: Value, node: ast.AST) -> ir.Stmt:
        """`a[i] = value`: the value is converted to the array's dtype, as numpy's setitem does."""
        array = self.array_name(target.value)
        if array is None:
            raise self.error(target, "only arrays passed as parameters can be assigned to by index")
        self.note_access(array, ir.Access.WRITE)
        dtype = self.params[array].dtype  # type: ignore[union-attr]
        return ir.Store(array=array, indices=self.indices(array, target),
                        value=self.typed(value, dtype, node), loc=self.loc(node))

    def assign_to(self, target: ast.expr, value: Value, node: ast.AST) -> ir.Stmt:
        if isinstance(target, ast.Name):
            return self.assign_local(target.id, value, node)
        if isinstance(target, ast.Subscript):
            return self.store(target, value, node)
        if isinstance(target, (ast.Tuple, ast.List)):
            raise self.error(target, "tuple unpacking is not supported in a kernel: assign "
                                     "each variable on its own")
        raise self.error(target, f"cannot assign to {ast.unparse(target)}")

    def visit_Assign(self, node: ast.Assign) -> list[ir.Stmt]:
        value = self.visit(node.value)
        return [self.assign_to(t, value, node) for t in node.targets]

    def visit_AugAssign(self, node: ast.AugAssign) -> ir.Stmt:
        target = node.target
        current = self.visit(ast.copy_location(
            type(target)(**{**target.__dict__, "ctx": ast.Load()}), target))
        value = self.binary(type(node.op), current, self.visit(node.value), node)
        if isinstance(target, ast.Name) and isinstance(value, ir.Expr):
            local_type = self.locals[target.id].type
            if value.type != local_type:
                raise self.error(node, f"'{ast.unparse(node)}' gives {value.type.name}, but "
                                       f"'{target.id}' has type {local_type.name} since "
                                       f"{self.locals[target.id].loc}", KernelTypeError)
        return self.assign_to(target, value, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ir.Stmt | None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "annotations are only supported on plain variables")
        declared = self.resolve(node.annotation)
        if not isinstance(declared, DType) and declared not in (int, float, bool):
            raise self.error(node.annotation, f"'{ast.unparse(node.annotation)}' is not a scalar "
                                              "type (use pk.i32, pk.f32, ...)", KernelTypeError)
        t = dt.as_dtype(declared)
        if node.value is None:
            return self.assign_local(node.target.id, PyConst(0), node, declared=t)
        return self.assign_local(node.target.id, self.visit(node.value), node, declared=t)

    # ------------------------------------------------------------ control flow

    def visit_If(self, node: ast.If) -> ir.Stmt | list[ir.Stmt]:
        test = self.visit(node.test)
        if isinstance(test, PyConst):
            # decided at compile time: only the branch taken is translated (as Triton's
            # constexpr ifs), so the other may use names or types this variant lacks
            return list(self.block(node.body if test.value else node.orelse))
        cond = self.truth(test, node.test)
        return ir.If(cond=cond, body=self.block(node.body), orelse=self.block(node.orelse),
                     loc=self.loc(node))

    def loop_body(self, stmts: list[ast.stmt]) -> tuple[ir.Stmt, ...]:
        self.loop_depth += 1
        try:
            return self.block(stmts)
        finally:
            self.loop_depth -= 1

    def visit_While(self, node: ast.While) -> ir.Stmt:
        if node.orelse:
            raise self.error(node, "while ... else is not supported in a kernel")
        cond = self.truth(self.visit(node.test), node.test)
        return ir.While(cond=cond, body=self.loop_body(node.body), loc=self.loc(node))

    def visit_For(self, node: ast.For) -> ir.Stmt:
        if node.orelse:
            raise self.error(node, "for ... else is not supported in a kernel")
        it = node.iter
        if not (isinstance(it, ast.Call) and self.resolve(it.func) is range):
            raise self.error(it, "a kernel's for loop must iterate over range(...)")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a plain name")
        if not 1 <= len(it.args) <= 3 or it.keywords:
            raise self.error(it, f"range() takes 1 to 3 positional arguments, {len(it.args)} given")
        values = [self.visit(a) for a in it.args]
        for v, a in zip(values, it.args):
            if (isinstance(v, PyConst) and not isinstance(v.value, int)) or (
                    isinstance(v, ir.Expr) and not v.type.is_int):
                raise self.error(a, "range() arguments must be integers", KernelTypeError)
        typed = [v for v in values if isinstance(v, ir.Expr)]
        t = typed[0].type if typed else dt.i32
        for v in typed[1:]:
            t = self.unify(ir.Const(value=0, type=t), v)
        if len(values) == 1:
            values = [PyConst(0), values[0], PyConst(1)]
        elif len(values) == 2:
            values.append(PyConst(1))
        if isinstance(values[2], PyConst) and values[2].value == 0:
            raise self.error(it.args[2], "range() step must not be zero")
        start, stop, step = (self.typed(v, t, node.iter) for v in values)
        var = node.target.id
        local = self.locals.get(var)
        if local is not None and local.type != t:
            raise self.error(node.target, f"loop variable '{var}' would be {t.name}, but it has "
                                          f"type {local.type.name} since {local.loc}",
                             KernelTypeError)
        if local is None:
            self.locals[var] = ir.Local(name=var, type=t, loc=self.loc(node.target))
        return ir.ForRange(var=var, start=start, stop=stop, step=step,
                           body=self.loop_body(node.body), loc=self.loc(node))

    def visit_Break(self, node: ast.Break) -> ir.Stmt:
        if not self.loop_depth:
            raise self.error(node, "'break' outside a loop")
        return ir.Break(loc=self.loc(node))

    def visit_Continue(self, node: ast.Continue) -> ir.Stmt:
        if not self.loop_depth:
            raise self.error(node, "'continue' outside a loop")
        return ir.Continue(loc=self.loc(node))

    def visit_Return(self, node: ast.Return) -> ir.Stmt:
        if node.value is not None:
            raise self.error(node, "a kernel cannot return a value: write results into an "
                                   "array parameter")
        return ir.Return(loc=self.loc(node))

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Expr(self, node: ast.Expr) -> ir.Stmt | None:
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return None  # a string statement is a comment
        raise self.error(node, f"expression statement '{ast.unparse(node)}' has no effect in a "
                               "kernel")


def strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
            first.value.value, str):
        return body[1:]
    return body


def assigned_names(fn: ast.FunctionDef) -> frozenset[str]:
    """Names the body binds (Python makes them local to the whole function)."""
    names = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
    return frozenset(names)


def grid_mask(loc: ir.Loc) -> ir.Stmt:
    """`if global_id(d) >= grid(d) for any d: return`, so invocations past the grid do nothing."""
    cond: ir.Expr | None = None
    for d in range(3):
        past = ir.BinOp(op=ir.BinOpKind.GE,
                        lhs=ir.Builtin(kind=ir.BuiltinKind.GLOBAL_ID, dim=d, type=dt.i32, loc=loc),
                        rhs=ir.Builtin(kind=ir.BuiltinKind.GRID, dim=d, type=dt.i32, loc=loc),
                        type=dt.bool_, loc=loc)
        # a non-short-circuit `|`: both sides are cheap and branch-free code is faster
        cond = past if cond is None else ir.BinOp(op=ir.BinOpKind.BIT_OR, lhs=cond, rhs=past,
                                                  type=dt.bool_, loc=loc)
    return ir.If(cond=cond, body=(ir.Return(loc=loc),), loc=loc)
