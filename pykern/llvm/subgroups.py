"""Subgroup exchanges on the host (subgroups of `SUBGROUP_SIZE` lanes: `pykern.llvm.lanes`).

An exchange (`pykern.llvm.hoist`) runs between two regions of the workgroup
(`pykern.llvm.regions`): by then every invocation has stored its operands in its own slots,
so one loop over the subgroups, and in each over its lanes in order, computes every active
lane's result into its slot. Active: not returned, and inside every divergent `if` or loop
the exchange sits in (`pykern.llvm.divergence`). The results are the interpreter's
(`pykern.interpret.subgroups`): reductions combine the active lanes in lane order, each step
rounded; float min/max ignore NaNs (NMin/NMax, the first of two equal values); a shuffle or
broadcast from an inactive or out-of-range lane gives the invocation's own value.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from pykern import ir
from pykern.ir import SubgroupOp as S
from pykern.lang.dtypes import DType
from pykern.llvm import arith
from pykern.llvm.emitter import Emitter
from pykern.llvm.invocations import counted_loop
from pykern.llvm.lanes import SUBGROUP_SIZE
from pykern.llvm.types import I1, I32, value_type

Active = Callable[[ll.Value], ll.Value]  # linear local id -> i1: takes part
Slot = Callable[[str, ll.Value], ll.Value]  # (local, linear local id) -> its pointer


def exchange(em: Emitter, sg: ir.Subgroup, result: str, invocations: int, active: Active,
             slot: Slot) -> None:
    """Stores the result of exchange `sg` (its operands locals) into local `result` of every
    active invocation of a workgroup of `invocations`."""
    count = -(-invocations // SUBGROUP_SIZE)
    operands = [a.name for a in sg.args]  # type: ignore[attr-defined]
    t = sg.args[0].type

    def subgroup(g: ll.Value, _: ll.Block) -> None:
        bld = em.builder
        base = bld.mul(g, em.i32(SUBGROUP_SIZE), flags=("nsw", "nuw"))
        lanes: ll.Value = em.i32(SUBGROUP_SIZE)
        if invocations % SUBGROUP_SIZE:  # the last subgroup is partial
            last = bld.icmp_unsigned("==", g, em.i32(count - 1))
            lanes = bld.select(last, em.i32(invocations % SUBGROUP_SIZE), lanes)
        lanes_of = _Lanes(em, base, lanes, active, slot, t)
        if sg.op in _REDUCTIONS:
            lanes_of.reduce(_REDUCTIONS[sg.op], operands[0], result)
        elif sg.op is S.PREFIX_ADD:
            lanes_of.prefix_sum(operands[0], result)
        else:
            lanes_of.shuffle(operands[0], operands[1], result, xor=sg.op is S.SHUFFLE_XOR)

    counted_loop(em, "subgroup", em.i32(count), subgroup)


Combine = Callable[[Emitter, DType, ll.Value, ll.Value], ll.Value]


class _Lanes:
    """The lanes of one subgroup: those from `base` on, `lanes` of them."""

    def __init__(self, em: Emitter, base: ll.Value, lanes: ll.Value, active: Active,
                 slot: Slot, t: DType) -> None:
        self.em, self.base, self.lanes, self.active, self.slot, self.t = \
            em, base, lanes, active, slot, t
        self.vt = value_type(t)

    def each_active(self, body: Callable[[ll.Value, ll.Value], None]) -> None:
        """`body(lane, linear id)` for each active lane, in lane order."""
        em = self.em

        def visit(k: ll.Value, latch: ll.Block) -> None:
            bld = em.builder
            linear = bld.add(self.base, k, flags=("nsw", "nuw"))
            taking_part = em.block("lane_active")
            bld.cbranch(self.active(linear), taking_part, latch)
            bld.position_at_end(taking_part)
            body(k, linear)

        counted_loop(em, "lane", self.lanes, visit)

    def load(self, name: str, linear: ll.Value, t: ll.Type | None = None) -> ll.Value:
        return self.em.builder.load(self.slot(name, linear), typ=t or self.vt)

    def reduce(self, combine: Combine, operand: str, result: str) -> None:
        """Every active lane gets the active lanes' operands combined in lane order."""
        em = self.em
        total, seen = em.alloca(self.vt, "sg_total"), em.alloca(I1, "sg_seen")
        em.builder.store(ll.Constant(self.vt, None), total)
        em.builder.store(ll.Constant(I1, 0), seen)

        def add(k: ll.Value, linear: ll.Value) -> None:
            bld = em.builder
            v = self.load(operand, linear)
            combined = combine(em, self.t, bld.load(total, typ=self.vt), v)
            bld.store(bld.select(bld.load(seen, typ=I1), combined, v), total)
            bld.store(ll.Constant(I1, 1), seen)

        self.each_active(add)
        self.each_active(lambda k, linear: em.builder.store(
            em.builder.load(total, typ=self.vt), self.slot(result, linear)))

    def prefix_sum(self, operand: str, result: str) -> None:
        """Every active lane gets the sum of the active lanes' operands below it (zero for the
        first), added in lane order."""
        em = self.em
        total = em.alloca(self.vt, "sg_prefix")
        em.builder.store(ll.Constant(self.vt, 0.0 if self.t.is_float else 0), total)

        def add(k: ll.Value, linear: ll.Value) -> None:
            bld = em.builder
            so_far = bld.load(total, typ=self.vt)
            bld.store(so_far, self.slot(result, linear))
            bld.store(_add(em, self.t, so_far, self.load(operand, linear)), total)

        self.each_active(add)

    def shuffle(self, operand: str, lane_operand: str, result: str, xor: bool) -> None:
        """Every active lane gets the operand of the lane its lane operand names (or that
        xor its own lane), or its own where that lane is inactive or out of range."""
        em = self.em

        def read(k: ll.Value, linear: ll.Value) -> None:
            bld = em.builder
            source = self.load(lane_operand, linear, I32)
            if xor:
                source = bld.xor(k, source)
            in_range = bld.icmp_unsigned("<", source, self.lanes)
            source = bld.select(in_range, source, k)  # reads stay inside the subgroup
            source_linear = bld.add(self.base, source, flags=("nsw", "nuw"))
            other = self.load(operand, source_linear)
            take = bld.and_(in_range, self.active(source_linear))
            bld.store(bld.select(take, other, self.load(operand, linear)),
                      self.slot(result, linear))

        self.each_active(read)


