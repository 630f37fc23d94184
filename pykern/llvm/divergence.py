"""Control flow around subgroup exchanges (an `if`, `for` or `while` that contains one and no
barrier), run as a SIMD machine runs it: with a mask per invocation, so it may diverge.

- `if`: every active invocation evaluates the condition in a region of its own, which sets
  its flag in the then-mask (and the else-mask); the body's regions and exchanges then run
  under the then-mask, the `else` under the else-mask. After the `if` every invocation that
  was active is active again: the subgroup reconverges, as on Vulkan devices (lavapipe,
  NVIDIA) — an exchange after the `if` sees the whole subgroup.
- loops: the loop mask starts full; each iteration the active invocations evaluate the
  condition (for a `range`: their own counter against their own bounds, kept per invocation)
  and those for which it is false leave the loop; it ends when no active invocation is left.
  So an exchange in iteration k takes the invocations that run their k-th iteration. `break`
  takes the invocation out of the loop mask, `continue` out of the iteration's mask, which
  each iteration fills again (`Workgroup.loop_exits`).

A mask is only ever read together with every mask around it and the invocation's alive flag
(`Workgroup.active`), so an invocation's flag need only be right where all those let it
through: where it was set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir as ll

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.llvm import exprs, stopping
from pykern.llvm.invocations import zero_fill
from pykern.llvm.stmts import counter_type
from pykern.llvm.types import value_type

if TYPE_CHECKING:
    from pykern.llvm.regions import Workgroup


def masked(wg: Workgroup, s: ir.Stmt) -> None:
    if isinstance(s, ir.If):
        masked_if(wg, s)
    elif isinstance(s, ir.While):
        _masked_loop(wg, lambda: exprs.expr(wg.em, s.cond), s.body)
    elif isinstance(s, ir.ForRange):
        masked_range(wg, s)
    else:
        raise AssertionError(f"a subgroup exchange inside {type(s).__name__} at {s.loc}")


def under(wg: Workgroup, mask: ll.Value, emit: Callable[[], None]) -> None:
    """`emit()` with `mask` the innermost mask."""
    wg.masks.append(mask)
    try:
        emit()
    finally:
        wg.masks.pop()


def masked_if(wg: Workgroup, s: ir.If) -> None:
    em = wg.em
    then_mask = wg.new_mask("then")
    else_mask = wg.new_mask("else") if s.orelse else None

    def evaluate() -> None:
        cond = exprs.expr(em, s.cond)
        wg.set_flag(then_mask, cond)
        if else_mask is not None:
            wg.set_flag(else_mask, em.builder.not_(cond))

    wg.each_invocation(evaluate)
    under(wg, then_mask, lambda: wg.block(s.body))
    if else_mask is not None:
        under(wg, else_mask, lambda: wg.block(s.orelse))


def _masked_loop(wg: Workgroup, condition: Callable[[], ll.Value], body: tuple[ir.Stmt, ...],
                 latch: Callable[[], None] | None = None) -> None:
    """A loop whose active invocations evaluate `condition()` (i1) before each iteration and
    run `body`, then `latch()` (which `continue` does not skip)."""
    em = wg.em
    bld = em.builder
    loop_mask, iteration = wg.new_mask("loop"), wg.new_mask("iteration")
    zero_fill(em, loop_mask, wg.padded, value=1)
    head, body_block, done = em.block("divergent_head"), em.block("divergent_body"), \
        em.block("divergent_done")
    bld.branch(head)
    bld.position_at_end(head)
    stopping.poll(em)
    wg.masks.append(loop_mask)
    wg.each_invocation(lambda: wg.set_flag(loop_mask, condition()))
    bld.cbranch(wg.any_active(), body_block, done)
    bld.position_at_end(body_block)
    zero_fill(em, iteration, wg.padded, value=1)
    wg.loop_masks.append((loop_mask, iteration))
    under(wg, iteration, lambda: wg.block(body))
    wg.loop_masks.pop()
    if latch is not None:
        wg.each_invocation(latch)
    em.branch_if_open(head)
    bld.position_at_end(done)
    wg.masks.pop()


def masked_range(wg: Workgroup, s: ir.ForRange) -> None:
    """`for var in range(start, stop, step)` with Python's semantics (`stmts.range_loop`), per
    invocation: bounds evaluated once, a hidden counter twice as wide as `var`."""
    em = wg.em
    t = s.start.type
    wide = counter_type(t)
    counter, stop, step = (em.alloca(wide, name, count=wg.size)
                           for name in ("range_counter", "range_stop", "range_step"))

    def at(slots: ll.Value) -> ll.Value:
        return em.builder.gep(slots, [wg.current], source_etype=wide)

    def start() -> None:
        for slots, bound in ((counter, s.start), (stop, s.stop), (step, s.step)):
            em.builder.store(_widen(em.builder, t, exprs.expr(em, bound), wide), at(slots))

    def condition() -> ll.Value:
        bld = em.builder
        c = bld.load(at(counter), typ=wide)
        go = _continues(bld, t, c, bld.load(at(stop), typ=wide), bld.load(at(step), typ=wide))
        bld.store(bld.select(go, bld.trunc(c, value_type(t)), bld.load(em.locals[s.var],
                                                                        typ=value_type(t))),
                  em.locals[s.var])  # after the loop `var` keeps the last value taken
        return go

    def latch() -> None:
        bld = em.builder
        bld.store(bld.add(bld.load(at(counter), typ=wide), bld.load(at(step), typ=wide)),
                  at(counter))

    wg.each_invocation(start)
    _masked_loop(wg, condition, s.body, latch)


def _widen(bld: ll.IRBuilder, t: DType, v: ll.Value, wide: ll.IntType) -> ll.Value:
    return bld.sext(v, wide) if t.kind == dt.INT else bld.zext(v, wide)


def _continues(bld: ll.IRBuilder, t: DType, c: ll.Value, stop: ll.Value,
               step: ll.Value) -> ll.Value:
    """i1: a range loop at counter `c` runs another iteration (up for a positive step, down
    for a negative one, never for a zero step), as `stmts.range_loop` decides."""
    zero = ll.Constant(c.type, 0)
    if t.kind != dt.INT:
        return bld.and_(bld.icmp_unsigned("!=", step, zero), bld.icmp_unsigned("<", c, stop))
    up = bld.and_(bld.icmp_signed(">", step, zero), bld.icmp_signed("<", c, stop))
    down = bld.and_(bld.icmp_signed("<", step, zero), bld.icmp_signed(">", c, stop))
    return bld.or_(up, down)
