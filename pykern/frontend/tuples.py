"""Tuples in kernels: unpacking assignments, tuple returns from device functions, array shapes,
`pk.unravel` and `pk.ravel`.

A tuple is never a runtime value: the frontend lowers it away, so the IR (and every backend)
only sees scalars. A `TupleValue` is the frontend's handle on one while a statement is
translated: its elements, and the statements that must run before they are read (the call of
a device function that returns a tuple). A device function returns a tuple through one hidden
per-invocation slot per element (a one-element `pk.local` array, reachable from every
function, and safe because device functions never recurse): `return q, r` stores into the
slots and returns, `a, b = f(x)` calls `f` and reads them.
"""

from __future__ import annotations

import ast
from typing import Any
from pykern import ir
from pykern.errors import KernelTypeError
from pykern.frontend.calls import CallTranslator
from pykern.frontend.exprs import Value
from pykern.frontend.flow import Assignments
from pykern.frontend.typerules import PyConst, arithmetic_type
from pykern.frontend.values import TupleValue
from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType

SIDE_EFFECTS = (ir.Call, ir.Atomic, ir.Subgroup)  # what must not be evaluated twice


def zero_of(t: DType, loc: ir.Loc) -> ir.Const:
    return ir.Const(value=False if t == dt.bool_ else 0.0 if t.is_float else 0, type=t, loc=loc)


