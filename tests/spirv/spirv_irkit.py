"""Small helpers to write typed IR by hand in the SPIR-V tests (no frontend involved)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.dtypes import DType

I32, U32, F32, BOOL = dt.i32, dt.u32, dt.f32, dt.bool_
B, U = ir.BinOpKind, ir.UnaryOpKind


def const(value: bool | int | float, dtype: DType = I32) -> ir.Const:
    return ir.Const(value=value, type=dtype)


def local(name: str, dtype: DType = I32) -> ir.LocalRef:
    return ir.LocalRef(name=name, type=dtype)


def param(name: str, dtype: DType) -> ir.ScalarParam:
    return ir.ScalarParam(name=name, type=dtype)


def binop(op: ir.BinOpKind, lhs: ir.Expr, rhs: ir.Expr) -> ir.BinOp:
    result = BOOL if op.is_comparison else lhs.type
    return ir.BinOp(op=op, lhs=lhs, rhs=rhs, type=result)


def unop(op: ir.UnaryOpKind, operand: ir.Expr) -> ir.UnaryOp:
    return ir.UnaryOp(op=op, operand=operand, type=operand.type)


def cast(value: ir.Expr, dtype: DType) -> ir.Cast:
    return ir.Cast(value=value, type=dtype)


def load(array: str, dtype: DType, *indices: ir.Expr) -> ir.ArrayLoad:
    return ir.ArrayLoad(array=array, indices=tuple(indices), type=dtype)


def store(array: str, value: ir.Expr, *indices: ir.Expr) -> ir.Store:
    return ir.Store(array=array, indices=tuple(indices) or (gid(),), value=value)


def gid(dim: int = 0) -> ir.Builtin:
    return ir.Builtin(kind=ir.BuiltinKind.GLOBAL_ID, dim=dim, type=I32)


def builtin(kind: ir.BuiltinKind, dim: int = 0) -> ir.Builtin:
    return ir.Builtin(kind=kind, dim=dim, type=I32)


def assign(name: str, value: ir.Expr) -> ir.Assign:
    return ir.Assign(name=name, value=value)


def grid_mask() -> tuple[ir.Stmt, ...]:
    """What the frontend puts first: `if global_id(d) >= grid(d): return` for d in 0..2."""
    return tuple(
        ir.If(cond=binop(B.GE, gid(d), builtin(ir.BuiltinKind.GRID, d)), body=(ir.Return(),))
        for d in range(3)
    )


def array(name: str, dtype: DType, ndim: int = 1,
          access: ir.Access = ir.Access.READ_WRITE) -> ir.Param:
    return ir.Param(name=name, type=dt.ArrayType(dtype, ndim), access=access)


def scalar(name: str, dtype: DType) -> ir.Param:
    return ir.Param(name=name, type=dtype)


def kernel(body: Iterable[ir.Stmt], params: Iterable[ir.Param] = (),
           locals: Mapping[str, DType] | None = None, workgroup: tuple[int, int, int] = (64, 1, 1),
           name: str = "k", mask: bool = True) -> ir.Kernel:
    """A kernel; with `mask` the grid mask comes first, as the frontend emits it."""
    return ir.Kernel(
        name=name,
        params=tuple(params),
        locals=tuple(ir.Local(name=n, type=t) for n, t in (locals or {}).items()),
        body=(grid_mask() if mask else ()) + tuple(body),
        workgroup=workgroup,
    )


# ---------------------------------------------------------------- declared arrays, atomics,
# subgroups and device functions


def declared(name: str, dtype: DType, shape: tuple[int, ...],
             space: ir.MemorySpace = ir.MemorySpace.SHARED) -> ir.ArrayDecl:
    return ir.ArrayDecl(name=name, dtype=dtype, shape=shape, space=space)


def atomic(op: ir.AtomicOp, array: str, dtype: DType, index: ir.Expr, value: ir.Expr,
           comparator: ir.Expr | None = None) -> ir.Atomic:
    return ir.Atomic(op=op, array=array, indices=(index,), value=value, comparator=comparator,
                     type=dtype)


def subgroup(op: ir.SubgroupOp, *args: ir.Expr, dtype: DType | None = None) -> ir.Subgroup:
    if dtype is None:
        dtype = I32 if not args else (BOOL if op in (ir.SubgroupOp.ANY, ir.SubgroupOp.ALL)
                                      else args[0].type)
    return ir.Subgroup(op=op, args=tuple(args), type=dtype)


def function(name: str, params: Mapping[str, DType], body: Iterable[ir.Stmt],
             return_type: DType | None = None,
             locals: Mapping[str, DType] | None = None) -> ir.Function:
    return ir.Function(
        name=name, params=tuple(ir.Local(name=n, type=t) for n, t in params.items()),
        locals=tuple(ir.Local(name=n, type=t) for n, t in (locals or {}).items()),
        body=tuple(body), return_type=return_type)


def call(fn: ir.Function, *args: ir.Expr) -> ir.Call:
    return ir.Call(function=fn.name, args=tuple(args), type=fn.return_type or dt.void)


def with_extras(k: ir.Kernel, arrays: Iterable[ir.ArrayDecl] = (),
                functions: Iterable[ir.Function] = ()) -> ir.Kernel:
    """`k` with declared arrays and device functions added."""
    from dataclasses import replace
    return replace(k, arrays=tuple(arrays), functions=tuple(functions))
