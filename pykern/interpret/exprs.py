"""IR expressions to Python expression text: one method per node class, dispatched by a table;
operators, conversions and math come from the tables of `ops`.

Every text returned is an atom (a name, a literal, a call, a subscript or a parenthesised
expression), so callers can put it anywhere without thinking of precedence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.interpret import names, ops, tile_codegen
from pykern.interpret.names import CodegenState, Geometry, SubgroupSite
from pykern.interpret.walk import EXCHANGING
from pykern.lang.coop import is_tile

BUILTINS: dict[ir.BuiltinKind, Callable[[ir.Kernel, int], str]] = {
    ir.BuiltinKind.GLOBAL_ID: lambda k, d: names.GLOBAL_IDS[d],
    ir.BuiltinKind.LOCAL_ID: lambda k, d: names.LOCAL_IDS[d],
    ir.BuiltinKind.GROUP_ID: lambda k, d: names.GROUP_IDS[d],
    ir.BuiltinKind.GROUP_SIZE: lambda k, d: str(int(k.workgroup[d])),
    ir.BuiltinKind.NUM_GROUPS: lambda k, d: names.NUM_GROUPS[d],
    ir.BuiltinKind.GRID: lambda k, d: names.GRID[d],
}

# expressions that read a value no expression can change: an error message can re-read them
_PLAIN = (ir.LocalRef, ir.ScalarParam, ir.Const, ir.Builtin, ir.ArrayDim)


class ExprCodegen:
    """Turns `ir.Expr` trees of one kernel into Python expression text.

    `lockstep_functions` are the device functions that are generators (they synchronise);
    a call of one is `(yield from f(...))`, so the caller is a generator too.
    """

    def __init__(self, kernel: ir.Kernel, state: CodegenState, lockstep_functions: set[str]):
        self.kernel = kernel
        self.state = state
        self.lockstep_functions = lockstep_functions
        self.geometry: dict[str, Geometry] = {
            p.name: Geometry.of_param(p.name, p.type.ndim)  # type: ignore[union-attr]
            for p in kernel.params if p.is_array}
        self.geometry.update((d.name, Geometry.of_decl(d)) for d in kernel.arrays)

    def expr(self, e: ir.Expr) -> str:
        method = _DISPATCH.get(type(e))
        if method is None:
            raise AssertionError(f"no interpretation for IR expression {type(e).__name__}")
        return method(self, e)

    def address(self, array: str, indices: tuple[ir.Expr, ...], loc: ir.Loc
                ) -> tuple[str, str, str]:
        """For an access to `array[indices]`: (the temporary that will hold the element
        address, a condition that computes it and is true when the access is allowed, the call
        that raises KernelIndexError otherwise). Allowed: the address is inside the buffer; in
        debug mode also every index inside its dimension (what the GPU checks then)."""
        g = self.geometry[array]
        debug = self.kernel.debug
        addr = self.state.temp()
        checks, terms, values, bound = [], [] if g.offset is None else [g.offset], [], []
        for k, index in enumerate(indices):
            text = self.expr(index)
            if not isinstance(index, _PLAIN):  # kept in a temporary for the error message
                value = self.state.temp()
                text, value = f"({value} := {text})", value
            else:
                value = text
            if debug:
                # every index is evaluated before any is checked (as on the device), so the
                # report names them all, also after a failing first one
                if value != text:
                    bound.append(text)
                checks.append(f"0 <= {value} < {g.shape[k]}")
                text = value
            terms.append(text if g.strides[k] == "1" else f"{text} * {g.strides[k]}")
            values.append(value)
        if bound:
            checks.insert(0, f"({', '.join(bound)},)")  # a non-empty tuple: true
        checks.append(f"0 <= ({addr} := {' + '.join(terms)}) < {g.length}")
        site = self.state.site(array, loc)
        fail = f"{names.OUT_OF_BOUNDS}({site}, ({', '.join(values)},), {names.INVOCATION})"
        return addr, " and ".join(checks), fail

    def checked_address(self, array: str, indices: tuple[ir.Expr, ...], loc: ir.Loc) -> str:
        """An expression whose value is the address of `array[indices]`, raising if not
        allowed."""
        addr, allowed, fail = self.address(array, indices, loc)
        return f"({addr} if {allowed} else {fail})"

    # ------------------------------------------------------------ one method per node class

    def _const(self, e: ir.Const) -> str:
        if e.type == dt.bool_:
            return repr(bool(e.value))
        if e.type.is_float:
            return self.state.float_constant(e.value, e.type)
        value = int(e.value)  # an int's text, whatever the IR was built with
        return str(value) if value >= 0 else f"({value})"

    def _local(self, e: ir.LocalRef) -> str:
        return names.local(e.name)

    def _scalar_param(self, e: ir.ScalarParam) -> str:
        return names.scalar(e.name)

    def _array_load(self, e: ir.ArrayLoad) -> str:
        addr, allowed, fail = self.address(e.array, e.indices, e.loc)
        return f"({self.geometry[e.array].buffer}[{addr}] if {allowed} else {fail})"

    def _array_dim(self, e: ir.ArrayDim) -> str:
        return self.geometry[e.array].shape[e.axis]

    def _binop(self, e: ir.BinOp) -> str:
        if is_tile(e.type):
            return tile_codegen.binop(self, e)
        return self._arithmetic(ops.BINARY, e, e.lhs, e.rhs)

    def _unaryop(self, e: ir.UnaryOp) -> str:
        if is_tile(e.type):
            return tile_codegen.unaryop(self, e)
        return self._arithmetic(ops.UNARY, e, e.operand)

    def _arithmetic(self, table: Mapping[tuple[Any, Any], Callable[..., str]],
                    e: ir.BinOp | ir.UnaryOp, *operands: ir.Expr) -> str:
        """The text of `e`'s operator on `operands` (their type its first operand's), from
        `table`, keyed by the operator and the operands' kind of type."""
        t = operands[0].type
        emit = table.get((e.op, t.kind))
        if emit is None:
            raise AssertionError(f"no interpretation of {e.op.name} on {t.name} at {e.loc}")
        return emit(t, *(self.expr(x) for x in operands))

    def _logical(self, e: ir.Logical) -> str:
        return f"({self.expr(e.lhs)} {e.op.value} {self.expr(e.rhs)})"

    def _ifexp(self, e: ir.IfExp) -> str:
        return f"({self.expr(e.then)} if {self.expr(e.cond)} else {self.expr(e.orelse)})"

    def _select(self, e: ir.Select) -> str:
        return f"_select({self.expr(e.cond)}, {self.expr(e.then)}, {self.expr(e.orelse)})"

    def _cast(self, e: ir.Cast) -> str:
        if is_tile(e.type):
            return tile_codegen.cast(self, e)
        src, dst = e.value.type, e.type
        value = self.expr(e.value)
        if src == dst:
            return value
        return ops.CASTS[src.kind, dst.kind](self.state, src, dst, value)

    def _bitcast(self, e: ir.Bitcast) -> str:
        source, target = e.value.type.numpy.name, e.type.numpy.name
        return f"_bitcast({self.expr(e.value)}, np.{source}, np.{target})"

    def _math(self, e: ir.MathCall) -> str:
        return ops.MATH[e.fn](self.state, e.args[0].type, [self.expr(a) for a in e.args])

    def _builtin(self, e: ir.Builtin) -> str:
        return BUILTINS[e.kind](self.kernel, e.dim)

    def _atomic(self, e: ir.Atomic) -> str:
        buffer = self.geometry[e.array].buffer
        addr = self.checked_address(e.array, e.indices, e.loc)
        if e.op is ir.AtomicOp.CAS:
            assert e.comparator is not None
            helper = "_atomic_cas_bits" if e.type.is_float else "_atomic_cas"
            return (f"{helper}({buffer}, {addr}, {self.expr(e.comparator)}, "
                    f"{self.expr(e.value)})")
        update = ops.atomic_update(self.state, e.op, e.type)
        return f"_atomic({buffer}, {addr}, {update}, {self.expr(e.value)})"

    def _subgroup(self, e: ir.Subgroup) -> str:
        if e.op is ir.SubgroupOp.SIZE:
            return names.SUBGROUP_SIZE
        if e.op is ir.SubgroupOp.LANE:
            wx, wy = (int(w) for w in self.kernel.workgroup[:2])
            linear = f"{names.LOCAL_IDS[0]} + {names.LOCAL_IDS[1]} * {wx} + " \
                     f"{names.LOCAL_IDS[2]} * {wx * wy}"
            return f"(({linear}) % {names.SUBGROUP_SIZE})"
        assert e.op in EXCHANGING
        self.state.subgroups.append(SubgroupSite(e.op, e.args[0].type, e.loc))
        site = len(self.state.subgroups) - 1
        # the runner resumes this invocation with the result once its subgroup got here
        args = ", ".join(self.expr(a) for a in e.args)
        return f"(yield ({site}, {self.state.progress()}, {args}))"

    def _call(self, e: ir.Call) -> str:
        call = f"{names.function(e.function)}({', '.join(self.expr(a) for a in e.args)})"
        if e.function not in self.lockstep_functions:
            return call
        return f"(yield from _call_at({names.PATH}, {self.state.position()}, {call}))"


_DISPATCH: dict[type, Callable[[ExprCodegen, ir.Expr], str]] = {
    ir.Const: ExprCodegen._const,
    ir.LocalRef: ExprCodegen._local,
    ir.ScalarParam: ExprCodegen._scalar_param,
    ir.ArrayLoad: ExprCodegen._array_load,
    ir.ArrayDim: ExprCodegen._array_dim,
    ir.BinOp: ExprCodegen._binop,
    ir.UnaryOp: ExprCodegen._unaryop,
    ir.Logical: ExprCodegen._logical,
    ir.IfExp: ExprCodegen._ifexp,
    ir.Select: ExprCodegen._select,
    ir.Cast: ExprCodegen._cast,
    ir.Bitcast: ExprCodegen._bitcast,
    ir.MathCall: ExprCodegen._math,
    ir.Builtin: ExprCodegen._builtin,
    ir.Atomic: ExprCodegen._atomic,
    ir.Subgroup: ExprCodegen._subgroup,
    ir.Call: ExprCodegen._call,
    ir.CoopFill: tile_codegen.fill,
    ir.CoopLoad: tile_codegen.load,
    ir.CoopMma: tile_codegen.mma,
    ir.CoopScale: tile_codegen.scale,
}