class TupleTranslator(CallTranslator):
    """The tuple half of statement and call translation (see the module docstring). The state
    it uses is the Translator's, declared here for readers and type checkers."""

    return_tuple: tuple[DType, ...] | None = None  # the element types a device function returns
    return_slots: tuple[str, ...] = ()
    function: str | None
    return_type: DType | None
    locals: dict[str, ir.Local]
    aliases: dict[str, str]
    tuple_vars: dict[str, tuple[str, ...]]
    tuple_var_locs: dict[str, ir.Loc]
    flow: Assignments
    ctx: Any

    def fresh_local(self, t: DType, loc: ir.Loc) -> str:
        raise NotImplementedError  # the Translator's

    def assign_to(self, target: ast.expr, value: Value, node: ast.AST) -> ir.Stmt:
        raise NotImplementedError  # the Translator's

    def handler_tables(self) -> tuple:
        return super().handler_tables() + (({bi.unravel: 0}, self.unravel),
                                           ({bi.ravel: 0}, self.ravel))

    def scalar(self, value: object, node: ast.AST) -> None:
        """Refuses a tuple where a scalar is needed."""
        if isinstance(value, TupleValue):
            raise self.not_scalar(value, node)

    def visit_Tuple(self, node: ast.Tuple) -> TupleValue:
        elements = []
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                raise self.error(elt, "starred * in a tuple is not supported in a kernel")
            value = self.visit(elt)
            if isinstance(value, TupleValue):
                raise self.error(elt, "nested tuples are not supported in a kernel",
                                 KernelTypeError)
            elements.append(value)
        return TupleValue(tuple(elements))

    def tuple_of(self, value: Value | TupleValue, node: ast.AST, what: str) -> TupleValue:
        """`value` as a tuple for `what`; a tuple with a prelude (a call) must be unpacked
        first, since an expression cannot run statements."""
        if not isinstance(value, TupleValue):
            raise self.error(node, f"{what} needs a tuple, not a single value", KernelTypeError)
        if value.prelude:
            raise self.error(node, f"unpack the tuple this call returns first (a, b = ...), "
                                   f"then use its values in {what}")
        return value

    # ------------------------------------------------------------ unpacking

    def stage(self, value: TupleValue, node: ast.AST) -> tuple[list[ir.Stmt], TupleValue]:
        """Statements that evaluate every element once, before any target is assigned (so
        `a, b = b, a` swaps), and the tuple of their results."""
        stmts = list(value.prelude)
        if value.fresh:
            return stmts, TupleValue(value.elements, fresh=True)
        loc = self.loc(node)
        staged: list[Value] = []
        for element in value.elements:
            if isinstance(element, (PyConst, ir.Const)):
                staged.append(element)
                continue
            tmp = self.fresh_local(element.type, loc)
            stmts.append(ir.Assign(name=tmp, value=element, loc=loc))
            self.flow.assign(tmp, loc)
            staged.append(ir.LocalRef(name=tmp, type=element.type, loc=loc))
        return stmts, TupleValue(tuple(staged), fresh=True)

    def unpack(self, target: ast.Tuple | ast.List, value: TupleValue, node: ast.AST
               ) -> list[ir.Stmt]:
        """`a, b = value` for a staged tuple: each target gets its element."""
        if any(isinstance(t, ast.Starred) for t in target.elts):
            raise self.error(target, "starred targets (a, *b = ...) are not supported in a "
                                     "kernel")
        if len(target.elts) != len(value):
            raise self.error(target, f"cannot unpack a tuple of {len(value)} into "
                                     f"{len(target.elts)} target(s)", KernelTypeError)
        out = []
        for t, element in zip(target.elts, value.elements):
            if isinstance(t, (ast.Tuple, ast.List)):
                raise self.error(t, "nested unpacking is not supported in a kernel")
            out.append(self.assign_to(t, element, node))
        return out

    def assign_tuple(self, node: ast.Assign, value: TupleValue) -> list[ir.Stmt]:
        """`a, b = value` (and `a, b = c, d = value`, `s = value`): the value once, then every
        target."""
        stmts, staged = self.stage(value, node)
        for target in node.targets:
            if isinstance(target, ast.Name):
                stmts += self.assign_tuple_variable(target.id, staged, node)
                continue
            if not isinstance(target, (ast.Tuple, ast.List)):
                raise self.error(target, f"a tuple of {len(value)} cannot be stored in an array "
                                         "element: unpack it into names (a, b = ...)",
                                 KernelTypeError)
            stmts += self.unpack(target, staged, node)
        return stmts

    # ------------------------------------------------------------ tuple variables

    def assign_tuple_variable(self, name: str, value: TupleValue, node: ast.AST
                              ) -> list[ir.Stmt]:
        """`s = (a, b)`: a variable holding a tuple is one hidden local per element; its first
        assignment fixes its length and element types, as a scalar's fixes its type."""
        if name in self.aliases:
            raise self.error(node, f"array '{name}' cannot be re-assigned")
        if name in self.locals:
            local = self.locals[name]
            raise self.error(node, f"'{name}' has type {local.type.name} since {local.loc}: it "
                                   "cannot hold a tuple", KernelTypeError)
        loc = self.loc(node)
        elements = self.tuple_vars.get(name)
        if elements is None:
            elements = tuple(self.fresh_local(self.strong(v, node).type, loc)
                             for v in value.elements)
            self.tuple_vars[name] = elements
            self.tuple_var_locs[name] = loc
        since = self.tuple_var_locs[name]
        if len(elements) != len(value):
            raise self.error(node, f"'{name}' holds a tuple of {len(elements)} since {since}, "
                                   f"not of {len(value)}", KernelTypeError)
        out: list[ir.Stmt] = []
        for k, (local_name, element) in enumerate(zip(elements, value.elements)):
            t = self.locals[local_name].type
            if isinstance(element, ir.Expr) and element.type != t:
                raise self.error(node, f"element {k} of '{name}' has type {t.name} since {since}"
                                       f", not {element.type.name}", KernelTypeError)
            out.append(ir.Assign(name=local_name, value=self.typed(element, t, node), loc=loc))
            self.flow.assign(local_name, loc)
        return out

    def store_tuple_element(self, name: str, target: ast.Subscript, value: object,
                            node: ast.AST) -> ir.Stmt:
        """`t[k] = value`: element k (a constant; negative counts from the end) of the tuple
        variable `t` takes the value, which must have the element's type (a Python number
        converts). With `pk.static_range` this makes a tuple a register array: `acc[i] =
        pk.coop_mma(a, b[i], acc[i])`."""
        elements = self.tuple_vars[name]
        k = self.constant_index(target.slice, len(elements), "a tuple element is assigned",
                                f"'{name}', a tuple of ")
        local_name = elements[k]
        t = self.locals[local_name].type
        if isinstance(value, TupleValue):
            raise self.error(node, f"element {k} of '{name}' takes a single value, not a "
                                   "tuple", KernelTypeError)
        if isinstance(value, ir.Expr) and value.type != t:
            raise self.error(node, f"element {k} of '{name}' has type {t.name} since "
                                   f"{self.tuple_var_locs[name]}, not {value.type.name}",
                             KernelTypeError)
        loc = self.loc(node)
        self.flow.assign(local_name, loc)
        return ir.Assign(name=local_name, value=self.typed(value, t, node), loc=loc)

    def tuple_variable(self, name: str, node: ast.AST) -> TupleValue:
        """A read of a variable holding a tuple: its element locals."""
        elements = self.tuple_vars[name]
        values = []
        for local_name in elements:
            why = self.flow.unassigned(local_name)
            if why is not None:
                raise self.error(node, f"'{name}' may be unassigned here: {why}")
            values.append(ir.LocalRef(name=local_name,
                                      type=self.locals[local_name].type,
                                      loc=self.loc(node)))
        return TupleValue(tuple(values))

    def tuple_argument(self, pname: str, value: TupleValue, node: ast.AST
                       ) -> tuple[list[tuple[str, ir.Expr]], tuple[str, ...]]:
        """A tuple passed to a device function: one scalar parameter per element (the callee
        sees a tuple variable); the parameters and their names."""
        value = self.tuple_of(value, node, "an argument of a device function")
        names = tuple(f"_pk_{pname}{k}" for k in range(len(value)))
        return [(n, self.strong(v, node)) for n, v in zip(names, value.elements)], names

    # ------------------------------------------------------------ returns

    def return_tuple_statement(self, value: TupleValue, node: ast.Return) -> list[ir.Stmt]:
        """`return a, b` in a device function: every return has the same element types."""
        name = self.function
        if self.return_type is not None:
            had = "no value" if self.return_type == dt.void else self.return_type.name
            raise self.error(node, f"'{name}' returns {had} elsewhere, a tuple here (all "
                                   "returns need one type)", KernelTypeError)
        # each element is evaluated once, into its slot; no slot store changes what another
        # element reads (a function's slots are its own), so no staging is needed
        stmts, staged = list(value.prelude), value
        if self.return_tuple is None:
            self.return_tuple = tuple(self.strong(v, node).type for v in staged.elements)
            self.return_slots = tuple(self.ctx.return_slot(t, self.loc(node))
                                      for t in self.return_tuple)
        elif len(staged) != len(self.return_tuple):
            raise self.error(node, f"'{name}' returns a tuple of {len(self.return_tuple)} "
                                   f"elsewhere, of {len(staged)} here", KernelTypeError)
        loc = self.loc(node)
        for k, (element, t) in enumerate(zip(staged.elements, self.return_tuple)):
            if isinstance(element, ir.Expr) and element.type != t:
                raise self.error(node, f"'{name}' returns {t.name} as element {k} of its tuple "
                                       f"elsewhere, {element.type.name} here (all returns need "
                                       "one type)", KernelTypeError)
            stmts.append(self.slot_store(k, self.typed(element, t, node), loc))
        stmts.append(ir.Return(loc=loc))
        return stmts

    def slot_store(self, k: int, value: ir.Expr, loc: ir.Loc) -> ir.Stmt:
        return ir.Store(array=self.return_slots[k], indices=(ir.Const(value=0, type=dt.i32,
                                                                       loc=loc),),
                        value=value, loc=loc)

    def end_of_tuple_function(self, body: tuple[ir.Stmt, ...], loc: ir.Loc
                              ) -> tuple[ir.Stmt, ...]:
        """Falling off the end of a function that returns a tuple returns zeros, as a
        function that returns a scalar does."""
        if body and isinstance(body[-1], ir.Return):
            return body
        assert self.return_tuple is not None
        zeros = tuple(self.slot_store(k, zero_of(t, loc), loc)
                      for k, t in enumerate(self.return_tuple))
        return body + zeros + (ir.Return(loc=loc),)

    def tuple_result(self, call: ir.Call, slots: tuple[tuple[str, DType], ...], loc: ir.Loc
                     ) -> TupleValue:
        """The value of a call of a function that returns a tuple: the call, then its slots."""
        zero = ir.Const(value=0, type=dt.i32, loc=loc)
        return TupleValue(tuple(ir.ArrayLoad(array=s, indices=(zero,), type=t, loc=loc)
                                for s, t in slots),
                          prelude=(ir.Eval(value=call, loc=loc),), fresh=True)

    # ------------------------------------------------------------ shapes and indices

    def shape_tuple(self, array: str, node: ast.AST) -> TupleValue:
        """`a.shape`: launch-time dims of a parameter, constants of a declared array."""
        ndim = self.ctx.array_types[array].ndim
        decl = self.ctx.decls.get(array)
        if decl is not None:
            return TupleValue(tuple(PyConst(n) for n in decl.shape))
        return TupleValue(tuple(ir.ArrayDim(array=array, axis=k, type=dt.i32, loc=self.loc(node))
                                for k in range(ndim)))

    def tuple_arithmetic(self, op: type, lhs: object, rhs: object, node: ast.AST
                         ) -> TupleValue:
        """`t + u` joins two tuples, `t * n` (and `n * t`) repeats one a constant n times, as
        in Python; nothing else computes on tuples."""
        if op is ast.Add and isinstance(lhs, TupleValue) and isinstance(rhs, TupleValue):
            return TupleValue(self.tuple_of(lhs, node, "+").elements
                              + self.tuple_of(rhs, node, "+").elements)
        if op is ast.Mult:
            t, n = (lhs, rhs) if isinstance(lhs, TupleValue) else (rhs, lhs)
            if isinstance(n, PyConst) and type(n.value) is int and isinstance(t, TupleValue):
                return TupleValue(self.tuple_of(t, node, "*").elements * max(n.value, 0))
        bad = lhs if isinstance(lhs, TupleValue) else rhs
        raise self.not_scalar(bad, node)

    def tuple_item(self, value: TupleValue, node: ast.Subscript) -> Value | TupleValue:
        """`t[k]` for a constant k (negative counts from the end), `t[a:b:c]` for constant
        bounds: a tuple again."""
        value = self.tuple_of(value, node.value, "indexing")
        if isinstance(node.slice, ast.Slice):
            bounds = []
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                bound = None if part is None else self.visit(part)
                if bound is not None and not (isinstance(bound, PyConst)
                                              and type(bound.value) is int):
                    raise self.error(part, "a tuple is sliced with constant integers")
                bounds.append(None if bound is None else bound.value)
            if bounds[2] == 0:
                raise self.error(node.slice, "slice step cannot be zero")
            return TupleValue(value.elements[slice(*bounds)])
        k = self.visit(node.slice)
        if not (isinstance(k, PyConst) and type(k.value) is int):
            raise self.error(node.slice, "a tuple is indexed with a constant integer")
        if not -len(value) <= k.value < len(value):
            raise self.error(node.slice, f"index {k.value} is out of range for a tuple of "
                                         f"{len(value)}")
        return value.elements[k.value]

    def dims_of(self, arg: ast.expr, what: str) -> tuple[Value, ...]:
        """The sizes of a shape argument: a tuple, an array's .shape, or one int."""
        value = self.visit(arg)
        dims = self.tuple_of(value, arg, what).elements if isinstance(value, TupleValue) \
            else (value,)
        for d in dims:
            if (isinstance(d, PyConst) and type(d.value) is not int) or (
                    isinstance(d, ir.Expr) and not d.type.is_int):
                raise self.error(arg, f"the shape of {what} must be integers", KernelTypeError)
        return dims

    def integer_type(self, values: list[Value], node: ast.AST, what: str) -> DType:
        """The one integer type of `values`, by the rules of // and %."""
        for v in values:
            if (isinstance(v, PyConst) and type(v.value) is not int) or (
                    isinstance(v, ir.Expr) and not v.type.is_int):
                raise self.error(node, f"{what} takes integers", KernelTypeError)
        typed = [v for v in values if isinstance(v, ir.Expr)]
        t = typed[0].type if typed else dt.i32
        for v in typed[1:]:
            t = self.unify(ir.Const(value=0, type=t), v)
        return arithmetic_type(t)

    def unravel(self, callee: object, args: list, name: str, node: ast.AST) -> TupleValue:
        """`pk.unravel(i, shape)`: (i // (s1*...*sn), ..., (i // sn) % s(n-1), i % sn)."""
        self.check_arity(args, 2, name, node)
        flat = self.visit(args[0])
        self.scalar(flat, args[0])
        dims = self.dims_of(args[1], f"{name}()")
        t = self.integer_type([flat, *dims], node, f"{name}()")
        prelude: list[ir.Stmt] = []
        if isinstance(flat, ir.Expr) and any(isinstance(n, SIDE_EFFECTS)
                                             for n in ir.walk(flat)):
            loc = self.loc(node)  # evaluated once, though every element reads it
            tmp = self.fresh_local(t, loc)
            prelude.append(ir.Assign(name=tmp, value=self.typed(flat, t, node), loc=loc))
            self.flow.assign(tmp, loc)
            flat = ir.LocalRef(name=tmp, type=t, loc=loc)
        if not dims:
            return TupleValue((), prelude=tuple(prelude))  # a 0-d shape has no index
        rest: Value = flat if isinstance(flat, PyConst) else self.typed(flat, t, node)
        out: list[Value] = []
        for d in reversed(dims[1:]):
            d = d if isinstance(d, PyConst) else self.typed(d, t, node)
            out.append(self.binary(ast.Mod, rest, d, node))
            rest = self.binary(ast.FloorDiv, rest, d, node)
        out.append(rest if len(dims) > 1 or isinstance(rest, PyConst) else self.typed(rest, t,
                                                                                         node))
        return TupleValue(tuple(reversed(out)), prelude=tuple(prelude))

    def ravel(self, callee: object, args: list, name: str, node: ast.AST) -> Value:
        """`pk.ravel(index, shape)`: ((i0 * s1 + i1) * s2 + i2) ... in C order."""
        self.check_arity(args, 2, name, node)
        index = self.visit(args[0])
        idx = self.tuple_of(index, args[0], f"{name}()").elements \
            if isinstance(index, TupleValue) else (index,)
        dims = self.dims_of(args[1], f"{name}()")
        if len(idx) != len(dims):
            raise self.error(node, f"{name}() got an index of {len(idx)} for a shape of "
                                   f"{len(dims)}", KernelTypeError)
        t = self.integer_type([*idx, *dims], node, f"{name}()")
        if not idx:
            return PyConst(0)  # the one element of a 0-d shape
        flat: Value = idx[0] if isinstance(idx[0], PyConst) else self.typed(idx[0], t, node)
        for k, d in zip(idx[1:], dims[1:]):
            flat = self.binary(ast.Add, self.binary(ast.Mult, flat, d, node), k, node)
        return flat
