"""IR statements to LLVM control flow: one function per node class, dispatched by a table.

`Barrier` never reaches here: kernels with barriers are split into regions between them
first (`pykern.llvm.regions`), and every region is barrier-free code.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.llvm import arrays, debug, exprs, stopping
from pykern.llvm.emitter import Emitter, Loop
from pykern.llvm.types import value_type


def block(em: Emitter, body: tuple[ir.Stmt, ...]) -> None:
    for s in body:
        if em.builder.block.is_terminated:
            em.continue_in_fresh_block()
        stmt(em, s)


def stmt(em: Emitter, s: ir.Stmt) -> None:
    method = _DISPATCH.get(type(s))
    if method is None:
        raise AssertionError(f"no LLVM lowering for IR statement {type(s).__name__} at {s.loc}")
    method(em, s)


def _assign(em: Emitter, s: ir.Assign) -> None:
    em.builder.store(exprs.expr(em, s.value), em.locals[s.name])


def _store(em: Emitter, s: ir.Store) -> None:
    # Python evaluates the value before the subscript of the target (so does the SPIR-V path)
    value = exprs.expr(em, s.value)
    view = em.arrays[s.array]
    exprs.element_access(em, s, s.array, exprs.indices_of(em, s.indices),
                         lambda pointer: arrays.store(em, view, pointer, value))


def _assert(em: Emitter, s: ir.Assert) -> None:
    # asserts exist only in debug mode (the frontend drops them otherwise)
    assert em.debug is not None, f"an assert outside debug mode at {s.loc}"
    debug.check_assert(em, s, exprs.expr(em, s.cond))


def _if(em: Emitter, s: ir.If) -> None:
    bld = em.builder
    cond = exprs.expr(em, s.cond)
    then_block, done = em.block("if_then"), em.block("if_done")
    else_block = em.block("if_else") if s.orelse else done
    bld.cbranch(cond, then_block, else_block)
    bld.position_at_end(then_block)
    block(em, s.body)
    em.branch_if_open(done)
    if s.orelse:
        bld.position_at_end(else_block)
        block(em, s.orelse)
        em.branch_if_open(done)
    bld.position_at_end(done)


def counter_type(t: DType) -> ll.IntType:
    """The hidden counter of a `range` loop over `t`: twice as wide, so `counter + step`
    never wraps (Python's ints do not)."""
    return ll.IntType(2 * t.bits)


def range_loop(em: Emitter, t: DType, start: ll.Value, stop: ll.Value, step: ll.Value,
               body: Callable[[ll.Value], None],
               polls: stopping.RangePolls = stopping.NO_POLLS) -> None:
    """`for c in range(start, stop, step): body(c)` with Python's semantics: bounds evaluated
    once (here: already), counting up for a positive step, down for a negative one, nothing
    for a zero step. `body` gets the counter as a value of `t`; break and continue work.
    `polls` says where the loop polls the launch's stop word (`pykern.llvm.stopping`): at
    every iteration, or between chunks of iterations (an outer loop around the counted one),
    or nowhere."""
    bld = em.builder
    wide = counter_type(t)
    signed = t.kind == dt.INT

    def widen(v: ll.Value) -> ll.Value:
        return bld.sext(v, wide) if signed else bld.zext(v, wide)

    start_w, stop_w, step_w = widen(start), widen(stop), widen(step)
    counter = em.alloca(wide, "range_counter")
    bld.store(start_w, counter)
    # the counter again in `t`, marked no-wrap where its step is a constant unit (`_no_wrap`:
    # then indices made of it are affine to LLVM, and the loop vectoriser loads whole vectors)
    narrow = em.alloca(value_type(t), "range_value")
    bld.store(start, narrow)
    head, body_block, latch, done = (em.block(n) for n in ("for_head", "for_body",
                                                           "for_latch", "for_done"))
    limit, chunk_end = stop_w, done
    if polls.chunk is not None:  # an outer loop over chunks, polled between two of them
        chunk_start, chunk_end = em.block("for_chunk"), em.block("for_chunk_end")
        bld.branch(chunk_start)
        bld.position_at_end(chunk_start)
        limit = _chunk_limit(bld, signed, bld.load(counter, typ=wide), stop_w, step_w,
                             polls.chunk)
    bld.branch(head)
    bld.position_at_end(head)
    bld.cbranch(_continues(bld, signed, bld.load(counter, typ=wide), limit, step_w),
                body_block, chunk_end)
    bld.position_at_end(body_block)
    em.loops.append(Loop(done, latch))
    body(bld.load(narrow, typ=value_type(t)))
    em.loops.pop()
    em.branch_if_open(latch)
    bld.position_at_end(latch)
    bld.store(bld.add(bld.load(counter, typ=wide), step_w, flags=("nsw",)), counter)
    bld.store(bld.add(bld.load(narrow, typ=value_type(t)), step, flags=_no_wrap(step, signed)),
              narrow)
    if polls.every:
        stopping.poll(em)
    bld.branch(head)
    if polls.chunk is not None:
        bld.position_at_end(chunk_end)
        more = em.block("for_next_chunk")
        bld.cbranch(_continues(bld, signed, bld.load(counter, typ=wide), stop_w, step_w),
                    more, done)
        bld.position_at_end(more)
        stopping.poll(em)
        bld.branch(chunk_start)
    bld.position_at_end(done)


def _no_wrap(step: ll.Value, signed: bool) -> tuple[str, ...]:
    """The no-wrap flag of a range's value stepped by `step`: only for a constant unit step
    towards `stop` (1, or -1 for a signed range), which cannot step past the type. Any other
    step may wrap after the last iteration, and a flag would let LLVM assume it does not: it
    then tested the wrapped value for the exit (range(-3, 100, 50) over i8 never ended)."""
    if not isinstance(step, ll.Constant):
        return ()
    value = step.constant
    if signed and value in (1, -1, 2 ** step.type.width - 1):
        return ("nsw",)
    return ("nuw",) if not signed and value == 1 else ()


def _continues(bld: ll.IRBuilder, signed: bool, c: ll.Value, stop: ll.Value,
               step: ll.Value) -> ll.Value:
    """i1: a loop at (wide) counter `c` runs another iteration before `stop`."""
    zero = ll.Constant(c.type, 0)
    if not signed:
        return bld.and_(bld.icmp_unsigned("!=", step, zero), bld.icmp_unsigned("<", c, stop))
    up = bld.and_(bld.icmp_signed(">", step, zero), bld.icmp_signed("<", c, stop))
    down = bld.and_(bld.icmp_signed("<", step, zero), bld.icmp_signed(">", c, stop))
    return bld.or_(up, down)


def _chunk_limit(bld: ll.IRBuilder, signed: bool, c: ll.Value, stop: ll.Value,
                 step: ll.Value, chunk: int) -> ll.Value:
    """Where the chunk that starts at counter `c` ends: `chunk` steps on, or `stop` where that
    comes first. `chunk` steps may pass the wide counter's range (the steps of an i8 range
    times a chunk overflowed its i16 counter, and the loop never ended), so they are taken
    in 64 bits more than the counter's, where the largest step times `chunk` fits; the limit,
    between `c` and `stop`, fits the counter again."""
    wide = c.type
    roomy = ll.IntType(wide.width + 64)
    grow = bld.sext if signed else bld.zext
    c64, stop64, step64 = grow(c, roomy), grow(stop, roomy), grow(step, roomy)
    reach = bld.add(c64, bld.mul(step64, ll.Constant(roomy, chunk)))
    if not signed:
        limit = bld.select(bld.icmp_unsigned("<", reach, stop64), reach, stop64)
    else:
        up = bld.select(bld.icmp_signed("<", reach, stop64), reach, stop64)
        down = bld.select(bld.icmp_signed(">", reach, stop64), reach, stop64)
        limit = bld.select(bld.icmp_signed(">", step64, ll.Constant(roomy, 0)), up, down)
    return bld.trunc(limit, wide)


def _for_range(em: Emitter, s: ir.ForRange) -> None:
    start, stop, step = (exprs.expr(em, x) for x in (s.start, s.stop, s.step))

    def body(c: ll.Value) -> None:
        em.builder.store(c, em.locals[s.var])
        block(em, s.body)

    range_loop(em, s.start.type, start, stop, step, body, stopping.range_polls(em.kernel, s))


def _while(em: Emitter, s: ir.While) -> None:
    bld = em.builder
    head, body_block, done = em.block("while_head"), em.block("while_body"), \
        em.block("while_done")
    bld.branch(head)
    bld.position_at_end(head)
    stopping.poll(em)  # a `while` loop may never end
    bld.cbranch(exprs.expr(em, s.cond), body_block, done)
    bld.position_at_end(body_block)
    em.loops.append(Loop(done, head))
    block(em, s.body)
    em.loops.pop()
    em.branch_if_open(head)
    bld.position_at_end(done)


def _break(em: Emitter, s: ir.Break) -> None:
    em.builder.branch(em.loops[-1].break_to)


def _continue(em: Emitter, s: ir.Continue) -> None:
    em.builder.branch(em.loops[-1].continue_to)


def _return(em: Emitter, s: ir.Return) -> None:
    target = em.returns[-1]
    if s.value is not None:
        assert target.slot is not None
        em.builder.store(exprs.expr(em, s.value), target.slot)
    if target.on_return is not None:
        target.on_return(em)
    em.builder.branch(target.block)


def _eval(em: Emitter, s: ir.Eval) -> None:
    exprs.expr(em, s.value)


_DISPATCH: dict[type, Callable[[Emitter, ir.Stmt], None]] = {
    ir.Assign: _assign,
    ir.Store: _store,
    ir.If: _if,
    ir.ForRange: _for_range,
    ir.While: _while,
    ir.Break: _break,
    ir.Continue: _continue,
    ir.Return: _return,
    ir.Eval: _eval,
    ir.Assert: _assert,
}
