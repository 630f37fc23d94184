"""`lower_complex`: complex numbers rewritten into pairs of reals, for every backend.

No backend knows complex types; this pass removes every one of them:

- a complex value is two values of its part type (f32 for c64, f64 for c128): a complex local
  `z` becomes the locals `_pk_re_z` and `_pk_im_z`, a complex scalar parameter two parameters
  of those names (the launch splits its argument, `pykern.jit.complex_args`);
- a complex array (parameter, `pk.shared`, `pk.local`) becomes a real array with one more
  dimension, of length 2 and unit stride: element `a[i, j]` is `a[i, j, 0] + 1j * a[i, j, 1]`,
  which is how numpy stores it, so a parameter binds the very same buffer (the launch passes
  the real view's shape and strides);
- `+ - ==  !=`, negation, the parts, `complex(a, b)`, conjugates and conversions are written out
  in real arithmetic; `*` is numpy's (ac - bd) + (ad + bc)i; everything else (`/`, `**`, abs,
  exp, log, sqrt, the trigonometric and hyperbolic functions and their inverses) calls a
  prelude function of the parts (`pykern.mathlib.complex_functions`), translated for the part
  type and added to the kernel; one that returns a complex value returns it through two
  one-element `pk.local` arrays, as tuple-returning device functions do;
- a device function with complex parameters takes both parts of each; one returning a complex
  value returns its real part and leaves the imaginary part in a one-element `pk.local` array.

Expressions whose parts are used twice (a product's operands, an index that addresses both
parts) are computed once into fresh locals, in statements put ahead of the statement that uses
them. Such a statement inside a conditional expression, the right side of `and`/`or` or a
`while` condition is put where it keeps Python's evaluation rules: an `if` statement, or the
start of the loop body followed by the test.

The JIT runs this pass first, ahead of `lower_bf16` and `decompose`, and for the interpreter,
so all backends compute the same; the variant's parameters keep their complex types, which is
what launches check arguments against.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from pykern import ir
from pykern.ir.identity_cache import IdentityCache
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import ArrayType, DType
from pykern.mathlib.complex_prelude import ComplexPrelude

Pair = tuple[ir.Expr, ir.Expr]
_CACHE_SIZE = 256
_cache: IdentityCache[ir.Kernel] = IdentityCache()
_B = ir.BinOpKind


def lower_complex(kernel: ir.Kernel) -> ir.Kernel:
    """`kernel` with no complex type left (see the module docstring); `kernel` itself when it
    has none. Remembered per kernel object, as `lower_bf16` is."""
    hit = _cache.get(kernel)
    if hit is not None:
        return hit
    return _cache.put(kernel, _Lowering(kernel).kernel() if uses_complex(kernel) else kernel,
                      _CACHE_SIZE)


def uses_complex(kernel: ir.Kernel) -> bool:
    """Whether any type in `kernel` is complex."""
    if any(_is_complex(f.return_type) for f in kernel.functions):
        return True
    return any(_is_complex(_type_of(node)) or isinstance(node, ir.ComplexCall)
               for node in ir.walk(kernel))


def part_names(name: str) -> tuple[str, str]:
    """The names of the real and imaginary part of the complex local or parameter `name`."""
    return f"_pk_re_{name}", f"_pk_im_{name}"


def lowered_param(param: ir.Param) -> tuple[ir.Param, ...]:
    """The parameters that `param` is after this pass: itself when it is not complex."""
    t = param.type
    if isinstance(t, ArrayType):
        if not t.dtype.is_complex:
            return (param,)
        return (replace(param, type=ArrayType(t.dtype.real_dtype, t.ndim + 1)),)
    if not t.is_complex:
        return (param,)
    return tuple(replace(param, name=n, type=t.real_dtype) for n in part_names(param.name))


def _type_of(node: ir.Node) -> object:
    if isinstance(node, ir.ArrayDecl):
        return node.dtype
    t = getattr(node, "type", None)
    return t.dtype if isinstance(t, ArrayType) else t


def _is_complex(t: object) -> bool:
    return isinstance(t, DType) and t.is_complex


def _trivial(e: ir.Expr) -> bool:
    """Whether `e` may be evaluated twice at no cost and with no effect."""
    return isinstance(e, (ir.Const, ir.LocalRef, ir.ScalarParam))


def _const(value: float, t: DType, loc: ir.Loc) -> ir.Const:
    return ir.Const(value=value, type=t, loc=loc)


def _binop(op: ir.BinOpKind, a: ir.Expr, b: ir.Expr, loc: ir.Loc) -> ir.Expr:
    return ir.BinOp(op=op, lhs=a, rhs=b, type=dt.bool_ if op.is_comparison else a.type, loc=loc)


def _neg(a: ir.Expr) -> ir.Expr:
    return ir.UnaryOp(op=ir.UnaryOpKind.NEG, operand=a, type=a.type, loc=a.loc)


def _reads(e: ir.Expr, name: str) -> bool:
    return any(isinstance(n, ir.LocalRef) and n.name == name for n in ir.walk(e))


class _Lowering:
    """The rewriting of one kernel: its complex arrays, the prelude it calls, and for each
    function returning a complex value the array that carries the imaginary part back."""

    def __init__(self, kernel: ir.Kernel) -> None:
        self.source = kernel
        self.prelude = ComplexPrelude()
        self.complex_arrays = {p.name for p in kernel.params
                               if isinstance(p.type, ArrayType) and p.type.dtype.is_complex}
        self.complex_arrays |= {a.name for a in kernel.arrays if a.dtype.is_complex}
        self.returns = {f.name: f"_pk_imret_{f.name}" for f in kernel.functions
                        if _is_complex(f.return_type)}
        self.functions = {f.name: f for f in kernel.functions}
        self.count = 0
        self.scope: _Scope = _Scope()

    def kernel(self) -> ir.Kernel:
        k = self.source
        functions = tuple(self.function(f) for f in k.functions)
        self.scope = _Scope()
        body = self.block(k.body)
        params = tuple(q for p in k.params for q in lowered_param(p))
        arrays = tuple(_lowered_decl(a) for a in k.arrays)
        arrays += tuple(ir.ArrayDecl(name=n, dtype=self.functions[f].return_type.real_dtype,
                                     shape=(1,), space=ir.MemorySpace.LOCAL, loc=k.loc)
                        for f, n in self.returns.items())
        prelude_functions, prelude_arrays = self.prelude.added()
        return replace(k, params=params, locals=self.scope.declared(k.locals), body=body,
                       arrays=arrays + prelude_arrays,
                       functions=prelude_functions + functions)

    def function(self, f: ir.Function) -> ir.Function:
        self.scope = _Scope(self.returns.get(f.name))
        body = self.block(f.body)
        params = tuple(q for p in f.params for q in _lowered_local(p))
        rtype = f.return_type.real_dtype if _is_complex(f.return_type) else f.return_type
        return replace(f, params=params, locals=self.scope.declared(f.locals), body=body,
                       return_type=rtype)

    # ------------------------------------------------------------ statements

    def block(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out.extend(self.stmt(s))
        return tuple(out)

    def hoisting(self, work: Callable[[], object]) -> tuple[list[ir.Stmt], object]:
        """What `work` returns, and the statements it put ahead of it."""
        saved, self.scope.pending = self.scope.pending, []
        try:
            result = work()
            return self.scope.pending, result
        finally:
            self.scope.pending = saved

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.While):
            return [self.while_loop(s)]
        ahead, lowered = self.hoisting(lambda: self.statement(s))
        return ahead + list(lowered)  # type: ignore[arg-type]

    def statement(self, s: ir.Stmt) -> list[ir.Stmt]:
        """`s` rewritten; what its expressions need first goes to the pending statements."""
        if isinstance(s, ir.Assign):
            return self.assign(s)
        if isinstance(s, ir.Store):
            return self.store(s)
        if isinstance(s, ir.If):
            return [replace(s, cond=self.real(s.cond), body=self.block(s.body),
                            orelse=self.block(s.orelse))]
        if isinstance(s, ir.ForRange):
            return [replace(s, start=self.real(s.start), stop=self.real(s.stop),
                            step=self.real(s.step), body=self.block(s.body))]
        if isinstance(s, ir.Return) and s.value is not None:
            return self.return_value(s)
        if isinstance(s, ir.Eval):
            if _is_complex(s.value.type):
                self.pair(s.value)  # its statements do the work; the value is unused
                return []
            return [replace(s, value=self.real(s.value))]
        if isinstance(s, ir.Assert):
            return [replace(s, cond=self.real(s.cond))]
        return [s]

    def while_loop(self, s: ir.While) -> ir.Stmt:
        ahead, cond = self.hoisting(lambda: self.real(s.cond))
        body = self.block(s.body)
        if not ahead:
            return replace(s, cond=cond, body=body)  # type: ignore[arg-type]
        # the condition's statements run before each test: `while True: ...; if not c: break`
        stop = ir.If(cond=ir.UnaryOp(op=ir.UnaryOpKind.NOT, operand=cond, type=dt.bool_,
                                     loc=s.loc), body=(ir.Break(loc=s.loc),), loc=s.loc)
        return ir.While(cond=ir.Const(value=True, type=dt.bool_, loc=s.loc),
                        body=tuple(ahead) + (stop,) + body, loc=s.loc)

    def assign(self, s: ir.Assign) -> list[ir.Stmt]:
        if not self.scope.is_complex(s.name, s.value.type):
            return [replace(s, value=self.real(s.value))]
        re, im = self.pair(s.value)
        re_name, im_name = part_names(s.name)
        if _reads(im, re_name):  # z = z * w: the imaginary part reads the old real part
            im = self.cheap(im)
        return [ir.Assign(name=re_name, value=re, loc=s.loc),
                ir.Assign(name=im_name, value=im, loc=s.loc)]

    def store(self, s: ir.Store) -> list[ir.Stmt]:
        if s.array not in self.complex_arrays:
            return [replace(s, indices=tuple(self.real(i) for i in s.indices),
                            value=self.real(s.value))]
        indices = tuple(self.cheap(self.real(i)) for i in s.indices)
        re, im = self.pair(s.value)
        return [ir.Store(array=s.array, indices=indices + (_const(k, dt.i32, s.loc),),
                         value=v, loc=s.loc) for k, v in enumerate((re, im))]

    def return_value(self, s: ir.Return) -> list[ir.Stmt]:
        assert s.value is not None
        if not _is_complex(s.value.type):
            return [replace(s, value=self.real(s.value))]
        re, im = self.pair(s.value)
        slot = self.scope.returns
        assert slot is not None, f"complex return outside a complex function at {s.loc}"
        zero = _const(0, dt.i32, s.loc)
        return [ir.Store(array=slot, indices=(zero,), value=im, loc=s.loc),
                replace(s, value=re)]

    # ------------------------------------------------------------ expressions

    def fresh(self, t: DType, loc: ir.Loc) -> str:
        self.count += 1
        name = f"_pk_c{self.count}"
        self.scope.temps.append(ir.Local(name=name, type=t, loc=loc))
        return name

    def cheap(self, e: ir.Expr) -> ir.Expr:
        """`e`, or a fresh local assigned `e` ahead, when `e` is not trivial."""
        if _trivial(e):
            return e
        name = self.fresh(e.type, e.loc)
        self.scope.pending.append(ir.Assign(name=name, value=e, loc=e.loc))
        return ir.LocalRef(name=name, type=e.type, loc=e.loc)

    def cheap_pair(self, e: ir.Expr) -> Pair:
        re, im = self.pair(e)
        return self.cheap(re), self.cheap(im)

    def real(self, e: ir.Expr) -> ir.Expr:
        """The real expression `e` with the complex values inside it lowered."""
        if not self.scope.has_complex(e):
            return e
        if isinstance(e, ir.ComplexCall):
            return self.real_of_complex(e)
        if isinstance(e, ir.BinOp) and _is_complex(e.lhs.type):
            return self.equality(e)
        if isinstance(e, ir.Call):
            return self.call(e)
        if isinstance(e, ir.IfExp):
            return self.real_ifexp(e)
        if isinstance(e, ir.Logical):
            return self.logical(e)
        return self.children(e)

    def children(self, e: ir.Expr) -> ir.Expr:
        """`e` with each child expression lowered (a node with no condition of its own)."""
        changes: dict[str, object] = {}
        for name in e.__dataclass_fields__:
            value = getattr(e, name)
            if isinstance(value, ir.Expr):
                changes[name] = self.real(value)
            elif isinstance(value, tuple) and value and isinstance(value[0], ir.Expr):
                changes[name] = tuple(self.real(v) for v in value)
        return replace(e, **changes)  # type: ignore[arg-type]

    def logical(self, e: ir.Logical) -> ir.Expr:
        lhs = self.real(e.lhs)
        ahead, rhs = self.hoisting(lambda: self.real(e.rhs))
        if not ahead:
            return replace(e, lhs=lhs, rhs=rhs)  # type: ignore[arg-type]
        # the right side's statements run only where Python evaluates it
        name = self.fresh(dt.bool_, e.loc)
        ref = ir.LocalRef(name=name, type=dt.bool_, loc=e.loc)
        test = ref if e.op is ir.LogicalKind.AND else ir.UnaryOp(
            op=ir.UnaryOpKind.NOT, operand=ref, type=dt.bool_, loc=e.loc)
        self.scope.pending += [ir.Assign(name=name, value=lhs, loc=e.loc),
                               ir.If(cond=test, body=tuple(ahead) + (
                                   ir.Assign(name=name, value=rhs, loc=e.loc),),  # type: ignore
                                   loc=e.loc)]
        return ref

    def real_ifexp(self, e: ir.IfExp) -> ir.Expr:
        cond = self.real(e.cond)
        then_ahead, then = self.hoisting(lambda: self.real(e.then))
        else_ahead, orelse = self.hoisting(lambda: self.real(e.orelse))
        if not then_ahead and not else_ahead:
            return replace(e, cond=cond, then=then, orelse=orelse)  # type: ignore[arg-type]
        (value,) = self.branches(cond, (then_ahead, (then,)), (else_ahead, (orelse,)), e.loc)
        return value

    def branches(self, cond: ir.Expr, then: tuple[list[ir.Stmt], tuple],
                 orelse: tuple[list[ir.Stmt], tuple], loc: ir.Loc) -> tuple[ir.Expr, ...]:
        """An `if` statement that computes one branch's values into fresh locals."""
        names = [self.fresh(v.type, loc) for v in then[1]]
        blocks = []
        for ahead, values in (then, orelse):
            blocks.append(tuple(ahead) + tuple(ir.Assign(name=n, value=v, loc=loc)
                                               for n, v in zip(names, values)))
        self.scope.pending.append(ir.If(cond=cond, body=blocks[0], orelse=blocks[1], loc=loc))
        return tuple(ir.LocalRef(name=n, type=v.type, loc=loc) for n, v in zip(names, then[1]))

    def equality(self, e: ir.BinOp) -> ir.Expr:
        """`a == b` is both parts equal; `a != b` either differs (nan != nan, as numpy)."""
        (ar, ai), (br, bi) = self.pair(e.lhs), self.pair(e.rhs)
        kind = ir.LogicalKind.AND if e.op is _B.EQ else ir.LogicalKind.OR
        re, im = _binop(e.op, ar, br, e.loc), _binop(e.op, ai, bi, e.loc)
        return ir.Logical(op=kind, lhs=re, rhs=im, type=dt.bool_, loc=e.loc)

    def real_of_complex(self, e: ir.ComplexCall) -> ir.Expr:
        fn = e.fn
        re, im = self.pair(e.args[0])
        if fn is ir.ComplexFn.REAL:
            return re
        if fn is ir.ComplexFn.IMAG:
            return im
        if fn is ir.ComplexFn.ANGLE:
            return ir.MathCall(fn=ir.MathFn.ATAN2, args=(im, re), type=e.type, loc=e.loc)
        assert fn is ir.ComplexFn.ABS, f"{fn} has a complex result"
        return self.prelude.call_real("abs", (re, im), e.loc)

    def arguments(self, args: tuple[ir.Expr, ...]) -> tuple[ir.Expr, ...]:
        """A call's arguments, each complex one as its two parts."""
        out: list[ir.Expr] = []
        for a in args:
            out.extend(self.pair(a) if _is_complex(a.type) else (self.real(a),))
        return tuple(out)

    def call(self, e: ir.Call) -> ir.Expr:
        return replace(e, args=self.arguments(e.args))

    # ------------------------------------------------------------ complex values

    def pair(self, e: ir.Expr) -> Pair:
        """The real and imaginary part of the complex expression `e`."""
        part = e.type.real_dtype
        loc = e.loc
        if isinstance(e, ir.Const):
            z = complex(e.value)
            return _const(z.real, part, loc), _const(z.imag, part, loc)
        if isinstance(e, (ir.LocalRef, ir.ScalarParam)):
            re, im = part_names(e.name)
            return replace(e, name=re, type=part), replace(e, name=im, type=part)
        if isinstance(e, ir.ArrayLoad):
            indices = tuple(self.cheap(self.real(i)) for i in e.indices)
            return tuple(ir.ArrayLoad(array=e.array, indices=indices + (_const(k, dt.i32, loc),),
                                      type=part, loc=loc) for k in (0, 1))  # type: ignore
        handler = self.pair_handlers().get(type(e))
        assert handler is not None, f"complex {type(e).__name__} at {loc}"
        return handler(e)

    def pair_handlers(self) -> dict[type, Callable[[ir.Expr], Pair]]:
        return {ir.BinOp: self.pair_binop, ir.UnaryOp: self.pair_neg, ir.Cast: self.pair_cast,
                ir.IfExp: self.pair_ifexp, ir.Select: self.pair_select,
                ir.Call: self.pair_call, ir.Subgroup: self.pair_subgroup,
                ir.ComplexCall: self.pair_function}  # type: ignore[dict-item]

    def pair_binop(self, e: ir.BinOp) -> Pair:
        if e.op in (_B.ADD, _B.SUB):
            (ar, ai), (br, bi) = self.pair(e.lhs), self.pair(e.rhs)
            return _binop(e.op, ar, br, e.loc), _binop(e.op, ai, bi, e.loc)
        if e.op is _B.MUL:
            return self.product(self.cheap_pair(e.lhs), self.cheap_pair(e.rhs), e.loc)
        name = {_B.DIV: "divide", _B.POW: "power"}[e.op]
        return self.prelude.call_pair(name, self.pair(e.lhs) + self.pair(e.rhs), e.loc,
                                      self.fresh, self.scope.pending)

    @staticmethod
    def product(a: Pair, b: Pair, loc: ir.Loc) -> Pair:
        """numpy's complex product, (ac - bd) + (ad + bc)i, of parts safe to read twice."""
        (ar, ai), (br, bi) = a, b
        re = _binop(_B.SUB, _binop(_B.MUL, ar, br, loc), _binop(_B.MUL, ai, bi, loc), loc)
        im = _binop(_B.ADD, _binop(_B.MUL, ar, bi, loc), _binop(_B.MUL, ai, br, loc), loc)
        return re, im

    def pair_neg(self, e: ir.UnaryOp) -> Pair:
        assert e.op is ir.UnaryOpKind.NEG, f"complex {e.op} at {e.loc}"
        re, im = self.pair(e.operand)
        return _neg(re), _neg(im)

    def pair_cast(self, e: ir.Cast) -> Pair:
        part = e.type.real_dtype
        if _is_complex(e.value.type):
            re, im = self.pair(e.value)
        else:
            re, im = self.real(e.value), _const(0.0, part, e.loc)
        return tuple(v if v.type == part else ir.Cast(value=v, type=part, loc=e.loc)
                     for v in (re, im))  # type: ignore[return-value]

    def pair_ifexp(self, e: ir.IfExp) -> Pair:
        cond = self.real(e.cond)
        then_ahead, then = self.hoisting(lambda: self.pair(e.then))
        else_ahead, orelse = self.hoisting(lambda: self.pair(e.orelse))
        if not then_ahead and not else_ahead:
            c = self.cheap(cond)
            return tuple(ir.IfExp(cond=c, then=t, orelse=o, type=t.type, loc=e.loc)
                         for t, o in zip(then, orelse))  # type: ignore
        return self.branches(cond, (then_ahead, then), (else_ahead, orelse),  # type: ignore
                             e.loc)

    def pair_select(self, e: ir.Select) -> Pair:
        c = self.cheap(self.real(e.cond))
        then, orelse = self.pair(e.then), self.pair(e.orelse)
        return tuple(ir.Select(cond=c, then=t, orelse=o, type=t.type, loc=e.loc)
                     for t, o in zip(then, orelse))  # type: ignore[return-value]

    def pair_call(self, e: ir.Call) -> Pair:
        """A device function returning a complex value: its real part, then the imaginary
        part it left in its return array (read before any other call)."""
        part = e.type.real_dtype
        call = ir.Call(function=e.function, args=self.arguments(e.args), type=part, loc=e.loc)
        re = self.cheap(call)
        slot = self.returns[e.function]
        load = ir.ArrayLoad(array=slot, indices=(_const(0, dt.i32, e.loc),), type=part,
                            loc=e.loc)
        name = self.fresh(part, e.loc)
        self.scope.pending.append(ir.Assign(name=name, value=load, loc=e.loc))
        return re, ir.LocalRef(name=name, type=part, loc=e.loc)

    def pair_subgroup(self, e: ir.Subgroup) -> Pair:
        """Sums, broadcasts and shuffles of complex values: of each part."""
        re, im = self.pair(e.args[0])
        rest = tuple(self.cheap(self.real(a)) for a in e.args[1:])
        return tuple(replace(e, args=(v,) + rest, type=v.type)
                     for v in (re, im))  # type: ignore[return-value]

    def pair_function(self, e: ir.ComplexCall) -> Pair:
        fn = e.fn
        if fn is ir.ComplexFn.MAKE:
            return self.real(e.args[0]), self.real(e.args[1])
        if fn is ir.ComplexFn.CONJ:
            re, im = self.pair(e.args[0])
            return re, _neg(im)
        if fn is ir.ComplexFn.SQUARE:
            z = self.cheap_pair(e.args[0])
            return self.product(z, z, e.loc)
        return self.prelude.call_pair(fn.value, self.pair(e.args[0]), e.loc, self.fresh,
                                      self.scope.pending)


