"""The IR verifier: checks the contract of `pykern.ir` on a whole kernel.

Run after translation (and in tests after any transformation). A failure is a compiler bug, so it
raises AssertionError naming the node and its location, never a user-facing error.
"""

from __future__ import annotations

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.coop import ACCUMULATOR, MATRIX_A, MATRIX_B, CoopType
from pykern.lang.dtypes import ArrayType


class _Verifier:
    def __init__(self, kernel: ir.Kernel, scope: ir.Kernel | ir.Function | None = None):
        scope = scope or kernel
        self.kernel = kernel
        self.params = {p.name: p for p in kernel.params}
        self.arrays: dict[str, ArrayType] = {p.name: p.type for p in kernel.params
                                             if isinstance(p.type, ArrayType)}
        self.arrays.update({a.name: ArrayType(a.dtype, len(a.shape)) for a in kernel.arrays})
        self.decls = {a.name: a for a in kernel.arrays}
        self.functions = {f.name: f for f in kernel.functions}
        self.locals = {v.name: v.type for v in scope.locals}
        self.return_type: object = None
        if isinstance(scope, ir.Function):
            self.params = {}  # a function sees its scalar parameters as locals
            self.locals.update({v.name: v.type for v in scope.params})
            self.return_type = scope.return_type
        self.loop_depth = 0
        self.expr_checks = {
            ir.Const: self.expr_Const, ir.LocalRef: self.expr_LocalRef,
            ir.ScalarParam: self.expr_ScalarParam, ir.ArrayLoad: self.expr_ArrayLoad,
            ir.ArrayDim: self.expr_ArrayDim, ir.BinOp: self.expr_BinOp,
            ir.UnaryOp: self.expr_UnaryOp, ir.Logical: self.expr_Logical,
            ir.IfExp: self.expr_IfExp, ir.Cast: self.expr_Cast,
            ir.Bitcast: self.expr_Bitcast, ir.MathCall: self.expr_MathCall,
            ir.ComplexCall: self.expr_ComplexCall,
            ir.Builtin: self.expr_Builtin, ir.Select: self.expr_Select,
            ir.Atomic: self.expr_Atomic, ir.Subgroup: self.expr_Subgroup, ir.Call: self.expr_Call,
            ir.CoopFill: self.expr_CoopFill, ir.CoopLoad: self.expr_CoopLoad,
            ir.CoopMma: self.expr_CoopMma, ir.CoopScale: self.expr_CoopScale,
        }
        self.stmt_checks = {
            ir.Assign: self.stmt_Assign, ir.Store: self.stmt_Store, ir.If: self.stmt_If,
            ir.ForRange: self.stmt_ForRange, ir.While: self.stmt_While,
            ir.Break: self.stmt_Break, ir.Continue: self.stmt_Break, ir.Return: self.stmt_Return,
            ir.Eval: self.stmt_Eval, ir.Barrier: self.stmt_Barrier, ir.Assert: self.stmt_Assert,
            ir.CoopStore: self.stmt_CoopStore,
        }

    def fail(self, node: ir.Node, why: str) -> None:
        raise AssertionError(f"invalid IR at {node.loc}: {why}: {node!r}")

    def check(self, cond: bool, node: ir.Node, why: str) -> None:
        if not cond:
            self.fail(node, why)

    def array(self, node: ir.Node, name: str) -> ArrayType:
        t = self.arrays.get(name)
        self.check(t is not None, node, f"'{name}' is not an array")
        return t  # type: ignore[return-value]

    # ------------------------------------------------------------ expressions

    def expr(self, e: ir.Expr) -> None:
        self.check(isinstance(e, ir.Expr) and isinstance(e.type, (dt.DType, CoopType)), e,
                   "untyped")
        if isinstance(e.type, CoopType):
            self.check(type(e) in _TILE_NODES, e, "a tile from a node that makes no tiles")
        check = self.expr_checks.get(type(e))
        self.check(check is not None, e, "unknown expression node")
        check(e)  # type: ignore[misc]

    def expr_Const(self, e: ir.Const) -> None:
        self.check(isinstance(e.value, (bool, int, float)) or (
            isinstance(e.value, complex) and e.type.is_complex), e, "constant is not a number")

    def expr_LocalRef(self, e: ir.LocalRef) -> None:
        self.check(self.locals.get(e.name) == e.type, e, "local of another type or undeclared")

    def expr_ScalarParam(self, e: ir.ScalarParam) -> None:
        p = self.params.get(e.name)
        self.check(p is not None and p.type == e.type, e, "not a scalar parameter of this type")

    def expr_ArrayLoad(self, e: ir.ArrayLoad) -> None:
        t = self.array(e, e.array)
        self.check(t.dtype == e.type and len(e.indices) == t.ndim, e, "load type or rank")
        self.indices(e, e.indices)

    def indices(self, node: ir.Node, indices: tuple[ir.Expr, ...]) -> None:
        for i in indices:
            self.expr(i)
            self.check(i.type == dt.i32, node, "index is not i32")

    def expr_ArrayDim(self, e: ir.ArrayDim) -> None:
        t = self.array(e, e.array)
        self.check(0 <= e.axis < t.ndim and e.type == dt.i32, e, "bad axis")
        self.check(e.array not in self.decls, e, "shape of a declared array is a constant")

    def expr_BinOp(self, e: ir.BinOp) -> None:
        self.expr(e.lhs)
        self.expr(e.rhs)
        self.check(e.lhs.type == e.rhs.type, e, "operand types differ")
        if isinstance(e.type, CoopType):
            self.check(e.op in _TILE_BINOPS and e.type == e.lhs.type, e, "tile operator")
            return
        expected = dt.bool_ if e.op.is_comparison else e.lhs.type
        self.check(e.type == expected, e, "result type")
        if e.op is ir.BinOpKind.DIV:
            self.check(e.type.is_float or e.type.is_complex, e, "DIV on non-floats")
        if e.lhs.type.is_complex:
            self.check(e.op in _COMPLEX_BINOPS, e, "operator undefined on complex")
        if e.op in (ir.BinOpKind.LSHIFT, ir.BinOpKind.RSHIFT):
            self.check(e.type.is_int, e, "shift of non-integers")

    def expr_UnaryOp(self, e: ir.UnaryOp) -> None:
        self.expr(e.operand)
        self.check(e.type == e.operand.type, e, "result type")
        if isinstance(e.type, dt.DType) and e.type.is_complex:
            self.check(e.op is ir.UnaryOpKind.NEG, e, "complex unary operator")
        if isinstance(e.type, CoopType):
            self.check(e.op is ir.UnaryOpKind.NEG, e, "tile operator")
        if e.op is ir.UnaryOpKind.NOT:
            self.check(e.type == dt.bool_, e, "NOT of a non-bool")

    def expr_Logical(self, e: ir.Logical) -> None:
        for x in (e.lhs, e.rhs):
            self.expr(x)
            self.check(x.type == dt.bool_, e, "Logical operand is not bool")

    def expr_IfExp(self, e: ir.IfExp) -> None:
        for x in (e.cond, e.then, e.orelse):
            self.expr(x)
        self.check(e.cond.type == dt.bool_, e, "condition is not bool")
        self.check(e.then.type == e.orelse.type == e.type, e, "branch types differ")

    def expr_Cast(self, e: ir.Cast) -> None:
        self.expr(e.value)
        if isinstance(e.type, CoopType) or isinstance(e.value.type, CoopType):
            self.check(isinstance(e.value.type, CoopType) and isinstance(e.type, CoopType)
                       and e.type.with_dtype(e.value.type.dtype) == e.value.type, e,
                       "a tile converts to a tile of the same shape and use")

    # ------------------------------------------------------------ tiles

    def tile(self, node: ir.Node, e: ir.Expr) -> CoopType:
        self.expr(e)
        self.check(isinstance(e.type, CoopType), node, "operand is not a tile")
        return e.type  # type: ignore[return-value]

    def expr_CoopFill(self, e: ir.CoopFill) -> None:
        self.expr(e.value)
        self.check(e.value.type == e.type.dtype, e, "fill value type")  # type: ignore[attr-defined]

    def tile_access(self, node: ir.Node, array: str, indices: tuple[ir.Expr, ...],
                    t: CoopType) -> None:
        a = self.array(node, array)
        self.check(a.ndim >= 2 and len(indices) == a.ndim, node, "tile access rank")
        packed = isinstance(node, ir.CoopLoad) and a.dtype.is_int \
            and a.dtype.bits % t.dtype.bits == 0
        self.check(a.dtype.bits == t.dtype.bits or packed, node,
                   "tile element width differs from array's")
        decl = self.decls.get(array)
        self.check(decl is None or decl.space is ir.MemorySpace.SHARED, node, "tile on pk.local")
        self.indices(node, indices)

    def expr_CoopLoad(self, e: ir.CoopLoad) -> None:
        self.tile_access(e, e.array, e.indices, e.type)  # type: ignore[arg-type]

    def stmt_CoopStore(self, s: ir.CoopStore) -> None:
        t = self.tile(s, s.value)
        self.tile_access(s, s.array, s.indices, t)

    def expr_CoopMma(self, e: ir.CoopMma) -> None:
        a, b, c = self.tile(e, e.a), self.tile(e, e.b), self.tile(e, e.c)
        self.check((a.use, b.use, c.use) == (MATRIX_A, MATRIX_B, ACCUMULATOR), e, "mma uses")
        self.check(a.cols == b.rows and a.rows == c.rows and b.cols == c.cols, e, "mma shapes")
        self.check(e.type == c and a.dtype == b.dtype, e, "mma types")

    def expr_CoopScale(self, e: ir.CoopScale) -> None:
        t = self.tile(e, e.matrix)
        self.expr(e.scalar)
        self.check(e.type == t and e.scalar.type == t.dtype, e, "scale types")

    def expr_Bitcast(self, e: ir.Bitcast) -> None:
        self.expr(e.value)
        self.check(e.type.bits == e.value.type.bits and dt.bool_ not in (e.type, e.value.type),
                   e, "bitcast between types of different widths, or of a bool")

    def expr_MathCall(self, e: ir.MathCall) -> None:
        self.check(len(e.args) == e.fn.arity, e, "arity")
        for a in e.args:
            self.expr(a)
            self.check(a.type == e.args[0].type and a.type.is_float, e, "math on non-float")
        expected = dt.bool_ if e.fn.is_predicate else e.args[0].type
        self.check(e.type == expected, e, "math result type")

    def expr_ComplexCall(self, e: ir.ComplexCall) -> None:
        for a in e.args:
            self.expr(a)
        if e.fn is ir.ComplexFn.MAKE:
            self.check(len(e.args) == 2 and e.type.is_complex and
                       e.args[0].type == e.args[1].type == e.type.real_dtype, e, "complex()")
            return
        self.check(len(e.args) == 1 and e.args[0].type.is_complex, e, "complex operand")
        part = e.args[0].type.real_dtype
        self.check(e.type == (part if e.fn.real_result else e.args[0].type), e, "result type")

    def expr_Select(self, e: ir.Select) -> None:
        self.expr_IfExp(e)  # type: ignore[arg-type]

    def expr_Atomic(self, e: ir.Atomic) -> None:
        t = self.array(e, e.array)
        self.check(len(e.indices) == t.ndim and e.type == t.dtype, e, "atomic rank or type")
        decl = self.decls.get(e.array)
        self.check(decl is None or decl.space is ir.MemorySpace.SHARED, e, "atomic on local")
        self.indices(e, e.indices)
        for v in (e.value, e.comparator) if e.comparator is not None else (e.value,):
            self.expr(v)
            self.check(v.type == t.dtype, e, "atomic operand type")
        self.check((e.comparator is not None) == (e.op is ir.AtomicOp.CAS), e, "CAS comparator")

    def expr_Subgroup(self, e: ir.Subgroup) -> None:
        for a in e.args:
            self.expr(a)

    def expr_Call(self, e: ir.Call) -> None:
        f = self.functions.get(e.function)
        self.check(f is not None, e, "call of an undeclared function (callees come first)")
        assert f is not None
        self.check(len(e.args) == len(f.params), e, "call arity")
        for a, p in zip(e.args, f.params):
            self.expr(a)
            self.check(a.type == p.type, e, "argument type")
        self.check(e.type == (f.return_type or dt.void), e, "call type")

    def expr_Builtin(self, e: ir.Builtin) -> None:
        self.check(0 <= e.dim <= 2 and e.type == dt.i32, e, "builtin dim/type")

    # ------------------------------------------------------------ statements

    def block(self, stmts: tuple[ir.Stmt, ...]) -> None:
        for s in stmts:
            check = self.stmt_checks.get(type(s))
            self.check(check is not None, s, "unknown statement node")
            check(s)  # type: ignore[misc]

    def stmt_Assign(self, s: ir.Assign) -> None:
        self.expr(s.value)
        self.check(self.locals.get(s.name) == s.value.type, s, "assigned type")

    def stmt_Store(self, s: ir.Store) -> None:
        t = self.array(s, s.array)
        self.check(len(s.indices) == t.ndim, s, "store rank")
        self.indices(s, s.indices)
        self.expr(s.value)
        self.check(s.value.type == t.dtype, s, "stored type")

    def stmt_If(self, s: ir.If) -> None:
        self.expr(s.cond)
        self.check(s.cond.type == dt.bool_, s, "condition is not bool")
        self.block(s.body)
        self.block(s.orelse)

    def loop(self, body: tuple[ir.Stmt, ...]) -> None:
        self.loop_depth += 1
        self.block(body)
        self.loop_depth -= 1

    def stmt_ForRange(self, s: ir.ForRange) -> None:
        t = self.locals.get(s.var)
        self.check(t is not None and t.is_int, s, "loop variable")
        for x in (s.start, s.stop, s.step):
            self.expr(x)
            self.check(x.type == t, s, "range bound type")
        self.loop(s.body)

    def stmt_While(self, s: ir.While) -> None:
        self.expr(s.cond)
        self.check(s.cond.type == dt.bool_, s, "condition is not bool")
        self.loop(s.body)

    def stmt_Break(self, s: ir.Break) -> None:
        self.check(self.loop_depth > 0, s, "break outside a loop")

    def stmt_Return(self, s: ir.Return) -> None:
        if s.value is None:
            self.check(self.return_type is None, s, "return without a value")
        else:
            self.expr(s.value)
            self.check(s.value.type == self.return_type, s, "returned type")

    def stmt_Eval(self, s: ir.Eval) -> None:
        self.expr(s.value)

    def stmt_Barrier(self, s: ir.Barrier) -> None:
        pass

    def stmt_Assert(self, s: ir.Assert) -> None:
        self.expr(s.cond)
        self.check(s.cond.type == dt.bool_ and self.kernel.debug, s, "assert outside debug mode")


_COMPLEX_BINOPS = (ir.BinOpKind.ADD, ir.BinOpKind.SUB, ir.BinOpKind.MUL, ir.BinOpKind.DIV,
                   ir.BinOpKind.POW, ir.BinOpKind.EQ, ir.BinOpKind.NE)
_TILE_BINOPS = (ir.BinOpKind.ADD, ir.BinOpKind.SUB, ir.BinOpKind.MUL, ir.BinOpKind.DIV)
# the nodes whose value may be a tile
_TILE_NODES = (ir.CoopFill, ir.CoopLoad, ir.CoopMma, ir.CoopScale, ir.LocalRef, ir.BinOp, ir.Call,
               ir.UnaryOp, ir.Cast)


def verify(kernel: ir.Kernel) -> None:
    """Raises AssertionError if `kernel` breaks the IR contract."""
    assert len(set(p.name for p in kernel.params)) == len(kernel.params), "duplicate params"
    assert len(set(v.name for v in kernel.locals)) == len(kernel.locals), "duplicate locals"
    assert len(kernel.workgroup) == 3 and all(w >= 1 for w in kernel.workgroup), "workgroup"
    for f in kernel.functions:
        _Verifier(kernel, f).block(f.body)
    _Verifier(kernel).block(kernel.body)
