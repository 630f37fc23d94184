"""Cooperative-matrix tiles in a kernel body: `pk.coop_fill/load/store/mma/convert` and the
operators on tiles (`+ - * /` of two tiles of one type, `-t`, `t * s` and `s * t` by a scalar).

A tile value is an `ir.Expr` whose type is a `CoopType`; it never converts to or from a number
implicitly. Shapes, dtypes and uses are compile-time constants; whether the device multiplies
a combination is checked later, against the device's shapes (`pykern.jit.coop_check`).
"""

from __future__ import annotations

import ast
import math

from pykern import ir
from pykern.errors import KernelTypeError
from pykern.frontend.exprs import ExprTranslator, Value
from pykern.frontend.typerules import PyConst
from pykern.frontend.values import TupleValue
from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern.lang.coop import (ACCUMULATOR, MATRIX_A, MATRIX_B, TILE_ALIGNMENT, TILE_DTYPE_NAMES,
                              CoopType, CoopUse)

COOP_CALLS = {bi.coop_fill: "fill", bi.coop_load: "load", bi.coop_store: "store",
              bi.coop_mma: "mma", bi.coop_convert: "convert"}
# the keyword arguments each accepts (every other call takes none)
COOP_KEYWORDS = {bi.coop_load: ("transpose", "dtype"), bi.coop_store: ("transpose",)}
TILE_OPERATORS = {ast.Add: ir.BinOpKind.ADD, ast.Sub: ir.BinOpKind.SUB,
                  ast.Mult: ir.BinOpKind.MUL, ast.Div: ir.BinOpKind.DIV}


def is_tile(value: object) -> bool:
    return isinstance(value, ir.Expr) and isinstance(value.type, CoopType)


