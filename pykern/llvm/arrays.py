"""Array element access: addresses from shape, element strides and offset (the layout every
pykern backend uses), loads, stores and atomics.

Addresses are computed in i64 (indices are sign-extended), so no large array overflows them.
Nothing here is bounds-checked: `exprs.element_access` checks the element's address against
the buffer before it asks for an element (`pykern.llvm.robust`; in debug mode each index
against its dimension, `pykern.llvm.debug`), unless the workgroup's proof made that check
needless.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.llvm.emitter import ArrayView, Emitter
from pykern.llvm.types import I1, I8, memory_type, value_type

ORDERING = "seq_cst"


def element_pointer(em: Emitter, view: ArrayView, indices: list[ll.Value]) -> ll.Value:
    return pointer_at(em, view, element_address(em, view, indices))


def element_address(em: Emitter, view: ArrayView, indices: list[ll.Value]) -> ll.Value:
    """The element `indices` of `view` as an i64 count of elements from its pointer."""
    bld = em.builder
    address = view.offset
    for index, stride in zip(indices, view.strides, strict=True):
        term = bld.mul(em.i64(index), stride)
        address = bld.add(address, term)
    return address


def pointer_at(em: Emitter, view: ArrayView, address: ll.Value) -> ll.Value:
    return em.builder.gep(view.pointer, [address], source_etype=view.element)


def load(em: Emitter, view: ArrayView, pointer: ll.Value) -> ll.Value:
    value = em.builder.load(pointer, typ=view.element)
    if view.dtype.kind == dt.BOOL:
        return em.builder.icmp_unsigned("!=", value, ll.Constant(I8, 0))
    return value


def store(em: Emitter, view: ArrayView, pointer: ll.Value, value: ll.Value) -> None:
    if view.dtype.kind == dt.BOOL:
        value = em.builder.zext(value, I8)
    em.builder.store(value, pointer)


# ---------------------------------------------------------------- atomics

_INT_RMW: dict[ir.AtomicOp, tuple[str, str]] = {  # op -> (signed, unsigned) atomicrmw name
    ir.AtomicOp.ADD: ("add", "add"), ir.AtomicOp.SUB: ("sub", "sub"),
    ir.AtomicOp.AND: ("and", "and"), ir.AtomicOp.OR: ("or", "or"),
    ir.AtomicOp.XOR: ("xor", "xor"), ir.AtomicOp.EXCHANGE: ("xchg", "xchg"),
    ir.AtomicOp.MIN: ("min", "umin"), ir.AtomicOp.MAX: ("max", "umax"),
}
_FLOAT_RMW = {ir.AtomicOp.ADD: "fadd", ir.AtomicOp.SUB: "fsub", ir.AtomicOp.EXCHANGE: "xchg"}


def atomic(em: Emitter, e: ir.Atomic, pointer: ll.Value, value: ll.Value,
           comparator: ll.Value | None) -> ll.Value:
    """Atomic `e.op` on the element at `pointer`; the old value."""
    t: DType = e.type
    bld = em.builder
    if e.op is ir.AtomicOp.CAS:
        assert comparator is not None
        return compare_and_swap(em, t, pointer, comparator, value)
    if t.is_float:
        if e.op in _FLOAT_RMW:
            return bld.atomic_rmw(_FLOAT_RMW[e.op], pointer, value, ORDERING)
        fmin_fmax = _nan_avoiding(e.op is ir.AtomicOp.MIN)
        return cas_loop(em, t, pointer, lambda old: fmin_fmax(em, old, value))
    signed, unsigned = _INT_RMW[e.op]
    return bld.atomic_rmw(signed if t.kind == dt.INT else unsigned, pointer, value, ORDERING)


def _nan_avoiding(less: bool) -> Callable[[Emitter, ll.Value, ll.Value], ll.Value]:
    """GLSL NMin/NMax as the interpreter's float atomics compute them: with one NaN operand,
    the other; else `value` where it is strictly smaller (larger), else `old`."""
    def emit(em: Emitter, old: ll.Value, value: ll.Value) -> ll.Value:
        bld = em.builder
        value_nan = bld.fcmp_unordered("uno", value, value)
        old_nan = bld.fcmp_unordered("uno", old, old)
        better = bld.fcmp_ordered("<" if less else ">", value, old)
        take_value = bld.and_(bld.not_(value_nan), bld.or_(old_nan, better))
        return bld.select(take_value, value, old)
    return emit


def _bits_type(t: DType) -> ll.IntType:
    return ll.IntType(t.bits)


def compare_and_swap(em: Emitter, t: DType, pointer: ll.Value, comparator: ll.Value,
                     value: ll.Value) -> ll.Value:
    """Stores `value` where the element equals `comparator` (floats compared on their bits,
    as the GPU's integer compare-and-swap does); the old value."""
    bld = em.builder
    if t.is_float:
        bits = _bits_type(t)
        comparator, value = bld.bitcast(comparator, bits), bld.bitcast(value, bits)
    pair = bld.cmpxchg(pointer, comparator, value, ORDERING, ORDERING)
    old = bld.extract_value(pair, 0)
    return bld.bitcast(old, value_type(t)) if t.is_float else old


def cas_loop(em: Emitter, t: DType, pointer: ll.Value,
             update: Callable[[ll.Value], ll.Value]) -> ll.Value:
    """A read-modify-write no atomicrmw has: load, compute `update(old)`, compare-and-swap
    its bits, again until no other thread came between. The old value."""
    bld = em.builder
    bits = _bits_type(t)
    start = bld.load(pointer, typ=memory_type(t))
    before = bld.block
    loop, done = em.block("cas_loop"), em.block("cas_done")
    bld.branch(loop)
    bld.position_at_end(loop)
    old = bld.phi(value_type(t))
    old.add_incoming(start, before)
    new = update(old)
    pair = bld.cmpxchg(pointer, bld.bitcast(old, bits), bld.bitcast(new, bits), ORDERING,
                       ORDERING)
    seen = bld.bitcast(bld.extract_value(pair, 0), value_type(t))
    old.add_incoming(seen, bld.block)
    swapped = bld.extract_value(pair, 1)
    assert swapped.type == I1
    bld.cbranch(swapped, done, loop)
    bld.position_at_end(done)
    return seen

