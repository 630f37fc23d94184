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


def exchange(em: Emitter, sg: ir.Subgroup, result: str, subgroups: int, active: Active,
             slot: Slot) -> None:
    """Stores the result of exchange `sg` (its operands locals) into local `result` of every
    active invocation of a workgroup of `subgroups` subgroups (whose slots exist for every
    lane, a partial subgroup's missing ones too: those are never active)."""
    operands = [a.name for a in sg.args]  # type: ignore[attr-defined]
    t = sg.args[0].type

    def subgroup(g: ll.Value, _: ll.Block) -> None:
        base = em.builder.mul(g, em.i32(SUBGROUP_SIZE), flags=("nsw", "nuw"))
        lanes = _Lanes(em, base, active, slot, t)
        if sg.op in _REDUCTIONS:
            lanes.reduce(_REDUCTIONS[sg.op], operands[0], result)
        elif sg.op is S.PREFIX_ADD:
            lanes.prefix_sum(operands[0], result)
        else:
            lanes.shuffle(operands[0], operands[1], result, xor=sg.op is S.SHUFFLE_XOR)

    counted_loop(em, "subgroup", em.i32(subgroups), subgroup, plain=True)


Combine = Callable[[Emitter, DType, ll.Value, ll.Value], ll.Value]


class _Lanes:
    """The lanes of one subgroup: `SUBGROUP_SIZE` of them from linear id `base` on."""

    def __init__(self, em: Emitter, base: ll.Value, active: Active, slot: Slot,
                 t: DType) -> None:
        self.em, self.base, self.active, self.slot, self.t = em, base, active, slot, t
        self.vt = value_type(t)

    def each_lane(self, body: Callable[[ll.Value, ll.Value, ll.Value], None]) -> None:
        """`body(lane, linear id, active)` for each lane in lane order, unrolled and
        branch-free: no branch to mispredict where invocations diverge (an inactive lane's
        result is kept by `keep`)."""
        for k in range(SUBGROUP_SIZE):
            lane = self.em.i32(k)
            linear = self.em.builder.add(self.base, lane, flags=("nsw", "nuw"))
            body(lane, linear, self.active(linear))

    def load(self, name: str, linear: ll.Value, t: ll.Type | None = None) -> ll.Value:
        return self.em.builder.load(self.slot(name, linear), typ=t or self.vt)

    def keep(self, result: str, linear: ll.Value, active: ll.Value, value: ll.Value) -> None:
        """Stores `value` as lane `linear`'s result where it is active; else its local keeps
        what it held (the result may be a local of the kernel's own)."""
        old = self.load(result, linear)
        self.em.builder.store(self.em.builder.select(active, value, old),
                              self.slot(result, linear))

    def reduce(self, combine: Combine, operand: str, result: str) -> None:
        """Every active lane gets the active lanes' operands combined in lane order."""
        em = self.em
        total, seen = em.alloca(self.vt, "sg_total"), em.alloca(I1, "sg_seen")
        em.builder.store(ll.Constant(self.vt, None), total)
        em.builder.store(ll.Constant(I1, 0), seen)

        def add(k: ll.Value, linear: ll.Value, active: ll.Value) -> None:
            bld = em.builder
            v = self.load(operand, linear)
            so_far, any_seen = bld.load(total, typ=self.vt), bld.load(seen, typ=I1)
            combined = bld.select(any_seen, combine(em, self.t, so_far, v), v)
            bld.store(bld.select(active, combined, so_far), total)
            bld.store(bld.or_(any_seen, active), seen)

        self.each_lane(add)
        self.each_lane(lambda k, linear, active: self.keep(
            result, linear, active, em.builder.load(total, typ=self.vt)))

    def prefix_sum(self, operand: str, result: str) -> None:
        """Every active lane gets the sum of the active lanes' operands below it (zero for the
        first), added in lane order."""
        em = self.em
        total = em.alloca(self.vt, "sg_prefix")
        em.builder.store(ll.Constant(self.vt, 0.0 if self.t.is_float else 0), total)

        def add(k: ll.Value, linear: ll.Value, active: ll.Value) -> None:
            bld = em.builder
            so_far = bld.load(total, typ=self.vt)
            self.keep(result, linear, active, so_far)
            more = _add(em, self.t, so_far, self.load(operand, linear))
            bld.store(bld.select(active, more, so_far), total)

        self.each_lane(add)

    def shuffle(self, operand: str, lane_operand: str, result: str, xor: bool) -> None:
        """Every active lane gets the operand of the lane its lane operand names (or that
        xor its own lane), or its own where that lane is inactive or out of range."""
        em = self.em

        def read(k: ll.Value, linear: ll.Value, active: ll.Value) -> None:
            bld = em.builder
            source = self.load(lane_operand, linear, I32)
            if xor:
                source = bld.xor(k, source)
            in_range = bld.icmp_unsigned("<", source, em.i32(SUBGROUP_SIZE))
            source = bld.select(in_range, source, k)  # reads stay inside the subgroup
            source_linear = bld.add(self.base, source, flags=("nsw", "nuw"))
            other = self.load(operand, source_linear)
            take = bld.and_(in_range, self.active(source_linear))
            self.keep(result, linear, active,
                      bld.select(take, other, self.load(operand, linear)))

        self.each_lane(read)


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