class _Scope:
    """The body being rewritten (the kernel's or a function's): the fresh locals it declares,
    the statements pending ahead of the current one, and (in a function that returns a
    complex value) the array its imaginary part goes to."""

    def __init__(self, returns: str | None = None) -> None:
        self.temps: list[ir.Local] = []
        self.pending: list[ir.Stmt] = []
        self.returns = returns
        self._memo: dict[int, tuple[ir.Expr, bool]] = {}

    def is_complex(self, name: str, t: object) -> bool:
        return _is_complex(t)

    def has_complex(self, e: ir.Expr) -> bool:
        """Whether `e` computes with a complex value anywhere (remembered per node)."""
        entry = self._memo.get(id(e))
        if entry is None:  # the node is kept with its answer, so that its id stays its own
            entry = (e, any(_is_complex(getattr(n, "type", None))
                            or isinstance(n, ir.ComplexCall) for n in ir.walk(e)))
            self._memo[id(e)] = entry
        return entry[1]

    def declared(self, original: tuple[ir.Local, ...]) -> tuple[ir.Local, ...]:
        """The scope's locals: the original ones (complex ones as their parts), then the
        fresh ones."""
        return tuple(q for v in original for q in _lowered_local(v)) + tuple(self.temps)


def _lowered_local(v: ir.Local) -> tuple[ir.Local, ...]:
    if not _is_complex(v.type):
        return (v,)
    return tuple(replace(v, name=n, type=v.type.real_dtype) for n in part_names(v.name))


