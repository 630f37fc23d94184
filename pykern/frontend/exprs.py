"""Expressions: Python `ast` expression nodes to typed IR expressions.

A visit returns a `Value`: either a typed `ir.Expr` or a `PyConst` (a Python number whose type
the context decides, see typerules). Calls are resolved by the identity of the object the callee
names (`pk.sqrt`, `math.sqrt`, `abs`, `pk.f32`, ...), so aliases and `from pykern import ...`
behave alike.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.coop import CoopType
from pykern.lang.dtypes import DType
from pykern.errors import CompileError, KernelTypeError
from pykern.frontend.depth import Bind
from pykern.frontend.source import is_missing
from pykern.frontend.values import TupleValue, constant_tuple
from pykern.frontend.typerules import (PyConst, arithmetic_type, convert_constant, promote,
                                       type_for_constant)

Value = ir.Expr | PyConst

ARITHMETIC = {
    ast.Add: ir.BinOpKind.ADD, ast.Sub: ir.BinOpKind.SUB, ast.Mult: ir.BinOpKind.MUL,
    ast.FloorDiv: ir.BinOpKind.FLOORDIV, ast.Mod: ir.BinOpKind.MOD, ast.Pow: ir.BinOpKind.POW,
}
BITWISE = {ast.BitAnd: ir.BinOpKind.BIT_AND, ast.BitOr: ir.BinOpKind.BIT_OR,
           ast.BitXor: ir.BinOpKind.BIT_XOR}
SHIFTS = {ast.LShift: ir.BinOpKind.LSHIFT, ast.RShift: ir.BinOpKind.RSHIFT}
COMPARISONS = {
    ast.Eq: ir.BinOpKind.EQ, ast.NotEq: ir.BinOpKind.NE, ast.Lt: ir.BinOpKind.LT,
    ast.LtE: ir.BinOpKind.LE, ast.Gt: ir.BinOpKind.GT, ast.GtE: ir.BinOpKind.GE,
}
# how messages name an operator
PY_SYMBOLS: dict[type, str] = {
    ast.FloorDiv: "//", ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.LShift: "<<", ast.RShift: ">>", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
}
# Python's own operators, to fold expressions of constants with Python's semantics
PY_OPERATORS: dict[type, Callable] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}


def snippet(node: ast.AST, limit: int = 60) -> str:
    """The source text of `node`, shortened to `limit` characters, for messages."""
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - a node ast cannot print (or nested too deeply)
        return type(node).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def describe(node: ast.AST) -> str:
    """A short human name for an unsupported construct."""
    return {
        "Lambda": "lambda", "ListComp": "list comprehension", "DictComp": "dict comprehension",
        "SetComp": "set comprehension", "GeneratorExp": "generator expression",
        "List": "list", "Tuple": "tuple", "Dict": "dict", "Set": "set", "JoinedStr": "f-string",
        "Await": "await", "Yield": "yield", "YieldFrom": "yield from", "Starred": "starred *",
        "NamedExpr": "walrus ':='", "Slice": "slice", "Try": "try", "With": "with",
        "Raise": "raise", "Global": "global", "Nonlocal": "nonlocal", "Delete": "del",
        "FunctionDef": "nested def", "ClassDef": "class definition", "Import": "import",
        "ImportFrom": "import", "Match": "match", "AsyncFor": "async for",
        "BinOp": "operator", "UnaryOp": "unary operator", "BoolOp": "boolean operator",
        "Compare": "comparison", "Call": "call", "Subscript": "subscript",
        "Attribute": "attribute", "Name": "name", "Constant": "constant",
        "IfExp": "conditional expression", "Assign": "assignment",
        "AugAssign": "augmented assignment", "AnnAssign": "annotated assignment",
        "If": "if statement", "For": "for loop", "While": "while loop", "Return": "return",
        "Expr": "expression statement", "Assert": "assert",
    }.get(type(node).__name__, type(node).__name__)


def is_compile_time_object(value: object) -> bool:
    """A dtype or a `@pk.func`: usable inside a kernel as a type or callee, never as a value."""
    return isinstance(value, DType) or getattr(value, "is_pykern_func", False) is True


def not_a_value(name: str, value: object) -> str:
    if isinstance(value, DType):
        return (f"'{name}' is the type {value.name}, not a value: use it where a dtype goes, "
                f"as in {name}(x) or pk.local({name}, 4)")
    return f"'{name}' is a device function, not a value: call it, as in {name}(...)"


def has_effects(e: ir.Expr) -> bool:
    """Whether evaluating `e` twice could differ from evaluating it once: it calls a device
    function, does an atomic or a subgroup operation (whose value depends on which
    invocations take part)."""
    return any(isinstance(n, (ir.Call, ir.Atomic, ir.Subgroup)) for n in ir.walk(e))


class ExprTranslator(ast.NodeVisitor):
    """Expression half of the translator; `Translator` adds statements and the state: `src`
    (KernelSource), `params` (scalar parameters), `aliases` (array names in scope -> kernel
    names), `locals`, `assigned`, `constants`, `ctx` (per-kernel context), `loc`, `error`."""

    def visit(self, node: ast.AST) -> Any:
        """Translates `node`. An exception that is not a CompileError (a case a check missed)
        becomes one located at the innermost node being translated, as Triton's code generator
        does, so no raw Python error escapes the compiler."""
        try:
            return super().visit(node)
        except CompileError:
            raise
        except RecursionError:
            raise self.error(node, "expression nested too deeply to compile: split it with "
                                   "intermediate variables") from None
        except Exception as e:  # noqa: BLE001 - turned into a located error, the cause kept
            raise self.error(node, f"cannot compile {describe(node)} '{snippet(node)}': "
                                   f"{type(e).__name__}: {e}") from e

    def fresh_local(self, t: DType, loc: ir.Loc) -> str:
        raise NotImplementedError  # the Translator's

    # ------------------------------------------------------------ helpers on values

    def not_scalar(self, value: object, node: ast.AST) -> CompileError:
        """The error for a tuple (or another compile-time object) where a scalar is needed."""
        n = len(value) if isinstance(value, TupleValue) else 0
        return self.error(node, f"a tuple of {n} cannot be used as a value here: unpack it "
                                "(a, b = ...) or index it with a constant", KernelTypeError)

    def typed(self, value: Value, t: DType, node: ast.AST) -> ir.Expr:
        """`value` converted to type `t` (a Cast where needed, a checked constant for PyConst)."""
        if not isinstance(value, (PyConst, ir.Expr)):
            raise self.not_scalar(value, node)
        if isinstance(value, PyConst):
            if isinstance(value.value, str):
                raise self.error(node, f"the string {value.value!r} can only be compared "
                                       "(==, !=) with another constant", KernelTypeError)
            try:
                return ir.Const(value=convert_constant(value.value, t), type=t, loc=self.loc(node))
            except (ValueError, OverflowError) as e:  # OverflowError: an int beyond any float
                raise self.error(node, f"constant {e}", KernelTypeError) from None
        if value.type == t:
            return value
        if isinstance(value.type, CoopType) or isinstance(t, CoopType):
            raise self.tile_mismatch(value, t, node)
        if value.type.is_complex and not t.is_complex:
            if t == dt.bool_:
                return self.truth(value, node)
            raise self.error(node, f"a {value.type.name} value cannot become {t.name}: the "
                                   "imaginary part would be lost; take .real (or abs(z)) for a "
                                   "real value", KernelTypeError)
        return ir.Cast(value=value, type=t, loc=value.loc)

    def tile_mismatch(self, value: Value, t: object, node: ast.AST) -> CompileError:
        """The error for a tile where a number (or another tile type) goes, or the reverse."""
        have = value.type.name if isinstance(value, ir.Expr) else "a number"
        want = t.name if isinstance(t, (DType, CoopType)) else str(t)
        return self.error(node, f"a {have} value where a {want} is needed: tiles never convert "
                                "implicitly (pk.coop_convert changes a tile's dtype)",
                          KernelTypeError)

    def strong(self, value: Value, node: ast.AST) -> ir.Expr:
        """`value` with a type: a PyConst gets its default type."""
        if not isinstance(value, (PyConst, ir.Expr)):
            raise self.not_scalar(value, node)
        if isinstance(value, PyConst):
            return self.typed(value, value.default_type, node)
        return value

    def truth(self, value: Value, node: ast.AST) -> ir.Expr:
        """Python truthiness as a bool_ expression."""
        if not isinstance(value, (PyConst, ir.Expr)):
            raise self.not_scalar(value, node)
        if isinstance(value, PyConst):
            return ir.Const(value=bool(value.value), type=dt.bool_, loc=self.loc(node))
        if isinstance(value.type, CoopType):
            raise self.tile_mismatch(value, dt.bool_, node)
        if value.type == dt.bool_:
            return value
        zero = ir.Const(value=0j if value.type.is_complex else 0.0 if value.type.is_float else 0,
                        type=value.type, loc=value.loc)
        return ir.BinOp(op=ir.BinOpKind.NE, lhs=value, rhs=zero, type=dt.bool_, loc=value.loc)

    def unify(self, lhs: Value, rhs: Value) -> DType:
        """The common type of two operands, at least one of them typed."""
        for v in (lhs, rhs):
            if isinstance(v, ir.Expr) and isinstance(v.type, CoopType):
                raise self.tile_mismatch(v, "number", v)  # type: ignore[arg-type]
        if isinstance(lhs, PyConst):
            return promote(type_for_constant(lhs, rhs.type), rhs.type)  # type: ignore[union-attr]
        if isinstance(rhs, PyConst):
            return promote(lhs.type, type_for_constant(rhs, lhs.type))
        return promote(lhs.type, rhs.type)

    def not_on_complex(self, what: str, t: DType, node: ast.AST) -> CompileError:
        """The error for an operation that complex numbers do not have (an order, floor
        division, bits)."""
        return self.error(node, f"'{what}' is not defined on complex values ({t.name}): "
                                "complex numbers have no order, floor or bits; compare or "
                                "combine abs(z), z.real or z.imag instead", KernelTypeError)

    def fold(self, op: type, lhs: PyConst, rhs: PyConst, node: ast.AST) -> PyConst:
        return self.fold_call(PY_OPERATORS[op], (lhs, rhs), node)

    def fold_call(self, fn: Callable, args: tuple[PyConst, ...], node: ast.AST) -> PyConst:
        """`fn` applied to constants at compile time, with Python's semantics; where Python
        raises (`"a" + 1`, `1 // 0`, `abs("s")`) a located error says why."""
        try:
            return PyConst(fn(*(a.value for a in args)))
        except (ArithmeticError, ValueError, TypeError) as e:
            raise self.error(node, f"constant expression '{snippet(node)}' fails: {e}"
                             ) from None

    # ------------------------------------------------------------ leaves

    def visit_Constant(self, node: ast.Constant) -> Value:
        if isinstance(node.value, (bool, int, float, complex, str)):
            return PyConst(node.value)  # a str only takes part in constant comparisons
        raise self.error(node, f"constant {node.value!r} of type {type(node.value).__name__} "
                               "is not supported in a kernel (numbers, bools and strings only)")

    def visit_Name(self, node: ast.Name) -> Value:
        name = node.id
        if name in self.static_values:  # a pk.static_range variable: a constant in each copy
            return PyConst(self.static_values[name])
        if name in self.tuple_vars:
            return self.tuple_variable(name, node)  # type: ignore[attr-defined]
        if name in self.locals:
            why = self.flow.unassigned(name)
            if why is not None:
                raise self.error(node, f"'{name}' may be unassigned here: {why}")
            local = self.locals[name]
            return ir.LocalRef(name=name, type=local.type, loc=self.loc(node))
        if name in self.assigned:
            raise self.error(node, self.never_assigned(name, node))
        if name in self.constants:
            value = self.constants[name]
            if is_compile_time_object(value):
                raise self.error(node, not_a_value(name, value), KernelTypeError)
            return constant_tuple(value) or PyConst(value)  # type: ignore[arg-type]
        if name in self.aliases:
            raise self.error(node, f"array '{name}' cannot be used as a value: index it, "
                                   f"as in {name}[i]", KernelTypeError)
        if name in self.params:
            return ir.ScalarParam(name=name, type=self.params[name], loc=self.loc(node))
        return self.captured(self.src.lookup(name), name, node)

    def never_assigned(self, name: str, node: ast.Name) -> str:
        """Why `name`, which the function assigns somewhere, has no value at this read where
        nothing translated so far assigned it."""
        first = self.assigned[name]
        where = self.loc(first)
        if (first.lineno, first.col_offset) > (node.lineno, node.col_offset):
            return f"local variable '{name}' is used before it is assigned (at {where})"
        # an assignment before the read that was not translated
        return (f"'{name}' may be unassigned here: it is only assigned at {where}, in code "
                "this variant does not compile (the branch not taken of a compile-time if, "
                "or code after a return, break or continue)")

    def captured(self, obj: object, name: str, node: ast.AST) -> Value:
        """A value captured from the enclosing scope at compile time."""
        if is_missing(obj):
            raise self.error(node, f"name '{name}' is not defined")
        if isinstance(obj, dt.constexpr):
            obj = obj.value
        if is_compile_time_object(obj):
            raise self.error(node, not_a_value(name, obj), KernelTypeError)
        if isinstance(obj, (bool, int, float, complex, str)):
            return PyConst(obj)  # a str only takes part in constant comparisons
        if constant_tuple(obj) is not None:
            return constant_tuple(obj)  # type: ignore[return-value]
        if hasattr(obj, "dtype") and getattr(obj, "shape", None) == ():  # numpy scalar
            return PyConst(obj.item())  # type: ignore[attr-defined]
        raise self.error(node, f"'{name}' is a {type(obj).__name__}: a kernel can only capture "
                               "numbers, bools, tuples of them, dtypes and @pk.funcs from the "
                               "enclosing scope", KernelTypeError)

    def resolve(self, node: ast.AST) -> object:
        """The Python object a dotted name (`pk.sqrt`, `math.pi`) refers to, without evaluating
        anything else; `None` when the node is not a dotted name of a non-local object."""
        if isinstance(node, ast.Name):
            if node.id in self.constants and is_compile_time_object(self.constants[node.id]):
                return self.constants[node.id]  # a constexpr dtype or @pk.func
            if (node.id in self.locals or node.id in self.params or node.id in self.assigned
                    or node.id in self.constants or node.id in self.aliases):
                return None
            obj = self.src.lookup(node.id)
            if isinstance(obj, dt.constexpr):
                obj = obj.value
            return None if is_missing(obj) else obj
        if isinstance(node, ast.Attribute) and node.attr == "dtype":
            own = self.dtype_of(node.value)
            if own is not None:
                return own
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is None:
                return None
            if not hasattr(base, node.attr):
                raise self.error(node, f"'{node.attr}' is not an attribute of "
                                       f"{getattr(base, '__name__', type(base).__name__)}")
            return getattr(base, node.attr)
        if isinstance(node, ast.Subscript):  # `FUNCS[s]`: an element of a captured tuple
            base = self.resolve(node.value)
            if not isinstance(base, (tuple, list)):
                return None
            return base[self.constant_index(node.slice, len(base),
                                            "an element of a captured tuple is taken",
                                            "a tuple of ")]
        return None

    def constant_index(self, node: ast.AST, size: int, use: str, tuple_words: str) -> int:
        """The index `node` into a tuple of `size` elements: a compile-time int in range
        (negative counts from the end), else a CompileError that says how the tuple is used
        (`use`: "... at a constant index") or names it (`tuple_words` + its size)."""
        k = self.visit(node)
        if not (isinstance(k, PyConst) and type(k.value) is int):
            raise self.error(node, f"{use} at a constant index (a literal, a constexpr or a "
                                   "pk.static_range variable)")
        if not -size <= k.value < size:
            raise self.error(node, f"index {k.value} is out of range for {tuple_words}{size}")
        return k.value

    def dtype_of(self, node: ast.AST) -> DType | None:
        """The dtype `node.dtype` names when `node` is an array, a scalar parameter or a typed
        local of this function; None for anything else."""
        if not isinstance(node, ast.Name):
            return None
        array = self.array_name(node)
        if array is not None:
            return self.ctx.array_types[array].dtype
        if node.id in self.locals:
            return self.locals[node.id].type
        if node.id in self.params:
            return self.params[node.id]
        return None

    def visit_Attribute(self, node: ast.Attribute) -> Value:
        if node.attr in ("real", "imag") and self.array_name(node.value) is None and \
                self.resolve(node.value) is None:
            return self.complex_part(node.attr == "imag", self.visit(node.value), node)
        if node.attr == "shape" and self.array_name(node.value) is not None:
            return self.shape_tuple(self.array_name(node.value), node)  # type: ignore
        if node.attr == "dtype" and self.dtype_of(node.value) is not None:
            raise self.error(node, f"'{snippet(node)}' is a type, not a value: use it where a "
                                   f"dtype goes, as in {snippet(node)}(0) or "
                                   f"pk.local({snippet(node)}, 4)", KernelTypeError)
        if isinstance(node.value, ast.Name) and (node.value.id in self.params
                                                 or node.value.id in self.aliases):
            raise self.error(node, f"'.{node.attr}' of a parameter is not supported here "
                                   f"(arrays have .shape[k], used as {node.value.id}.shape[0])")
        obj = self.resolve(node)
        if obj is None:
            raise self.error(node, f"attribute '.{node.attr}' is not supported here")
        return self.captured(obj, ast.unparse(node), node)

    def complex_part(self, imag: bool, value: Value, node: ast.AST) -> Value:
        """`z.real` / `z.imag` (`pk.real`, `pk.imag`): a value of the part type; of a real
        value, the value itself and a zero of its type, as numpy."""
        if isinstance(value, PyConst) and not isinstance(value.value, str):
            return PyConst(value.value.imag if imag else value.value.real)
        value = self.strong(value, node)
        if isinstance(value.type, CoopType):
            raise self.tile_mismatch(value, "number", node)
        t = value.type
        if t.is_complex:
            fn = ir.ComplexFn.IMAG if imag else ir.ComplexFn.REAL
            return ir.ComplexCall(fn=fn, args=(value,), type=t.real_dtype, loc=self.loc(node))
        if not imag:
            return value
        zero = False if t == dt.bool_ else 0.0 if t.is_float else 0
        return ir.Const(value=zero, type=t, loc=self.loc(node))

    # ------------------------------------------------------------ arrays

    def array_name(self, node: ast.AST) -> str | None:
        """The kernel-level name of the array `node` names (a parameter, a pk.shared/pk.local
        array, or in a device function the caller's array bound to a parameter), else None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        return None

    def indices(self, array: str, node: ast.Subscript) -> tuple[ir.Expr, ...]:
        """The i32 indices of `array[...]`, one per dimension."""
        ndim = self.ctx.array_types[array].ndim
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(p, ast.Slice) for p in parts):
            raise self.error(node, f"slicing '{array}' inside a kernel is not supported: "
                                   "index one element, as in a[i]")
        values = None
        if len(parts) == 1:  # a[idx] with idx a tuple, as from pk.unravel, or one index
            value = self.visit(parts[0])
            if isinstance(value, TupleValue):
                values = self.tuple_of(value, parts[0], "an index").elements  # type: ignore
                parts = [parts[0]] * len(values)
            else:
                values = [value]
        if len(parts) != ndim:
            raise self.error(node, f"'{array}' has {ndim} dimension(s) but {len(parts)} "
                                   "index(es) were given", KernelTypeError)
        out = []
        for k, part in enumerate(parts):
            value = self.visit(part) if values is None else values[k]
            if isinstance(value, ir.Expr) and not value.type.is_int:
                raise self.error(part, f"array index must be an integer, not {value.type.name}",
                                 KernelTypeError)
            if isinstance(value, PyConst) and not isinstance(value.value, int):
                raise self.error(part, "array index must be an integer", KernelTypeError)
            out.append(self.typed(value, dt.i32, part))
        return tuple(out)

    def visit_Subscript(self, node: ast.Subscript) -> Value:
        array = self.array_name(node.value)
        if array is not None:
            self.note_access(array, ir.Access.READ)
            idx = self.indices(array, node)
            return ir.ArrayLoad(array=array, indices=idx,
                                type=self.ctx.array_types[array].dtype, loc=self.loc(node))
        shape_of = node.value
        if isinstance(shape_of, ast.Attribute) and shape_of.attr == "shape" and not isinstance(
                node.slice, ast.Slice):
            array = self.array_name(shape_of.value)
            if array is not None:
                return self.shape_dim(array, node)
        if isinstance(shape_of, (ast.Tuple, ast.Call, ast.Attribute)) or (
                isinstance(shape_of, ast.Name) and (
                    shape_of.id in self.tuple_vars or isinstance(self.resolve(shape_of), tuple)
                    or isinstance(self.constants.get(shape_of.id), tuple))):
            value = self.visit(shape_of)
            if isinstance(value, TupleValue):
                return self.tuple_item(value, node)  # type: ignore[attr-defined]
        raise self.error(node, "only arrays passed as parameters can be indexed")

    def shape_dim(self, array: str, node: ast.Subscript) -> Value:
        ndim = self.ctx.array_types[array].ndim
        axis = self.visit(node.slice)
        if not (isinstance(axis, PyConst) and isinstance(axis.value, int)):
            raise self.error(node.slice, "the axis of .shape[...] must be a constant integer")
        k = axis.value + ndim if axis.value < 0 else axis.value
        if not 0 <= k < ndim:
            raise self.error(node.slice, f"axis {axis.value} is out of range for '{array}', "
                                         f"which has {ndim} dimension(s)")
        if array in self.ctx.decls:  # shared and local arrays have a constant shape
            return PyConst(self.ctx.decls[array].shape[k])
        return ir.ArrayDim(array=array, axis=k, type=dt.i32, loc=self.loc(node))

    # ------------------------------------------------------------ operators

    def visit_BinOp(self, node: ast.BinOp) -> Value:
        return self.binary(type(node.op), self.visit(node.left), self.visit(node.right), node)

    def binary(self, op: type, lhs: Value, rhs: Value, node: ast.AST) -> Value:
        """`lhs op rhs` for a Python ast operator class `op` (shared by BinOp and AugAssign)."""
        if isinstance(lhs, TupleValue) or isinstance(rhs, TupleValue):
            return self.tuple_arithmetic(op, lhs, rhs, node)  # type: ignore[attr-defined]
        if any(isinstance(v, ir.Expr) and isinstance(v.type, CoopType) for v in (lhs, rhs)):
            return self.tile_binary(op, lhs, rhs, node)  # type: ignore[attr-defined]
        for operand in (lhs, rhs):
            if not isinstance(operand, (PyConst, ir.Expr)):
                raise self.not_scalar(operand, node)
        if isinstance(lhs, PyConst) and isinstance(rhs, PyConst) and op in PY_OPERATORS:
            return self.fold(op, lhs, rhs, node)
        loc = self.loc(node)
        if op is ast.Div:
            t = self.unify(lhs, rhs)
            t = t if t.is_float or t.is_complex else dt.f32
            return ir.BinOp(op=ir.BinOpKind.DIV, lhs=self.typed(lhs, t, node),
                            rhs=self.typed(rhs, t, node), type=t, loc=loc)
        if op in ARITHMETIC:
            t = arithmetic_type(self.unify(lhs, rhs))
            if t.is_complex and op in (ast.FloorDiv, ast.Mod):
                raise self.not_on_complex(PY_SYMBOLS[op], t, node)
            return ir.BinOp(op=ARITHMETIC[op], lhs=self.typed(lhs, t, node),
                            rhs=self.typed(rhs, t, node), type=t, loc=loc)
        if op in BITWISE:
            t = self.unify(lhs, rhs)
            if t.is_complex:
                raise self.not_on_complex(PY_SYMBOLS[op], t, node)
            if t.is_float:
                raise self.error(node, f"bitwise operator '{ast.unparse(node)}' needs integer "
                                       f"or bool operands, not {t.name}", KernelTypeError)
            return ir.BinOp(op=BITWISE[op], lhs=self.typed(lhs, t, node),
                            rhs=self.typed(rhs, t, node), type=t, loc=loc)
        if op in SHIFTS:
            base = lhs if isinstance(lhs, ir.Expr) else self.typed(lhs, self.unify(lhs, rhs), node)
            t = arithmetic_type(base.type)
            if not t.is_int:
                raise self.error(node, f"shift needs integer operands, not {t.name}",
                                 KernelTypeError)
            if isinstance(rhs, ir.Expr) and not arithmetic_type(rhs.type).is_int:
                raise self.error(node, f"shift count must be an integer, not {rhs.type.name}",
                                 KernelTypeError)
            return ir.BinOp(op=SHIFTS[op], lhs=self.typed(base, t, node),
                            rhs=self.shift_count(rhs, t, node), type=t, loc=loc)
        raise self.error(node, f"operator '{type(node).__name__ if op is None else op.__name__}' "
                               "is not supported in a kernel")

    def shift_count(self, count: Value, t: DType, node: ast.AST) -> ir.Expr:
        """A shift count as the shifted type `t`, keeping whether it shifts everything out: a
        count is compared with the width as an unsigned number (a negative one shifts all out),
        so a count of a wider type is first limited to `t.bits` in its own width (converting
        `256` to u8, or `2**32` to i32, would give 0 and shift nothing)."""
        if isinstance(count, PyConst) and type(count.value) is int and count.value > t.bits:
            count = PyConst(t.bits)
        if isinstance(count, ir.Expr) and count.type.is_int and count.type.bits > t.bits:
            wide = {8: dt.u8, 16: dt.u16, 32: dt.u32, 64: dt.u64}[count.type.bits]
            as_unsigned = self.typed(count, wide, node)
            count = ir.BinOp(op=ir.BinOpKind.MIN, lhs=as_unsigned,
                             rhs=ir.Const(value=t.bits, type=wide, loc=count.loc), type=wide,
                             loc=count.loc)
        return self.typed(count, t, node)

    def compare(self, op: type, lhs: Value, rhs: Value, node: ast.AST) -> Value:
        if op not in COMPARISONS:
            raise self.error(node, f"comparison '{op.__name__}' is not supported in a kernel "
                                   "(use == != < <= > >=)")
        for operand in (lhs, rhs):
            if not isinstance(operand, (PyConst, ir.Expr)):
                raise self.not_scalar(operand, node)
        if isinstance(lhs, PyConst) and isinstance(rhs, PyConst):
            return self.fold(op, lhs, rhs, node)
        t = self.unify(lhs, rhs)
        if t.is_complex and op not in (ast.Eq, ast.NotEq):
            raise self.not_on_complex(PY_SYMBOLS[op], t, node)
        return ir.BinOp(op=COMPARISONS[op], lhs=self.typed(lhs, t, node),
                        rhs=self.typed(rhs, t, node), type=dt.bool_, loc=self.loc(node))

    def visit_Compare(self, node: ast.Compare) -> Value:
        same = self.compare_compile_time_objects(node)
        if same is not None:
            return same
        # a < b < c is (a < b) and (b < c), b evaluated once: a b with effects (a call, an
        # atomic, a subgroup operation) is bound to a local where (a < b) evaluates it, and
        # (b < c) reads the local
        operands = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
        first, later = list(operands), list(operands)
        for k in range(1, len(operands) - 1):
            first[k], later[k] = self.evaluated_once(operands[k])
        result: Value | None = None
        for i, op in enumerate(node.ops):
            part = self.compare(type(op), later[i], first[i + 1], node)
            result = part if result is None else self.logical(ir.LogicalKind.AND, result, part,
                                                              node)
        assert result is not None
        return result

    def evaluated_once(self, value: Value) -> tuple[Value, Value]:
        """(the first use, the later uses) of a value an expression reads more than once:
        `value` itself for both, or, where it has effects (a call, an atomic, a subgroup
        operation), a `Bind` of it to a fresh local and reads of that local."""
        if not (isinstance(value, ir.Expr) and has_effects(value)):
            return value, value
        name = self.fresh_local(value.type, value.loc)
        return (Bind(name=name, value=value, type=value.type, loc=value.loc),
                ir.LocalRef(name=name, type=value.type, loc=value.loc))

    def compare_compile_time_objects(self, node: ast.Compare) -> PyConst | None:
        """`t == pk.f32`, `op is not square`, `x.dtype != y.dtype`: decided at compile time
        when a side is a dtype or @pk.func (so `if acc == pk.f64:` compiles one branch)."""
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Is,
                                                               ast.IsNot)):
            return None
        lhs, rhs = self.resolve(node.left), self.resolve(node.comparators[0])
        if not (is_compile_time_object(lhs) or is_compile_time_object(rhs)):
            return None
        if lhs is None or rhs is None:
            raise self.error(node, "a dtype or device function compares only with another "
                                   "one (==, !=, is, is not)", KernelTypeError)
        same = lhs is rhs if isinstance(node.ops[0], (ast.Is, ast.IsNot)) else lhs == rhs
        return PyConst(same if isinstance(node.ops[0], (ast.Eq, ast.Is)) else not same)

    def logical(self, kind: ir.LogicalKind, lhs: Value, rhs: Value, node: ast.AST) -> Value:
        if isinstance(lhs, PyConst) and isinstance(rhs, PyConst):
            both = (lhs.value and rhs.value) if kind is ir.LogicalKind.AND else (lhs.value or
                                                                                 rhs.value)
            return PyConst(bool(both))
        return ir.Logical(op=kind, lhs=self.truth(lhs, node), rhs=self.truth(rhs, node),
                          type=dt.bool_, loc=self.loc(node))

    def visit_BoolOp(self, node: ast.BoolOp) -> Value:
        kind = ir.LogicalKind.AND if isinstance(node.op, ast.And) else ir.LogicalKind.OR
        result = self.visit(node.values[0])
        for operand in node.values[1:]:
            result = self.logical(kind, result, self.visit(operand), node)
        return result

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Value:
        value = self.visit(node.operand)
        if not isinstance(value, (PyConst, ir.Expr)):
            raise self.not_scalar(value, node)
        loc = self.loc(node)
        if isinstance(node.op, ast.Not):
            if isinstance(value, PyConst):
                return PyConst(not value.value)
            return ir.UnaryOp(op=ir.UnaryOpKind.NOT, operand=self.truth(value, node),
                              type=dt.bool_, loc=loc)
        if isinstance(value, PyConst):
            fn = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
            return self.fold_call(fn[type(node.op)], (value,), node)
        if isinstance(value.type, CoopType):
            if isinstance(node.op, ast.UAdd):
                return value
            if isinstance(node.op, ast.USub):
                return self.tile_negate(value, node)  # type: ignore[attr-defined]
            raise self.tile_mismatch(value, "number", node)
        t = arithmetic_type(value.type)
        if isinstance(node.op, ast.UAdd):
            return self.typed(value, t, node)
        if isinstance(node.op, ast.Invert):
            if not t.is_int:
                raise self.error(node, f"'~' needs an integer operand, not {t.name}",
                                 KernelTypeError)
            return ir.UnaryOp(op=ir.UnaryOpKind.INVERT, operand=self.typed(value, t, node),
                              type=t, loc=loc)
        return ir.UnaryOp(op=ir.UnaryOpKind.NEG, operand=self.typed(value, t, node), type=t,
                          loc=loc)

    def visit_IfExp(self, node: ast.IfExp) -> Value:
        cond = self.truth(self.visit(node.test), node.test)
        then, orelse = self.visit(node.body), self.visit(node.orelse)
        if isinstance(then, PyConst) and isinstance(orelse, PyConst):
            t = promote(then.default_type, orelse.default_type)
        else:
            t = self.unify(then, orelse)
        return ir.IfExp(cond=cond, then=self.typed(then, t, node.body),
                        orelse=self.typed(orelse, t, node.orelse), type=t, loc=self.loc(node))

    def generic_visit(self, node: ast.AST) -> Value:
        raise self.error(node, f"{describe(node)} is not supported in a kernel")
