"""Structured control flow shapes: selections and loops, as SPIR-V §2.11 wants them.

Every loop pykern emits, the user's `for` and `while` and the ones inside operations (integer
`**`, float `%`, compare-and-swap atomics), comes from `counted_loop` or `while_loop`, laid out
as glslang lays out a `for`:

    pre:      OpBranch %header
    header:   OpLoopMerge %merge %continue None ; OpBranch %cond
    cond:     (evaluates the condition; may hold selections) OpBranchConditional %c %body %merge
    body:     ... OpBranch %continue
    continue: (the step) OpBranch %header
    merge:

`Loop.break_()` branches to %merge, `Loop.continue_()` to %continue. On a target whose driver
cuts loops short (`LoweringContext.loops` set), each loop also reports a cut after %merge, and
its shape changes a little for that: see `pykern.spirv.loopcap`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pykern.spirv.context import LoweringContext
from pykern.spirv.function import FunctionBuilder
from pykern.spirv.loopcap import LoopSite
from pykern.spirv.numerics import wide_int
from pykern.spirv.encoding.types import BOOL, IntType

Emit = Callable[[], None]


def selection(fn: FunctionBuilder, cond: int, then: Emit | None, orelse: Emit | None) -> None:
    """`if cond: then() else: orelse()` with an OpSelectionMerge; a None side branches
    straight to the merge block. If neither side reaches the merge block (both returned,
    broke or continued), the merge block is closed with OpUnreachable, so `fn` is left
    without an open block and whatever follows is dead code.
    """
    assert then is not None or orelse is not None
    merge = fn.new_label()
    then_label = fn.new_label() if then is not None else merge
    else_label = fn.new_label() if orelse is not None else merge
    fn.selection_merge(merge)
    fn.branch_conditional(cond, then_label, else_label)
    reached = then is None or orelse is None
    for label, emit in ((then_label, then), (else_label, orelse)):
        if emit is None:
            continue
        fn.begin_block(label)
        emit()
        if fn.is_open:
            fn.branch(merge)
            reached = True
    fn.begin_block(merge)
    if not reached:
        fn.unreachable()


@dataclass
class Loop:
    """The loop being emitted, as its body sees it: where `break` and `continue` go.

    A loop guarded against being cut short (see `pykern.spirv.loopcap`) runs its step in the
    body, not in the continue block: `latch` before every branch to the continue block (the
    end of the body and each `continue`), and `leave` instead for `break`, which then goes on
    through the continue block and ends the loop at the next test."""

    fn: FunctionBuilder
    header: int
    continue_target: int
    merge: int
    latch: Emit | None = None
    leave: Emit | None = None

    def break_(self) -> None:
        """Leaves the loop (ends the current block)."""
        if self.leave is None:
            self.fn.branch(self.merge)
        else:
            self.leave()
            self.fn.branch(self.continue_target)

    def continue_(self) -> None:
        """Goes on with the next iteration (ends the current block)."""
        if self.latch is not None:
            self.latch()
        self.fn.branch(self.continue_target)


def counted_loop(ctx: LoweringContext, counter: IntType, trips: int,
                 body: Callable[[Loop, int], None], name: str = "k",
                 what: str = "loop") -> None:
    """`for k in range(trips)` on a hidden unsigned `counter` k (a variable called `name`):
    `body(loop, k)` emits the body, given the id of k's value in this iteration. `what` names
    the loop in a report that it was cut short.

    k is the loop's only induction variable, and it is what the exit test compares: loops
    that step a second variable beside the counter they test (the value next to the
    iterations left, say) are miscompiled by lavapipe (Mesa 22.3) when the body stores to a
    `pk.local` array at that variable and its successor; a body derives what it needs from k.
    """
    fn, guard, site = ctx.fn, ctx.loops, LoopSite(ctx.loc, what)
    k_var = fn.variable(counter, name)
    fn.store(k_var, ctx.const(counter, 0))

    def advance() -> None:
        fn.store(k_var, wide_int.add(ctx, counter, fn.load(counter, k_var),
                                     ctx.const(counter, 1)))

    if guard is None:
        loop = _begin(fn)
    else:  # `break` leaves k == trips, as a finished loop does
        loop = _begin(fn, latch=advance, leave=lambda: fn.store(k_var, trips))
    k = fn.load(counter, k_var)
    _enter_body(fn, loop, wide_int.less_than(ctx, counter, k, trips))
    body(loop, k)
    _end(fn, loop, advance if guard is None else None)
    if guard is not None:
        cut = fn.i_not_equal(BOOL, fn.load(counter, k_var), trips)
        selection(fn, cut, lambda: guard.count(ctx, site), None)


def while_loop(ctx: LoweringContext, cond: Callable[[], int], body: Callable[[Loop], None],
               what: str = "loop") -> None:
    """`while cond(): body(loop)`; `cond()` emits the condition and returns its id (on a
    target that cuts loops short it is emitted before the loop and at every end of an
    iteration). `what` names the loop in a report that it was cut short."""
    fn, guard, site = ctx.fn, ctx.loops, LoopSite(ctx.loc, what)
    if guard is None:
        loop = _begin(fn)
        _enter_body(fn, loop, cond())
        body(loop)
        _end(fn, loop, None)
        return
    token = guard.token(ctx)
    more = fn.variable(BOOL, "more")
    fn.store(more, cond())

    def test_again() -> None:
        loc, ctx.loc = ctx.loc, site.loc  # for loops inside the condition, and their reports
        fn.store(more, cond())
        ctx.loc = loc

    loop = _begin(fn, latch=test_again, leave=lambda: fn.store(more, ctx.const(BOOL, False)))
    _enter_body(fn, loop, fn.logical_and(BOOL, fn.load(BOOL, more), token))
    body(loop)
    _end(fn, loop, None)
    selection(fn, fn.load(BOOL, more), lambda: guard.count(ctx, site), None)


def _begin(fn: FunctionBuilder, latch: Emit | None = None, leave: Emit | None = None) -> Loop:
    """Emits the loop header and opens the condition block."""
    header, cond, continue_target, merge = (fn.new_label() for _ in range(4))
    fn.branch(header)
    fn.begin_block(header)
    fn.loop_merge(merge, continue_target)
    fn.branch(cond)
    fn.begin_block(cond)
    return Loop(fn, header, continue_target, merge, latch, leave)


def _enter_body(fn: FunctionBuilder, loop: Loop, cond: int) -> None:
    """Ends the condition block (`cond` false leaves the loop) and opens the body."""
    body = fn.new_label()
    fn.branch_conditional(cond, body, loop.merge)
    fn.begin_block(body)


def _end(fn: FunctionBuilder, loop: Loop, step: Emit | None) -> None:
    """Ends the body (as `continue` does), emits the continue block (running `step`) and
    opens the merge block, where code after the loop goes."""
    if fn.is_open:
        loop.continue_()
    fn.begin_block(loop.continue_target)
    if step is not None:
        step()
    fn.branch(loop.header)
    fn.begin_block(loop.merge)