def _lowered_decl(a: ir.ArrayDecl) -> ir.ArrayDecl:
    if not a.dtype.is_complex:
        return a
    return replace(a, dtype=a.dtype.real_dtype, shape=a.shape + (2,))


# ---------------------------------------------------------------- arguments of lowered kernels


def real_view(array: np.ndarray) -> np.ndarray:
    """A complex numpy array as the lowered kernel's real array: one more axis, the parts, of
    unit stride, over the same memory (writes go to `array`)."""
    part = np.dtype(np.float32 if array.dtype.itemsize == 8 else np.float64)
    if array.size == 0:
        return np.zeros(array.shape + (2,), part)
    # its first element (contiguous, as any one element is) read as two parts: a real array
    # that starts where `array` starts, over which the view is laid with `array`'s strides
    first = array[(slice(0, 1),) * array.ndim].view(part)
    return np.lib.stride_tricks.as_strided(first, shape=array.shape + (2,),
                                           strides=array.strides + (part.itemsize,),
                                           writeable=array.flags.writeable)


def lowered_arguments(params: tuple[ir.Param, ...], arrays: Mapping[str, np.ndarray],
                      scalars: Mapping[str, object]
                      ) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """A launch's numpy arrays and scalars by the names and types of the lowered kernel's
    parameters: complex arrays as their real views, complex scalars as their two parts."""
    out_arrays, out_scalars = dict(arrays), dict(scalars)
    for p in params:
        t = p.type
        if isinstance(t, ArrayType) and t.dtype.is_complex:
            out_arrays[p.name] = real_view(arrays[p.name])
        elif not isinstance(t, ArrayType) and t.is_complex:
            z = complex(scalars[p.name])  # type: ignore[arg-type]
            re, im = part_names(p.name)
            out_scalars[re], out_scalars[im] = z.real, z.imag
            del out_scalars[p.name]
    return out_arrays, out_scalars
