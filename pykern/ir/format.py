"""Readable text of the typed IR, Python-like with every value's type: what `kernel.ir()` prints.

    kernel saxpy(a: f32, x: f32[:] (read), y: f32[:] (read), out: f32[:] (write))
      workgroup (256, 1, 1)
      i: i32 = global_id(0)
      out[i] = ((a * x[i]):f32 + y[i]):f32
"""

from __future__ import annotations

from collections.abc import Callable

from pykern import ir
from pykern.lang.dtypes import DType


def _binop(e: ir.BinOp) -> str:
    op = e.op.value
    if e.op in (ir.BinOpKind.MIN, ir.BinOpKind.MAX):
        return f"{op}({expr(e.lhs)}, {expr(e.rhs)})"
    return f"({expr(e.lhs)} {op} {expr(e.rhs)}):{e.type.name}"


_EXPR: dict[type, Callable] = {
    ir.Const: lambda e: f"{e.value!r}:{e.type.name}",
    ir.LocalRef: lambda e: e.name,
    ir.ScalarParam: lambda e: e.name,
    ir.ArrayLoad: lambda e: f"{e.array}[{', '.join(expr(i) for i in e.indices)}]",
    ir.ArrayDim: lambda e: f"{e.array}.shape[{e.axis}]",
    ir.BinOp: _binop,
    ir.UnaryOp: lambda e: f"{e.op.value}({expr(e.operand)})",
    ir.Logical: lambda e: f"({expr(e.lhs)} {e.op.value} {expr(e.rhs)})",
    ir.IfExp: lambda e: f"({expr(e.then)} if {expr(e.cond)} else {expr(e.orelse)})",
    ir.Cast: lambda e: f"{e.type.name}({expr(e.value)})",
    ir.Bitcast: lambda e: f"bitcast_{e.type.name}({expr(e.value)})",
    ir.MathCall: lambda e: f"{e.fn.py_name}({', '.join(expr(a) for a in e.args)})",
    ir.ComplexCall: lambda e: f"c_{e.fn.value}({', '.join(expr(a) for a in e.args)})",
    ir.Builtin: lambda e: f"{e.kind.value}({e.dim})",
    ir.Select: lambda e: f"select({expr(e.cond)}, {expr(e.then)}, {expr(e.orelse)})",
    ir.Atomic: lambda e: f"atomic_{e.op.value}({e.array}[{', '.join(expr(i) for i in e.indices)}]"
                         + (f", {expr(e.comparator)}" if e.comparator is not None else "")
                         + f", {expr(e.value)})",
    ir.Subgroup: lambda e: f"{e.op.value}({', '.join(expr(a) for a in e.args)})",
    ir.Call: lambda e: f"{e.function}({', '.join(expr(a) for a in e.args)})",
    ir.CoopFill: lambda e: f"coop_fill({expr(e.value)}):{e.type.name}",
    ir.CoopLoad: lambda e: f"coop_load({e.array}[{', '.join(expr(i) for i in e.indices)}]"
                           f"{', transpose' if e.transpose else ''}):{e.type.name}",
    ir.CoopMma: lambda e: f"coop_mma({expr(e.a)}, {expr(e.b)}, {expr(e.c)})",
    ir.CoopScale: lambda e: f"({expr(e.matrix)} * {expr(e.scalar)}):{e.type.name}",
}


def expr(e: ir.Expr) -> str:
    return _EXPR[type(e)](e)


def _block(stmts: tuple[ir.Stmt, ...], depth: int, declared: dict[str, str]) -> list[str]:
    lines: list[str] = []
    for s in stmts:
        lines.extend(_STMT[type(s)](s, depth, declared))
    return lines or ["  " * depth + "pass"]


def _assign(s: ir.Assign, depth: int, declared: dict[str, str]) -> list[str]:
    name = s.name
    if name in declared:  # the first assignment shows the variable's type
        name = f"{name}: {declared.pop(name)}"
    return ["  " * depth + f"{name} = {expr(s.value)}"]


def _if(s: ir.If, depth: int, declared: dict[str, str]) -> list[str]:
    out = ["  " * depth + f"if {expr(s.cond)}:"] + _block(s.body, depth + 1, declared)
    if s.orelse:
        out += ["  " * depth + "else:"] + _block(s.orelse, depth + 1, declared)
    return out


def _for(s: ir.ForRange, depth: int, declared: dict[str, str]) -> list[str]:
    declared.pop(s.var, None)
    head = f"for {s.var} in range({expr(s.start)}, {expr(s.stop)}, {expr(s.step)}):"
    return ["  " * depth + head] + _block(s.body, depth + 1, declared)


_STMT: dict[type, Callable] = {
    ir.Assign: _assign,
    ir.Store: lambda s, d, _: ["  " * d + f"{s.array}[{', '.join(expr(i) for i in s.indices)}]"
                                          f" = {expr(s.value)}"],
    ir.If: _if,
    ir.ForRange: _for,
    ir.While: lambda s, d, decl: ["  " * d + f"while {expr(s.cond)}:"] + _block(s.body, d + 1,
                                                                                decl),
    ir.Break: lambda s, d, _: ["  " * d + "break"],
    ir.Continue: lambda s, d, _: ["  " * d + "continue"],
    ir.Return: lambda s, d, _: ["  " * d + "return" + (f" {expr(s.value)}" if s.value is not None
                                                       else "")],
    ir.Eval: lambda s, d, _: ["  " * d + expr(s.value)],
    ir.Barrier: lambda s, d, _: ["  " * d + "barrier()"],
    ir.Assert: lambda s, d, _: ["  " * d + f"assert {expr(s.cond)}, {s.message!r}"],
    ir.CoopStore: lambda s, d, _: ["  " * d + f"coop_store({s.array}["
                                              f"{', '.join(expr(i) for i in s.indices)}], "
                                              f"{expr(s.value)}"
                                              f"{', transpose' if s.transpose else ''})"],
}


def format_kernel(k: ir.Kernel) -> str:
    def param(p: ir.Param) -> str:
        if not p.is_array:
            # a scalar's type is a DType (whose `.dtype` is numpy's, for numpy's sake)
            t = p.type
            return f"{p.name}: {t.name if isinstance(t, DType) else t.dtype.name}"
        how = {ir.Access.READ: "read", ir.Access.WRITE: "write",
               ir.Access.READ_WRITE: "read-write"}.get(p.access & ~ir.Access.TILES, "unused")
        how += ", tiles" if p.access & ir.Access.TILES else ""
        return f"{p.name}: {p.type.dtype.name}[{', '.join(':' * p.type.ndim)}] ({how})"

    lines = []
    for f in k.functions:
        args = ", ".join(f"{p.name}: {p.type.name}" for p in f.params)
        rtype = f.return_type.name if f.return_type is not None else "None"
        lines.append(f"func {f.name}({args}) -> {rtype}")
        lines += _block(f.body, 1, {v.name: v.type.name for v in f.locals})
    debug = " debug" if k.debug else ""
    lines.append(f"kernel {k.name}({', '.join(param(p) for p in k.params)}) "
                 f"workgroup {k.workgroup}{debug}")
    for a in k.arrays:
        lines.append(f"  {a.name} = {a.space.value}({a.dtype.name}, {a.shape})")
    declared = {v.name: v.type.name for v in k.locals}
    return "\n".join(lines + _block(k.body, 1, declared))