def _add(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
    return arith.binary(em, ir.BinOpKind.ADD, t, a, b, ir.UNKNOWN_LOC)


def _int_or_nan_aware(less: bool) -> Combine:
    """min (`less`) or max: of integers by their signedness; of floats NMin/NMax, as the
    interpreter's `helpers.fmin`: the new value `b` where it is not NaN and the total is NaN
    or `b` is strictly smaller (larger), else the total."""
    op = "<" if less else ">"

    def emit(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
        bld = em.builder
        if not t.is_float:
            return bld.select(arith.binary(em, ir.BinOpKind.LT if less else ir.BinOpKind.GT,
                                           t, b, a, ir.UNKNOWN_LOC), b, a)
        take_b = bld.and_(bld.fcmp_ordered("ord", b, b),
                          bld.or_(bld.fcmp_unordered("uno", a, a), bld.fcmp_ordered(op, b, a)))
        return bld.select(take_b, b, a)
    return emit


_REDUCTIONS: dict[S, Combine] = {
    S.ADD: _add,
    S.MIN: _int_or_nan_aware(less=True),
    S.MAX: _int_or_nan_aware(less=False),
    S.ANY: lambda em, t, a, b: em.builder.or_(a, b),
    S.ALL: lambda em, t, a, b: em.builder.and_(a, b),
}