class CoopTranslator(ExprTranslator):
    """The tile half of expression translation (mixed into `CallTranslator`)."""

    def coop_call(self, callee: object, args: list, name: str, node: ast.Call) -> Value:
        self.ctx.uses_tiles = True  # type: ignore[attr-defined]
        kind = COOP_CALLS[callee]
        if kind == "store":
            raise self.error(node, f"{name}() is a statement: it returns nothing")
        keywords = self.coop_keywords(callee, name, node)
        return getattr(self, f"coop_{kind}")(args, keywords, name, node)

    def coop_keywords(self, callee: object, name: str, node: ast.Call) -> dict[str, object]:
        allowed = COOP_KEYWORDS.get(callee, ())
        out: dict[str, object] = {}
        for kw in node.keywords:
            if kw.arg not in allowed:
                raise self.error(kw, f"{name}() takes no keyword argument '{kw.arg}'"
                                     + (f" (it takes {', '.join(allowed)})" if allowed else ""))
            if kw.arg == "dtype":
                out["dtype"] = self.tile_dtype(kw.value, name)
                continue
            value = self.visit(kw.value)
            if not (isinstance(value, PyConst) and isinstance(value.value, bool)):
                raise self.error(kw.value, f"{kw.arg}= of {name}() must be a constant True or "
                                           "False")
            out[kw.arg] = value.value
        return out

    # ------------------------------------------------------------ compile-time operands

    def tile_dtype(self, node: ast.AST, name: str) -> dt.DType:
        t = self.resolve(node)  # pk.f16, a constexpr dtype, or x.dtype
        if t in (int, float, bool):
            t = dt.as_dtype(t)
        if not isinstance(t, dt.DType) or t.name not in TILE_DTYPE_NAMES:
            raise self.error(node, f"the dtype of {name}() must be one of pk."
                                   f"{', pk.'.join(TILE_DTYPE_NAMES)}, not '{ast.unparse(node)}'",
                             KernelTypeError)
        return t

    def tile_size(self, node: ast.AST, what: str, name: str) -> int:
        value = self.visit(node)
        if not (isinstance(value, PyConst) and type(value.value) is int and value.value > 0):
            raise self.error(node, f"the {what} of {name}() must be a constant positive int "
                                   "(a literal or a constexpr)")
        return value.value

    def tile_use(self, node: ast.AST, name: str) -> CoopUse:
        use = self.resolve(node)
        if not isinstance(use, CoopUse):
            raise self.error(node, f"the use of {name}() must be pk.MATRIX_A, pk.MATRIX_B or "
                                   f"pk.ACCUMULATOR, not '{ast.unparse(node)}'")
        return use

    def tile_value(self, node: ast.AST, name: str, what: str = "tile") -> ir.Expr:
        value = self.visit(node)
        if not is_tile(value):
            raise self.error(node, f"the {what} of {name}() must be a tile (made by "
                                   "pk.coop_fill, coop_load, coop_mma, ...)", KernelTypeError)
        return value

    def tile_array(self, node: ast.AST, name: str) -> str:
        array = self.array_name(node)
        if array is None:
            raise self.error(node, f"the first argument of {name}() must be an array "
                                   "parameter or a pk.shared array")
        decl = self.ctx.decls.get(array)
        if decl is not None and decl.space is not ir.MemorySpace.SHARED:
            raise self.error(node, f"{name}() needs a global or pk.shared array; '{array}' is "
                                   "a pk.local array")
        if self.ctx.array_types[array].ndim < 2:
            raise self.error(node, f"{name}() needs an array of 2 or more dimensions; "
                                   f"'{array}' has 1")
        return array

    def tile_indices(self, array: str, row: ast.AST, col: ast.AST, name: str
                     ) -> tuple[ir.Expr, ...]:
        """The index of the tile's first element: `row` is an int, or for an array of more
        than 2 dimensions a tuple of its leading indices and the row, `(b, row)`."""
        ndim = self.ctx.array_types[array].ndim
        lead = row.elts if isinstance(row, ast.Tuple) else [row]
        value = None if isinstance(row, ast.Tuple) else self.visit(row)
        if isinstance(value, TupleValue):
            raise self.error(row, f"write the leading indices of {name}() as a tuple literal, "
                                  "(b, row)")
        if len(lead) + 1 != ndim:
            raise self.error(row, f"'{array}' has {ndim} dimensions: {name}() takes "
                                  + ("its row" if ndim == 2 else
                                     f"a tuple of {ndim - 1} indices (the leading ones and the "
                                     "row)") + " and its column", KernelTypeError)
        parts = [*lead, col]
        fake = ast.Subscript(value=ast.Name(id=array, ctx=ast.Load()),
                             slice=ast.Tuple(elts=parts, ctx=ast.Load()), ctx=ast.Load())
        ast.copy_location(fake, row)
        return self.indices(array, fake)

    # ------------------------------------------------------------ the builtins

    def coop_fill(self, args: list, kw: dict, name: str, node: ast.Call) -> Value:
        self.check_arity(args, 5, name, node)  # type: ignore[attr-defined]
        t = CoopType(self.tile_dtype(args[0], name), self.tile_size(args[1], "rows", name),
                     self.tile_size(args[2], "cols", name), self.tile_use(args[3], name))
        value = self.typed(self.visit(args[4]), t.dtype, args[4])
        return ir.CoopFill(value=value, type=t, loc=self.loc(node))  # type: ignore[arg-type]

    def coop_load(self, args: list, kw: dict, name: str, node: ast.Call) -> Value:
        self.check_arity(args, 6, name, node)  # type: ignore[attr-defined]
        array = self.tile_array(args[0], name)
        dtype = self.ctx.array_types[array].dtype
        if dtype.name not in TILE_DTYPE_NAMES and "dtype" not in kw:
            raise self.error(args[0], f"{name}() cannot load tiles of {dtype.name} ('{array}')",
                             KernelTypeError)
        indices = self.tile_indices(array, args[1], args[2], name)
        t = CoopType(kw.get("dtype", dtype), self.tile_size(args[3], "rows", name),
                     self.tile_size(args[4], "cols", name), self.tile_use(args[5], name))
        self.check_packing(t, dtype, bool(kw.get("transpose")), args[0], name)
        self.check_shared_alignment(array, indices, t, bool(kw.get("transpose")), args[2], name)
        self.note_access(array, ir.Access.READ | ir.Access.TILES)  # type: ignore[attr-defined]
        return ir.CoopLoad(array=array, indices=indices, transpose=kw.get("transpose", False),
                           type=t, loc=self.loc(node))  # type: ignore[arg-type]

    def check_packing(self, t: CoopType, words: dt.DType, transpose: bool, node: ast.AST,
                      name: str) -> None:
        """`dtype=` reads a tile of a narrower type from an array of wider words: the words
        must hold whole tile elements, and the tile's rows (columns with `transpose`) whole
        words."""
        if t.dtype.itemsize == words.itemsize:
            if t.dtype != words:
                raise self.error(node, f"{name}(dtype=pk.{t.dtype.name}) of an array of "
                                       f"{words.name}: a tile reads its array's dtype, or a "
                                       "narrower one packed in wider words", KernelTypeError)
            return
        pack, extent = words.itemsize // t.dtype.itemsize, t.rows if transpose else t.cols
        if words.itemsize % t.dtype.itemsize or not words.is_int or extent % pack:
            raise self.error(node, f"{name}(dtype=pk.{t.dtype.name}) reads {pack} elements from "
                                   f"each {words.name} word: the array must be of unsigned or "
                                   f"signed integer words whose width is a multiple, and the "
                                   f"tile's {'rows' if transpose else 'cols'} a multiple of "
                                   f"{pack}", KernelTypeError)

    def check_shared_alignment(self, array: str, indices: tuple[ir.Expr, ...], t: CoopType,
                               transpose: bool, col: ast.AST, name: str) -> None:
        """A tile's rows in a `pk.shared` array start at multiples of TILE_ALIGNMENT bytes:
        the array's rows (a constant stride) and a constant column are checked here; a column
        computed at run time is the kernel's to keep aligned (the interpreter checks it)."""
        decl = self.ctx.decls.get(array)
        if decl is None:  # parameters: checked at launch (offset, strides)
            return
        item = decl.dtype.itemsize
        row_bytes = decl.shape[-1] * item
        spans_rows = (t.cols if transpose else t.rows) > 1
        if spans_rows and row_bytes % TILE_ALIGNMENT:
            multiple = TILE_ALIGNMENT // math.gcd(item, TILE_ALIGNMENT)
            raise self.error(col, f"{name}() on '{array}', whose rows are {row_bytes} bytes "
                                  f"long: tiles need rows that start at multiples of "
                                  f"{TILE_ALIGNMENT} bytes (make its last dimension a multiple "
                                  f"of {multiple} elements)", KernelTypeError)
        first = indices[-1]
        if isinstance(first, ir.Const) and (int(first.value) * item) % TILE_ALIGNMENT:
            raise self.error(col, f"{name}() at column {first.value} of '{array}' "
                                  f"({decl.dtype.name}): the tile's rows would start at byte "
                                  f"{int(first.value) * item} of a row, and tiles need multiples "
                                  f"of {TILE_ALIGNMENT}", KernelTypeError)

    def coop_store(self, args: list, kw: dict, name: str, node: ast.Call) -> ir.CoopStore:
        """Only as a statement (see `Translator.visit_Expr`)."""
        self.check_arity(args, 4, name, node)  # type: ignore[attr-defined]
        array = self.tile_array(args[0], name)
        tile = self.tile_value(args[3], name)
        dtype = self.ctx.array_types[array].dtype
        if dtype != tile.type.dtype:  # type: ignore[attr-defined]
            raise self.error(node, f"{name}() of a {tile.type.name} into '{array}', an array of "
                                   f"{dtype.name}: convert the tile first with "
                                   f"pk.coop_convert(t, pk.{dtype.name})", KernelTypeError)
        indices = self.tile_indices(array, args[1], args[2], name)
        self.check_shared_alignment(array, indices, tile.type, bool(kw.get("transpose")),  # type: ignore[arg-type]
                                    args[2], name)
        self.note_access(array, ir.Access.WRITE | ir.Access.TILES)  # type: ignore
        return ir.CoopStore(array=array, indices=indices, value=tile,
                            transpose=kw.get("transpose", False), loc=self.loc(node))

    def coop_mma(self, args: list, kw: dict, name: str, node: ast.Call) -> Value:
        self.check_arity(args, 3, name, node)  # type: ignore[attr-defined]
        a, b, c = (self.tile_value(x, name, what) for x, what in
                   zip(args, ("first operand", "second operand", "accumulator")))
        ta, tb, tc = a.type, b.type, c.type
        for t, use, arg in ((ta, MATRIX_A, args[0]), (tb, MATRIX_B, args[1]),
                            (tc, ACCUMULATOR, args[2])):
            if t.use is not use:  # type: ignore[attr-defined]
                raise self.error(arg, f"{name}(a, b, c) needs a {use!r} tile here, not a "
                                      f"{t.name}", KernelTypeError)
        if not (ta.cols == tb.rows and ta.rows == tc.rows and tb.cols == tc.cols  # type: ignore
                and ta.dtype == tb.dtype):  # type: ignore[attr-defined]
            raise self.error(node, f"{name}() of {ta.name} @ {tb.name} + {tc.name}: a is M x K, "
                                   "b K x N of the same dtype, c M x N", KernelTypeError)
        return ir.CoopMma(a=a, b=b, c=c, type=tc, loc=self.loc(node))

    def coop_convert(self, args: list, kw: dict, name: str, node: ast.Call) -> Value:
        self.check_arity(args, 2, name, node)  # type: ignore[attr-defined]
        tile = self.tile_value(args[0], name)
        t = tile.type.with_dtype(self.tile_dtype(args[1], name))  # type: ignore[attr-defined]
        return tile if t == tile.type else ir.Cast(value=tile, type=t, loc=self.loc(node))

    # ------------------------------------------------------------ operators

    def tile_binary(self, op: type, lhs: Value, rhs: Value, node: ast.AST) -> Value:
        loc = self.loc(node)
        if is_tile(lhs) and is_tile(rhs):
            if op not in TILE_OPERATORS:
                raise self.error(node, "tiles combine with + - * / only", KernelTypeError)
            if lhs.type != rhs.type:  # type: ignore[union-attr]
                raise self.error(node, f"elementwise '{ast.unparse(node)}' of a "
                                       f"{lhs.type.name} and a {rhs.type.name}: the tiles "
                                       "must have one dtype, shape and use", KernelTypeError)
            if op is ast.Div and not lhs.type.dtype.is_float:  # type: ignore[union-attr]
                raise self.error(node, "'/' of integer tiles is not supported", KernelTypeError)
            return ir.BinOp(op=TILE_OPERATORS[op], lhs=lhs, rhs=rhs, type=lhs.type,  # type: ignore
                            loc=loc)
        tile, scalar = (lhs, rhs) if is_tile(lhs) else (rhs, lhs)
        if op is ast.Mult or (op is ast.Div and tile is lhs):
            t = tile.type  # type: ignore[union-attr]
            if op is ast.Div and not t.dtype.is_float:
                raise self.error(node, "'/' of an integer tile is not supported",
                                 KernelTypeError)
            value = self.typed(scalar, t.dtype, node)
            if op is ast.Div:
                one = ir.Const(value=1.0, type=t.dtype, loc=loc)
                value = ir.BinOp(op=ir.BinOpKind.DIV, lhs=one, rhs=value, type=t.dtype, loc=loc)
            return ir.CoopScale(matrix=tile, scalar=value, type=t, loc=loc)  # type: ignore
        raise self.error(node, f"'{ast.unparse(node)}': a tile and a number combine only as "
                               "tile * number, number * tile or tile / number (fill a tile with "
                               "pk.coop_fill to add a constant)", KernelTypeError)

    def tile_negate(self, value: ir.Expr, node: ast.AST) -> Value:
        return ir.UnaryOp(op=ir.UnaryOpKind.NEG, operand=value, type=value.type,
                          loc=self.loc(node))

    def not_a_number(self, value: ir.Expr, node: ast.AST) -> Exception:
        return self.error(node, f"a {value.type.name} cannot be used as a number here: tiles "
                                "go to pk.coop_* calls, tile operators and tile variables",
                          KernelTypeError)
