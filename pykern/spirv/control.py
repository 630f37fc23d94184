"""Structured control flow shapes: selections and loops, as SPIR-V §2.11 wants them.

A loop is laid out as glslang does it:

    pre:      OpBranch %header
    header:   OpLoopMerge %merge %continue None ; OpBranch %cond
    cond:     (evaluates the condition; may hold selections) OpBranchConditional %c %body %merge
    body:     ... OpBranch %continue
    continue: (the step) OpBranch %header
    merge:

`break` branches to %merge, `continue` to %continue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .function import FunctionBuilder

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


@dataclass(frozen=True)
class Loop:
    """The labels of one loop construct."""

    header: int
    cond: int
    body: int
    continue_target: int
    merge: int


def begin_loop(fn: FunctionBuilder) -> Loop:
    """Emits the loop header and opens the condition block."""
    loop = Loop(*(fn.new_label() for _ in range(5)))
    fn.branch(loop.header)
    fn.begin_block(loop.header)
    fn.loop_merge(loop.merge, loop.continue_target)
    fn.branch(loop.cond)
    fn.begin_block(loop.cond)
    return loop


def enter_body(fn: FunctionBuilder, loop: Loop, cond: int) -> None:
    """Ends the condition block (`cond` false leaves the loop) and opens the body."""
    fn.branch_conditional(cond, loop.body, loop.merge)
    fn.begin_block(loop.body)


def end_loop(fn: FunctionBuilder, loop: Loop, step: Emit | None = None) -> None:
    """Ends the body, emits the continue block (running `step`, e.g. `i += 1`) and opens the
    merge block, where code after the loop goes."""
    if fn.is_open:
        fn.branch(loop.continue_target)
    fn.begin_block(loop.continue_target)
    if step is not None:
        step()
    fn.branch(loop.header)
    fn.begin_block(loop.merge)
