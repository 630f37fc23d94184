"""Calls inside a kernel: casts, id builtins, math, atomics, subgroups, device functions.

The callee is resolved to a Python object and looked up by identity in `CALLS`, a table from
object to handler, so `pk.sqrt`, `math.sqrt` and `from pykern import sqrt` behave alike.
"""

from __future__ import annotations

import ast
import cmath
import math
from collections.abc import Callable

from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.coop import CoopType
from pykern.lang.dtypes import DType
from pykern.errors import KernelTypeError
from pykern.frontend.coop import COOP_CALLS, COOP_KEYWORDS, CoopTranslator
from pykern.frontend.exprs import Value
from pykern.frontend.values import TupleValue
from pykern.frontend.typerules import (PyConst, arithmetic_type, maximum, minimum, promote,
                                       widest_float)

# Python's names behave as in Python (math.floor returns an int), pykern's as numpy's (floats)
MATH_FUNCTIONS: dict[object, ir.MathFn] = {
    bi.sqrt: ir.MathFn.SQRT, bi.exp: ir.MathFn.EXP, bi.log: ir.MathFn.LOG, bi.sin: ir.MathFn.SIN,
    bi.cos: ir.MathFn.COS, bi.tanh: ir.MathFn.TANH, bi.floor: ir.MathFn.FLOOR,
    bi.ceil: ir.MathFn.CEIL, bi.pow: ir.MathFn.POW, bi.rsqrt: ir.MathFn.RSQRT,
    bi.exp2: ir.MathFn.EXP2, bi.log2: ir.MathFn.LOG2, bi.tan: ir.MathFn.TAN,
    bi.asin: ir.MathFn.ASIN, bi.acos: ir.MathFn.ACOS, bi.atan: ir.MathFn.ATAN,
    bi.atan2: ir.MathFn.ATAN2, bi.sinh: ir.MathFn.SINH, bi.cosh: ir.MathFn.COSH,
    bi.erf: ir.MathFn.ERF, bi.trunc: ir.MathFn.TRUNC, bi.round: ir.MathFn.ROUND,
    bi.fma: ir.MathFn.FMA, bi.copysign: ir.MathFn.COPYSIGN, bi.isnan: ir.MathFn.ISNAN,
    bi.isinf: ir.MathFn.ISINF,
    math.sqrt: ir.MathFn.SQRT, math.exp: ir.MathFn.EXP, math.log: ir.MathFn.LOG,
    math.sin: ir.MathFn.SIN, math.cos: ir.MathFn.COS, math.tanh: ir.MathFn.TANH,
    math.pow: ir.MathFn.POW, math.log2: ir.MathFn.LOG2,
    math.tan: ir.MathFn.TAN, math.asin: ir.MathFn.ASIN, math.acos: ir.MathFn.ACOS,
    math.atan: ir.MathFn.ATAN, math.atan2: ir.MathFn.ATAN2, math.sinh: ir.MathFn.SINH,
    math.cosh: ir.MathFn.COSH, math.erf: ir.MathFn.ERF, math.copysign: ir.MathFn.COPYSIGN,
    math.isnan: ir.MathFn.ISNAN, math.isinf: ir.MathFn.ISINF,
}
if hasattr(math, "exp2"):  # Python 3.11+; on 3.10 there is no math.exp2 to call
    MATH_FUNCTIONS[math.exp2] = ir.MathFn.EXP2
