"""`lower_bf16`: bfloat16 rewritten into f32 arithmetic on 16-bit words, for every backend.

No device needs bf16 support for this (lavapipe has none; VK_KHR_shader_bfloat16 is not used):

- in memory, a bf16 element is a 16-bit word, the high half of the f32 bit pattern: bf16
  arrays (parameters, `pk.shared`, `pk.local`) become u16 arrays;
- in registers, a bf16 value is an f32 that holds a bf16-representable value: a load is
  `bitcast_f32(u32(word) << 16)`, exact; a store keeps the high 16 bits of such an f32;
- every operation that may leave the bf16 grid (`+ - * / // % **`, math functions, subgroup
  sums, conversions to bf16) computes in f32 and rounds to bf16, to nearest even (NaN stays a
  quiet NaN, infinity infinity, overflow gives infinity) by `pk_prelude_bf16_round`, a function
  on the f32 bits added to the kernel (`pykern.mathlib.bf16_functions`). f32 has 24 >= 2 * 8 + 2
  bits, so rounding the correctly rounded f32 result once more gives the correctly rounded bf16
  one for `+ - * /`: the bits of ml_dtypes and torch's CPU bf16;
- conversions from types that f32 does not hold exactly (i32, u32, i64, u64, f64) round to
  f32 *to odd* first (`pk_prelude_bf16_odd_<type>`), so that they too are correctly rounded,
  as ml_dtypes converts.

Scalar bf16 parameters become f32 ones; the host rounds their values to bf16
(`pykern.jit.arguments`). The JIT runs this pass ahead of `decompose`, and for the interpreter,
so both backends compute the same bits; the variant's parameters keep their bf16 types, which
is what launches check arguments against.
"""

from __future__ import annotations

from dataclasses import replace

from pykern import ir
from pykern.ir.identity_cache import IdentityCache
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import ArrayType, DType
from pykern.mathlib.bf16_functions import ROUND, odd_function, odd_name, round_function
from pykern.passes.rewrite import rewrite

# the types whose conversion to f32 may round: they go to bf16 through a round to odd
_ROUNDED_TO_F32 = frozenset({dt.i32, dt.u32, dt.i64, dt.u64, dt.f64})
_ARITHMETIC = frozenset({ir.BinOpKind.ADD, ir.BinOpKind.SUB, ir.BinOpKind.MUL, ir.BinOpKind.DIV,
                         ir.BinOpKind.FLOORDIV, ir.BinOpKind.MOD, ir.BinOpKind.POW})
_SUMS = frozenset({ir.SubgroupOp.ADD, ir.SubgroupOp.PREFIX_ADD})
_CACHE_SIZE = 256
# per kernel object (see pykern.ir.identity_cache)
_cache: IdentityCache[ir.Kernel] = IdentityCache()


def lower_bf16(kernel: ir.Kernel) -> ir.Kernel:
    """`kernel` with no bf16 left (see the module docstring); `kernel` itself when it has
    none. The result is remembered per kernel object, so launches that reuse a kernel's IR
    get the same rewritten object."""
    hit = _cache.get(kernel)
    if hit is not None:
        return hit
    return _cache.put(kernel, _lower(kernel) if uses_bf16(kernel) else kernel, _CACHE_SIZE)


def uses_bf16(kernel: ir.Kernel) -> bool:
    """Whether any type in `kernel` is bf16."""
    if any(f.return_type == dt.bf16 for f in kernel.functions):
        return True
    return any(_type_of(node) == dt.bf16 for node in ir.walk(kernel))


def _type_of(node: ir.Node) -> object:
    if isinstance(node, ir.ArrayDecl):
        return node.dtype
    t = getattr(node, "type", None)
    return t.dtype if isinstance(t, ArrayType) else t


def _lower(kernel: ir.Kernel) -> ir.Kernel:
    arrays = {p.name for p in kernel.params
              if isinstance(p.type, ArrayType) and p.type.dtype == dt.bf16}
    arrays |= {a.name for a in kernel.arrays if a.dtype == dt.bf16}
    rewriter = _Rewriter(arrays)
    lowered = rewrite(kernel, rewriter.node)
    added = tuple(odd_function(t) for t in sorted(rewriter.odd_sources, key=lambda t: t.name))
    if rewriter.rounds:
        added = (round_function(),) + added
    return replace(lowered, functions=added + lowered.functions)


