"""Builders of hand-made IR for the cooperative-matrix tests of the interpreter: short names for
the nodes, and `kernel`, which declares the locals the body assigns, puts the grid mask first
(unless the body has a barrier) and verifies the result."""

from __future__ import annotations

import numpy as np

import pykern as pk
from pykern import ir
from pykern.frontend.translator import grid_mask
from pykern.interpret import ArrayArg, run
from pykern.ir.verify import verify
from pykern.lang.coop import CoopType
from pykern.lang.dtypes import ArrayType, DType

I32 = pk.i32
R, W, RW = ir.Access.READ, ir.Access.WRITE, ir.Access.READ_WRITE
LOC = ir.Loc("tile_kernels.py", 17, 9)  # where every node of these kernels says it comes from


def const(value: int | float, t: DType = I32) -> ir.Const:
    return ir.Const(value=value, type=t, loc=LOC)


def scalar(name: str, t: DType = I32) -> ir.ScalarParam:
    return ir.ScalarParam(name=name, type=t, loc=LOC)


def ref(name: str, t: DType | CoopType) -> ir.LocalRef:
    return ir.LocalRef(name=name, type=t, loc=LOC)  # type: ignore[arg-type]


def builtin(kind: ir.BuiltinKind, dim: int) -> ir.Builtin:
    return ir.Builtin(kind=kind, dim=dim, type=I32, loc=LOC)


def binop(op: ir.BinOpKind, lhs: ir.Expr, rhs: ir.Expr) -> ir.BinOp:
    return ir.BinOp(op=op, lhs=lhs, rhs=rhs, type=lhs.type, loc=LOC)


def assign(name: str, value: ir.Expr) -> ir.Assign:
    return ir.Assign(name=name, value=value, loc=LOC)


def load(array: str, indices: tuple[ir.Expr, ...], t: CoopType,
         transpose: bool = False) -> ir.CoopLoad:
    return ir.CoopLoad(array=array, indices=indices, transpose=transpose, type=t,  # type: ignore[arg-type]
                       loc=LOC)


def store(array: str, indices: tuple[ir.Expr, ...], value: ir.Expr,
          transpose: bool = False) -> ir.CoopStore:
    return ir.CoopStore(array=array, indices=indices, value=value, transpose=transpose,
                        loc=LOC)


def array_param(name: str, dtype: DType, ndim: int, access: ir.Access) -> ir.Param:
    return ir.Param(name=name, type=ArrayType(dtype, ndim), access=access, loc=LOC)


def scalar_params(*names: str, t: DType = I32) -> tuple[ir.Param, ...]:
    return tuple(ir.Param(name=n, type=t, loc=LOC) for n in names)


def assigned_locals(body: tuple[ir.Stmt, ...]) -> tuple[ir.Local, ...]:
    """A local for every name the body assigns or loops over, typed by what it gets."""
    found: dict[str, object] = {}
    for stmt in body:
        for node in ir.walk(stmt):
            if isinstance(node, ir.Assign):
                found.setdefault(node.name, node.value.type)
            elif isinstance(node, ir.ForRange):
                found.setdefault(node.var, node.start.type)
    return tuple(ir.Local(name=n, type=t, loc=LOC) for n, t in found.items())  # type: ignore[arg-type]


def kernel(name: str, params: tuple[ir.Param, ...], body: tuple[ir.Stmt, ...], *,
           workgroup: tuple[int, int, int] = (4, 1, 1), arrays: tuple[ir.ArrayDecl, ...] = (),
           extra_locals: tuple[ir.Local, ...] = (), functions: tuple[ir.Function, ...] = (),
           debug: bool = False) -> ir.Kernel:
    """A verified kernel; masked (grid mask first) unless its body has a barrier."""
    masked = not any(isinstance(n, ir.Barrier) for s in body for n in ir.walk(s))
    full_body = ((grid_mask(LOC),) if masked else ()) + body
    k = ir.Kernel(name=name, params=params, locals=assigned_locals(body) + extra_locals,
                  body=full_body, workgroup=workgroup, arrays=arrays, functions=functions,
                  debug=debug,
                  masked=masked, loc=LOC)
    verify(k)
    return k


def launch(k: ir.Kernel, grid: tuple[int, int, int], arrays: dict[str, np.ndarray | ArrayArg],
           **scalars: object) -> None:
    """Runs `k` through the interpreter; numpy arrays (views too) are written in place."""
    run(k, grid, arrays, scalars)  # type: ignore[arg-type]