# the math functions of complex values (`ir.ComplexCall`): pykern's names and cmath's
_C = ir.ComplexFn
COMPLEX_FUNCTIONS: dict[object, ir.ComplexFn] = {
    bi.sqrt: _C.SQRT, bi.exp: _C.EXP, bi.log: _C.LOG, bi.log2: _C.LOG2, bi.log10: _C.LOG10,
    bi.log1p: _C.LOG1P, bi.expm1: _C.EXPM1, bi.sin: _C.SIN, bi.cos: _C.COS, bi.tan: _C.TAN,
    bi.sinh: _C.SINH, bi.cosh: _C.COSH, bi.tanh: _C.TANH, bi.asin: _C.ASIN, bi.acos: _C.ACOS,
    bi.atan: _C.ATAN, bi.asinh: _C.ASINH, bi.acosh: _C.ACOSH, bi.atanh: _C.ATANH,
    bi.square: _C.SQUARE,
}
# cmath's names: complex results, also of real arguments (cmath.sqrt(-1.0) is 1j)
COMPLEX_ONLY: dict[object, ir.ComplexFn] = {
    cmath.log: _C.LOG, cmath.sqrt: _C.SQRT, cmath.exp: _C.EXP, cmath.log10: _C.LOG10,
    cmath.sin: _C.SIN,
    cmath.cos: _C.COS, cmath.tan: _C.TAN, cmath.sinh: _C.SINH, cmath.cosh: _C.COSH,
    cmath.tanh: _C.TANH, cmath.asin: _C.ASIN, cmath.acos: _C.ACOS, cmath.atan: _C.ATAN,
    cmath.asinh: _C.ASINH, cmath.acosh: _C.ACOSH, cmath.atanh: _C.ATANH,
}
COMPLEX_PARTS = {bi.real: _C.REAL, bi.imag: _C.IMAG, bi.conj: _C.CONJ, bi.angle: _C.ANGLE,
                 cmath.phase: _C.ANGLE}
# the real functions of these names (no MathFn of their own): by identities of others
REAL_EXTRA = (bi.log10, bi.log1p, bi.expm1, bi.asinh, bi.acosh, bi.atanh, bi.square)
# these return Python ints in Python, so they give i32 in a kernel
INT_RESULT_FUNCTIONS: dict[object, ir.MathFn] = {
    math.floor: ir.MathFn.FLOOR, math.ceil: ir.MathFn.CEIL, math.trunc: ir.MathFn.TRUNC,
    round: ir.MathFn.ROUND,
}
ID_BUILTINS = {
    bi.global_id: ir.BuiltinKind.GLOBAL_ID, bi.local_id: ir.BuiltinKind.LOCAL_ID,
    bi.group_id: ir.BuiltinKind.GROUP_ID, bi.group_size: ir.BuiltinKind.GROUP_SIZE,
    bi.num_groups: ir.BuiltinKind.NUM_GROUPS, bi.grid: ir.BuiltinKind.GRID,
}
ATOMICS = {
    bi.atomic_add: ir.AtomicOp.ADD, bi.atomic_sub: ir.AtomicOp.SUB,
    bi.atomic_min: ir.AtomicOp.MIN, bi.atomic_max: ir.AtomicOp.MAX,
    bi.atomic_and_: ir.AtomicOp.AND, bi.atomic_or_: ir.AtomicOp.OR,
    bi.atomic_xor: ir.AtomicOp.XOR, bi.atomic_exchange: ir.AtomicOp.EXCHANGE,
    bi.atomic_cas: ir.AtomicOp.CAS,
}
SUBGROUP = {
    bi.subgroup_size: ir.SubgroupOp.SIZE, bi.subgroup_lane: ir.SubgroupOp.LANE,
    bi.subgroup_add: ir.SubgroupOp.ADD, bi.subgroup_min: ir.SubgroupOp.MIN,
    bi.subgroup_max: ir.SubgroupOp.MAX, bi.subgroup_any: ir.SubgroupOp.ANY,
    bi.subgroup_all: ir.SubgroupOp.ALL, bi.subgroup_broadcast: ir.SubgroupOp.BROADCAST,
    bi.subgroup_shuffle: ir.SubgroupOp.SHUFFLE,
    bi.subgroup_shuffle_xor: ir.SubgroupOp.SHUFFLE_XOR,
    bi.subgroup_prefix_add: ir.SubgroupOp.PREFIX_ADD,
}
# Python's names and pykern's (which also name tensor functions outside kernels) alike
ABS = {abs: 0, bi.abs: 0}
MIN_MAX = {min: ir.BinOpKind.MIN, bi.min: ir.BinOpKind.MIN, max: ir.BinOpKind.MAX,
           bi.max: ir.BinOpKind.MAX}