class _Rewriter:
    """The rewriting of one node whose children are rewritten already; `arrays` are the names
    of the kernel's bf16 arrays (functions refer to the kernel's arrays by name)."""

    def __init__(self, arrays: set[str]) -> None:
        self.arrays = arrays
        self.odd_sources: set[DType] = set()  # the types converted to bf16 through odd
        self.rounds = False  # whether any value is rounded to bf16

    def cast(self, node: ir.Cast) -> ir.Expr:
        """A conversion whose bf16 operand is an f32 already: to bf16, through f32 (rounded to
        odd where f32 may not hold the value) and rounded; from bf16, the f32's conversion
        (none at all to f32)."""
        source = node.value.type
        if node.type != dt.bf16:
            return node.value if source == node.type else node
        if source in _ROUNDED_TO_F32:
            self.odd_sources.add(source)
            value: ir.Expr = ir.Call(function=odd_name(source), args=(node.value,),
                                     type=dt.f32, loc=node.loc)
        else:
            value = node.value if source == dt.f32 else replace(node, type=dt.f32)
        return self.rounded(value)

    def rounded(self, value: ir.Expr) -> ir.Expr:
        """`value`, an f32, rounded to bf16."""
        self.rounds = True
        return ir.Call(function=ROUND, args=(value,), type=dt.f32, loc=value.loc)

    def node(self, node: ir.Node) -> ir.Node:
        if isinstance(node, ir.Store) and node.array in self.arrays:
            return replace(node, value=_to_word(node.value))
        if isinstance(node, ir.Cast):
            return self.cast(node)
        if isinstance(node, (ir.Param, ir.Local, ir.ArrayDecl, ir.Function)):
            return _declaration(node)
        if not isinstance(node, ir.Expr) or node.type != dt.bf16:
            return node
        assert not isinstance(node, ir.Atomic), f"atomic on bf16 at {node.loc}"  # frontend's
        if isinstance(node, ir.Const):
            return replace(node, type=dt.f32, value=dt.round_to_bf16(float(node.value)))
        if isinstance(node, ir.ArrayLoad):
            return _from_word(replace(node, type=dt.u16))
        value = replace(node, type=dt.f32)
        return self.rounded(value) if _may_leave_bf16(node) else value


def _may_leave_bf16(node: ir.Expr) -> bool:
    """Whether `node`'s f32 result may not be a bf16 value (min, max, negation, abs, selection
    and moves of bf16 values are bf16 values)."""
    if isinstance(node, ir.BinOp):
        return node.op in _ARITHMETIC
    if isinstance(node, ir.Subgroup):
        return node.op in _SUMS
    return isinstance(node, ir.MathCall)


def _declaration(node: ir.Param | ir.Local | ir.ArrayDecl | ir.Function) -> ir.Node:
    """A declaration of bf16 as its f32 value, or its u16 words for arrays."""
    if isinstance(node, ir.ArrayDecl):
        return replace(node, dtype=dt.u16) if node.dtype == dt.bf16 else node
    if isinstance(node, ir.Function):
        return replace(node, return_type=dt.f32) if node.return_type == dt.bf16 else node
    if isinstance(node.type, ArrayType):
        bf16 = node.type.dtype == dt.bf16
        return replace(node, type=ArrayType(dt.u16, node.type.ndim)) if bf16 else node
    return replace(node, type=dt.f32) if node.type == dt.bf16 else node


def _from_word(word: ir.Expr) -> ir.Expr:
    """The f32 value of a bf16 word: its bits in the high half."""
    wide = ir.Cast(value=word, type=dt.u32, loc=word.loc)
    return ir.Bitcast(value=_binop(ir.BinOpKind.LSHIFT, wide, _u32(16, word.loc)), type=dt.f32,
                      loc=word.loc)


def _to_word(value: ir.Expr) -> ir.Expr:
    """The bf16 word of an f32 holding a bf16 value: its high half."""
    bits = ir.Bitcast(value=value, type=dt.u32, loc=value.loc)
    high = _binop(ir.BinOpKind.RSHIFT, bits, _u32(16, value.loc))
    return ir.Cast(value=high, type=dt.u16, loc=value.loc)


def _binop(op: ir.BinOpKind, lhs: ir.Expr, rhs: ir.Expr) -> ir.Expr:
    return ir.BinOp(op=op, lhs=lhs, rhs=rhs, type=lhs.type, loc=lhs.loc)


def _u32(value: int, loc: ir.Loc = ir.UNKNOWN_LOC) -> ir.Expr:
    return ir.Const(value=value, type=dt.u32, loc=loc)