SUBGROUP_ARITY = {ir.SubgroupOp.SIZE: 0, ir.SubgroupOp.LANE: 0, ir.SubgroupOp.BROADCAST: 2,
                  ir.SubgroupOp.SHUFFLE: 2, ir.SubgroupOp.SHUFFLE_XOR: 2}


class CallTranslator(CoopTranslator):
    """`visit_Call`: the table-driven half of expression translation."""

    def visit_Call(self, node: ast.Call) -> Value:
        callee = self.resolve(node.func)
        name = ast.unparse(node.func)
        if node.keywords and not (self.hashable(callee) and callee in COOP_KEYWORDS):
            raise self.error(node, f"keyword arguments are not supported in a call to {name}()")
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise self.error(node, f"*arguments are not supported in a call to {name}()")
        if callee is None:
            raise self.error(node, f"'{name}' cannot be called inside a kernel")
        handler = self.call_handler(callee)
        if handler is None:
            raise self.error(node, f"'{name}' cannot be called inside a kernel (it is "
                                   f"{getattr(callee, '__name__', type(callee).__name__)}, not a "
                                   "pykern builtin, math function or @pk.func)")
        return handler(callee, node.args, name, node)

    def call_handler(self, callee: object) -> Callable | None:
        if isinstance(callee, DType) or callee in (int, float, bool):
            return self.cast
        if callee is complex:
            return self.complex_constructor
        if getattr(callee, "is_pykern_func", False):
            return self.device_call  # type: ignore[attr-defined]
        try:
            hash(callee)
        except TypeError:
            return None
        for table, handler in self.handler_tables():
            if callee in table:
                return handler
        return None

    def handler_tables(self) -> tuple[tuple[object, Callable], ...]:
        return (
            (ID_BUILTINS, self.id_builtin), (MATH_FUNCTIONS, self.math_call),
            (INT_RESULT_FUNCTIONS, self.int_math_call), (ATOMICS, self.atomic),
            (SUBGROUP, self.subgroup), (ABS, self.abs_call), (MIN_MAX, self.min_max),
            ({pow: 0}, self.pow_call), ({len: 0}, self.len_call),
            ({bi.clamp: 0}, self.clamp), ({bi.select: 0}, self.select),
            ({bi.bitcast: 0}, self.bitcast), (COMPLEX_PARTS, self.complex_parts),
            (COMPLEX_ONLY, self.complex_only), (REAL_EXTRA, self.extra_math),
            (COOP_CALLS, self.coop_call), ({range: 0}, self.misplaced),
            ({bi.shared: 0, bi.local: 0, bi.barrier: 0}, self.misplaced),
        )

    @staticmethod
    def hashable(obj: object) -> bool:
        try:
            hash(obj)
        except TypeError:
            return False
        return True

    # ------------------------------------------------------------ simple builtins

    def check_arity(self, args: list, n: int, name: str, node: ast.AST) -> None:
        if len(args) != n:
            raise self.error(node, f"{name}() takes {n} argument(s), {len(args)} given")

    def misplaced(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        where = {range: "as the iterable of a for loop", bi.barrier: "as a statement",
                 bi.shared: "as the value of an assignment (buf = pk.shared(...))",
                 bi.local: "as the value of an assignment (buf = pk.local(...))"}[callee]
        raise self.error(node, f"{name}() can only be used {where}")

    def cast(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        t = dt.as_dtype(callee)
        self.check_arity(args, 1, name, node)
        value = self.visit(args[0])
        if isinstance(value, PyConst):
            if isinstance(value.value, str):
                raise self.error(node, f"cannot convert the string {value.value!r} to {t.name}")
            if t == dt.bool_:
                return self.typed(PyConst(bool(value.value)), t, node)
            whole = t.is_int and not isinstance(value.value, complex)
            return self.typed(PyConst(int(value.value) if whole else value.value), t, node)
        return self.typed(value, t, node)

    # ------------------------------------------------------------ complex numbers

    def complex_constructor(self, callee: object, args: list, name: str, node: ast.AST
                            ) -> Value:
        """`complex(x)` (the complex type that holds x) and `complex(re, im)`."""
        if not 1 <= len(args) <= 2:
            raise self.error(node, f"complex() takes 1 or 2 arguments, {len(args)} given")
        values = [self.visit(a) for a in args]
        if all(isinstance(v, PyConst) for v in values):
            return self.fold_call(complex, tuple(values), node)  # type: ignore[arg-type]
        loc = self.loc(node)
        if len(values) == 1:
            value = self.strong(values[0], node)
            return self.typed(value, self.complex_type_of([value.type]), node)
        for v, a in zip(values, args):
            if isinstance(v, ir.Expr) and v.type.is_complex:
                raise self.error(a, "complex(re, im) takes real parts, not complex ones",
                                 KernelTypeError)
        t = self.complex_type_of([v.type for v in values if isinstance(v, ir.Expr)])
        parts = tuple(self.typed(v, t.real_dtype, a) for v, a in zip(values, args))
        return ir.ComplexCall(fn=ir.ComplexFn.MAKE, args=parts, type=t, loc=loc)

    @staticmethod
    def complex_type_of(types: list[DType]) -> DType:
        """The complex type that holds values of `types` (c64 unless one is an f64/c128)."""
        return dt.c128 if any(t in (dt.f64, dt.c128) for t in types) else dt.c64

    def complex_operand(self, value: Value, node: ast.AST) -> ir.Expr:
        """`value` as a complex expression (a real one converted)."""
        value = self.strong(value, node)
        if isinstance(value.type, DType) and not value.type.is_complex:
            value = self.typed(value, self.complex_type_of([value.type]), node)
        return value

    def complex_parts(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        """`pk.real`, `pk.imag`, `pk.conj`, `pk.angle` (of real values too, as numpy)."""
        self.check_arity(args, 1, name, node)
        fn = COMPLEX_PARTS[callee]
        value = self.visit(args[0])
        if fn in (ir.ComplexFn.REAL, ir.ComplexFn.IMAG):
            return self.complex_part(fn is ir.ComplexFn.IMAG, value, node)
        if isinstance(value, PyConst):
            return self.fold_call(callee, (value,), node)
        value = self.strong(value, node)
        t = value.type
        if isinstance(t, DType) and not t.is_complex:
            if fn is ir.ComplexFn.CONJ:
                return value
            # the angle of a real number: 0 or pi (nan for nan), as numpy's
            (x,) = self.float_args([value], args)
            zero = ir.Const(value=0.0, type=x.type, loc=self.loc(node))
            return ir.MathCall(fn=ir.MathFn.ATAN2, args=(zero, x), type=x.type,
                               loc=self.loc(node))
        return self.complex_call(fn, value, node)

    def complex_call(self, fn: ir.ComplexFn, value: ir.Expr, node: ast.AST) -> ir.Expr:
        """`fn` of the complex expression `value`."""
        if isinstance(value.type, CoopType):
            raise self.tile_mismatch(value, "number", node)
        t = value.type.real_dtype if fn.real_result else value.type
        return ir.ComplexCall(fn=fn, args=(value,), type=t, loc=self.loc(node))

    def complex_math(self, callee: object, values: list[Value], args: list, name: str,
                     node: ast.AST) -> Value:
        """A math call with a complex argument."""
        fn = COMPLEX_FUNCTIONS.get(callee) or COMPLEX_ONLY.get(callee)
        if fn is None:
            raise self.error(node, f"{name}() is not defined on complex values: use it on "
                                   "abs(z), z.real or z.imag", KernelTypeError)
        if len(values) != 1:
            raise self.error(node, f"{name}() of a complex value takes one argument, "
                                   f"{len(values)} given")
        return self.complex_call(fn, self.complex_operand(values[0], node), node)

    def complex_only(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        """cmath's functions: complex results, also of real arguments (cmath.log(-1))."""
        self.check_arity(args, 1, name, node)
        values = [self.visit(a) for a in args]
        return self.complex_math(callee, values, args, name, node)

    def extra_math(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        """log10, log1p, expm1, asinh, acosh, atanh and square, which have no real math
        instruction of their own: on complex values a ComplexCall, on real ones the call of
        a device function of the real parts' prelude."""
        self.check_arity(args, 1, name, node)
        values = [self.visit(a) for a in args]
        if self.has_complex(values):
            return self.complex_math(callee, values, args, name, node)
        if callee is bi.square:  # x * x, x evaluated once
            return self.binary(ast.Mult, *self.evaluated_once(values[0]), node)
        operand = self.float_args(values, args)[0]
        if callee is bi.log10:  # log10(x) = log2(x) * log10(2)
            log2 = ir.MathCall(fn=ir.MathFn.LOG2, args=(operand,), type=operand.type,
                               loc=self.loc(node))
            return self.binary(ast.Mult, log2, PyConst(math.log10(2.0)), node)
        if not (isinstance(values[0], ir.Expr) and values[0].type.is_float):
            raise self.error(args[0], f"{name}() needs a float argument here: convert it "
                                      f"first, as in {name}(pk.f32(x))", KernelTypeError)
        # its @pk.func needs the frontend loaded, as the f64 prelude's does
        from pykern.lang.real_math import IMPLEMENTATIONS  # (the comment above)

        return self.device_call(IMPLEMENTATIONS[callee], args, name, node)  # type: ignore

    @staticmethod
    def has_complex(values: list[Value]) -> bool:
        return any((isinstance(v, ir.Expr) and isinstance(v.type, DType) and v.type.is_complex)
                   or (isinstance(v, PyConst) and isinstance(v.value, complex)) for v in values)

    def id_builtin(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        self.check_arity(args, 1, name, node)
        dim = self.visit(args[0])
        if not (isinstance(dim, PyConst) and type(dim.value) is int and 0 <= dim.value <= 2):
            raise self.error(args[0], f"the dimension of {name}() must be a constant 0, 1 or 2")
        return ir.Builtin(kind=ID_BUILTINS[callee], dim=dim.value, type=dt.i32,
                          loc=self.loc(node))

    def float_args(self, values: list[Value], args: list) -> tuple[ir.Expr, ...]:
        """Operands of a float function in one float type: the widest float among them, or
        f32 when none is a float (integers are converted)."""
        floats = [v.type for v in values if isinstance(v, ir.Expr) and v.type.is_float]
        t = widest_float(*floats) if floats else dt.f32
        return tuple(self.typed(v, t, a) for v, a in zip(values, args))

    def math_call(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        fn = MATH_FUNCTIONS[callee]
        self.check_arity(args, fn.arity, name, node)
        values = [self.visit(a) for a in args]
        if self.has_complex(values):
            if fn is ir.MathFn.POW:
                return self.binary(ast.Pow, values[0], values[1], node)
            return self.complex_math(callee, values, args, name, node)
        operands = self.float_args(values, args)
        rtype = dt.bool_ if fn.is_predicate else operands[0].type
        return ir.MathCall(fn=fn, args=operands, type=rtype, loc=self.loc(node))

    def int_math_call(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        """`math.floor(x)`, `round(x)`, ...: an int, as in Python."""
        fn = INT_RESULT_FUNCTIONS[callee]
        if callee is round and len(args) == 2:
            raise self.error(node, "round(x, ndigits) is not supported in a kernel; use "
                                   "pk.round(x * 10**n) / 10**n")
        self.check_arity(args, 1, name, node)
        value = self.visit(args[0])
        if isinstance(value, PyConst):
            return self.fold_call(callee, (value,), node)  # type: ignore[arg-type]
        if value.type.is_int or value.type == dt.bool_:
            return self.typed(value, arithmetic_type(value.type), node)
        (operand,) = self.float_args([value], args)
        call = ir.MathCall(fn=fn, args=(operand,), type=operand.type, loc=self.loc(node))
        return self.typed(call, dt.i32, node)

    def abs_call(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        self.check_arity(args, 1, name, node)
        value = self.visit(args[0])
        if isinstance(value, PyConst):
            return self.fold_call(abs, (value,), node)
        if self.has_complex([value]):
            return self.complex_call(ir.ComplexFn.ABS, value, node)
        t = arithmetic_type(value.type)
        return ir.UnaryOp(op=ir.UnaryOpKind.ABS, operand=self.typed(value, t, node), type=t,
                          loc=self.loc(node))

    def min_max(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        if len(args) < 2:
            raise self.error(node, f"{name}() inside a kernel takes two or more numbers")
        kind = MIN_MAX[callee]
        result = self.visit(args[0])
        for arg in args[1:]:
            result = self.min_max_pair(kind, result, self.visit(arg), node)
        return result

    def min_max_pair(self, kind: ir.BinOpKind, a: Value, b: Value, node: ast.AST) -> Value:
        if isinstance(a, PyConst) and isinstance(b, PyConst):
            rule = minimum if kind is ir.BinOpKind.MIN else maximum  # numpy's, as on the device
            return self.fold_call(rule, (a, b), node)
        t = arithmetic_type(self.unify(a, b))
        if t.is_complex:
            raise self.not_on_complex(kind.value, t, node)
        return ir.BinOp(op=kind, lhs=self.typed(a, t, node), rhs=self.typed(b, t, node), type=t,
                        loc=self.loc(node))

    def clamp(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        self.check_arity(args, 3, name, node)
        x, lo, hi = (self.visit(a) for a in args)
        low = self.min_max_pair(ir.BinOpKind.MAX, x, lo, node)
        return self.min_max_pair(ir.BinOpKind.MIN, low, hi, node)

    def select(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        self.check_arity(args, 3, name, node)
        cond = self.truth(self.visit(args[0]), args[0])
        a, b = self.visit(args[1]), self.visit(args[2])
        if isinstance(a, PyConst) and isinstance(b, PyConst):
            t = promote(a.default_type, b.default_type)
        else:
            t = self.unify(a, b)
        return ir.Select(cond=cond, then=self.typed(a, t, args[1]),
                         orelse=self.typed(b, t, args[2]),
                         type=t, loc=self.loc(node))

    def bitcast(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        """pk.bitcast(x, dtype): x's bits as another number type of the same width."""
        self.check_arity(args, 2, name, node)
        target = self.resolve(args[1])
        if target in (int, float):
            target = dt.as_dtype(target)
        value = self.visit(args[0])
        if isinstance(value, PyConst):
            value = self.typed(value, value.default_type, args[0])
        source = value.type if isinstance(value, ir.Expr) else None
        for t, arg, what in ((source, args[0], "x"), (target, args[1], "dtype")):
            if not isinstance(t, DType) or t in (dt.bool_, dt.bf16):
                raise self.error(arg, f"the {what} of {name}() must be a number type (an int "
                                      f"or float dtype, not bool or bf16), not '"
                                      f"{ast.unparse(arg)}'", KernelTypeError)
        if source.bits != target.bits:  # type: ignore[union-attr]
            raise self.error(node, f"{name}() needs types of one width: {source.name} has "
                                   f"{source.bits} bits, {target.name} {target.bits}",
                             KernelTypeError)
        return ir.Bitcast(value=value, type=target, loc=self.loc(node))

    def pow_call(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        self.check_arity(args, 2, name, node)
        return self.binary(ast.Pow, self.visit(args[0]), self.visit(args[1]), node)

    def len_call(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        self.check_arity(args, 1, name, node)
        array = self.array_name(args[0])
        if array is None:
            value = self.visit(args[0])
            if isinstance(value, TupleValue):  # its length is known at compile time
                return PyConst(len(self.tuple_of(value, args[0], "len()")))  # type: ignore
            raise self.error(node, "len() takes an array or a tuple")
        if array in self.ctx.decls:
            return PyConst(self.ctx.decls[array].shape[0])
        return ir.ArrayDim(array=array, axis=0, type=dt.i32, loc=self.loc(node))

    # ------------------------------------------------------------ atomics and subgroups

    def atomic(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        op = ATOMICS[callee]
        self.check_arity(args, 4 if op is ir.AtomicOp.CAS else 3, name, node)
        array = self.array_name(args[0])
        if array is None:
            raise self.error(args[0], f"the first argument of {name}() must be an array")
        decl = self.ctx.decls.get(array)
        if decl is not None and decl.space is ir.MemorySpace.LOCAL:
            raise self.error(args[0], f"{name}() needs a global or pk.shared array; '{array}' is "
                                      "private to the invocation")
        dtype = self.ctx.array_types[array].dtype
        if dtype.is_complex:
            raise self.error(args[0], f"{name}() is not supported on complex ({dtype.name}) "
                                      "arrays: no device has complex atomics; make each "
                                      "element have one writer, or reduce the parts in "
                                      "separate real arrays", KernelTypeError)
        allowed = {dt.i32, dt.u32, dt.i64, dt.u64}
        if op in (ir.AtomicOp.ADD, ir.AtomicOp.SUB, ir.AtomicOp.EXCHANGE, ir.AtomicOp.MIN,
                  ir.AtomicOp.MAX, ir.AtomicOp.CAS):
            allowed = allowed | {dt.f32}
        if dtype not in allowed:
            raise self.error(args[0], f"{name}() is not supported on {dtype.name} arrays "
                                      f"(supported: {', '.join(sorted(t.name for t in allowed))})",
                             KernelTypeError)
        self.note_access(array, ir.Access.READ_WRITE)
        index = args[1]
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        fake = ast.Subscript(value=args[0], slice=ast.Tuple(elts=parts, ctx=ast.Load())
                             if len(parts) > 1 else parts[0], ctx=ast.Load())
        ast.copy_location(fake, index)
        indices = self.indices(array, fake)
        values = [self.typed(self.visit(a), dtype, a) for a in args[2:]]
        comparator, value = (values[0], values[1]) if op is ir.AtomicOp.CAS else (None, values[0])
        return ir.Atomic(op=op, array=array, indices=indices, value=value, comparator=comparator,
                         type=dtype, loc=self.loc(node))

    def subgroup(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        op = SUBGROUP[callee]
        self.check_arity(args, SUBGROUP_ARITY.get(op, 1), name, node)
        loc = self.loc(node)
        if op in (ir.SubgroupOp.SIZE, ir.SubgroupOp.LANE):
            return ir.Subgroup(op=op, type=dt.i32, loc=loc)
        if op in (ir.SubgroupOp.ANY, ir.SubgroupOp.ALL):
            return ir.Subgroup(op=op, args=(self.truth(self.visit(args[0]), args[0]),),
                               type=dt.bool_, loc=loc)
        x = self.strong(self.visit(args[0]), args[0])
        if isinstance(x.type, DType) and x.type.is_complex and op in (ir.SubgroupOp.MIN,
                                                                       ir.SubgroupOp.MAX):
            raise self.not_on_complex(name, x.type, node)
        if op in (ir.SubgroupOp.ADD, ir.SubgroupOp.MIN, ir.SubgroupOp.MAX,
                  ir.SubgroupOp.PREFIX_ADD):
            x = self.typed(x, arithmetic_type(x.type), args[0])
            return ir.Subgroup(op=op, args=(x,), type=x.type, loc=loc)
        lane = self.visit(args[1])
        if op is ir.SubgroupOp.BROADCAST and not (isinstance(lane, PyConst)
                                                  and type(lane.value) is int):
            raise self.error(args[1], f"the lane of {name}() must be a constant (use "
                                      "pk.subgroup_shuffle for a computed lane)")
        if isinstance(lane, ir.Expr) and not arithmetic_type(lane.type).is_int:
            raise self.error(args[1], f"the lane of {name}() must be an integer", KernelTypeError)
        return ir.Subgroup(op=op, args=(x, self.typed(lane, dt.i32, args[1])), type=x.type,
                           loc=loc)
