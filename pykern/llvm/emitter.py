"""The state of lowering one kernel: the LLVM module and builder, where each local variable
and array lives for the invocation being emitted, the enclosing loops, where `return` goes,
the launch's stop word (`pykern.llvm.stopping`), which array accesses need no check in the
code being emitted (`pykern.llvm.robust`), and in debug mode the checks' report
(`pykern.llvm.debug`). Expression and statement lowering (`exprs`, `stmts`) take an `Emitter`
and add code at its builder's position."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from llvmlite import ir as ll

from pykern import ir
from pykern.lang.dtypes import DType
from pykern.llvm.types import I32, I64, memory_type, value_type

if TYPE_CHECKING:
    from pykern.llvm.debug import DebugChecks


@dataclass
class ArrayView:
    """Where an array's elements are: element `index` of it is at `pointer` plus `offset +
    sum(index[k] * strides[k])` elements of `element` type (offset and strides i64, shape i32
    values); the memory at `pointer` holds `length` elements (i64), and no access outside
    them is made."""

    dtype: DType
    pointer: ll.Value
    offset: ll.Value
    shape: tuple[ll.Value, ...]
    strides: tuple[ll.Value, ...]
    length: ll.Value

    @property
    def element(self) -> ll.Type:
        return memory_type(self.dtype)


@dataclass
class Ids:
    """The builtin ids of the invocation being emitted, i32 values per dimension."""

    global_id: tuple[ll.Value, ll.Value, ll.Value]
    local_id: tuple[ll.Value, ll.Value, ll.Value]
    group_id: tuple[ll.Value, ll.Value, ll.Value]
    grid: tuple[ll.Value, ll.Value, ll.Value]
    num_groups: tuple[ll.Value, ll.Value, ll.Value]


@dataclass
class Loop:
    """The targets of `break` and `continue` inside one loop."""

    break_to: ll.Block
    continue_to: ll.Block


@dataclass
class ReturnTarget:
    """Where a `return` goes: the block after the body, and (in an inlined device function
    with a result) the slot that holds the result."""

    block: ll.Block
    slot: ll.Value | None = None
    on_return: Callable[[Emitter], None] | None = None  # what a return does first


@dataclass
class Emitter:
    kernel: ir.Kernel
    module: ll.Module
    function: ll.Function
    builder: ll.IRBuilder
    scalars: dict[str, ll.Value] = field(default_factory=dict)
    arrays: dict[str, ArrayView] = field(default_factory=dict)
    locals: dict[str, ll.Value] = field(default_factory=dict)  # name -> pointer
    ids: Ids | None = None
    loops: list[Loop] = field(default_factory=list)
    returns: list[ReturnTarget] = field(default_factory=list)
    helpers: dict[str, ll.Function] = field(default_factory=dict)
    debug: DebugChecks | None = None  # set when the kernel is compiled in debug mode
    stop: ll.Value | None = None  # the address of the launch's stop word (an i32)
    stopped: ll.Block | None = None  # where a poll that finds it set goes (the entry returns)
    # the array accesses that need no check in the code being emitted, by `site_key`: those
    # the workgroup's proof covers (`pykern.llvm.robust`)
    proven: frozenset[tuple[tuple[int, ...], int]] = frozenset()
    call_path: tuple[int, ...] = ()  # the calls being inlined, outermost first (their ids)

    # ------------------------------------------------------------ blocks

    def block(self, name: str) -> ll.Block:
        return self.function.append_basic_block(name)

    def continue_in_fresh_block(self) -> None:
        """After a branch (break, continue, return) code that follows is unreachable; it goes
        into a block of its own so that the builder never appends past a terminator."""
        self.builder.position_at_end(self.block("after_jump"))

    def branch_if_open(self, target: ll.Block) -> None:
        if not self.builder.block.is_terminated:
            self.builder.branch(target)

    def either(self, cond: ll.Value, then: Callable[[], ll.Value | None],
               orelse: Callable[[], ll.Value | None], name: str) -> ll.Value | None:
        """Emits `then()` where the i1 `cond` holds and `orelse()` where it does not, each in
        a block of its own (`name`, `name`_else), and joins them: the value of the side that
        ran (a phi; a side whose value is None gives zero of the other's type); None where
        neither has one."""
        bld = self.builder
        sides = (self.block(name), then), (self.block(f"{name}_else"), orelse)
        done = self.block(f"{name}_done")
        bld.cbranch(cond, sides[0][0], sides[1][0])
        values, ends = [], []
        for block, emit in sides:
            bld.position_at_end(block)
            values.append(emit())
            ends.append(bld.block)
            bld.branch(done)
        bld.position_at_end(done)
        ty = next((v.type for v in values if v is not None), None)
        if ty is None:
            return None
        result = bld.phi(ty)
        for value, end in zip(values, ends):
            result.add_incoming(value if value is not None else ll.Constant(ty, None), end)
        return result

    def alloca(self, t: ll.Type, name: str = "", count: int = 1) -> ll.Value:
        """A stack slot in the entry block, which holds only these until `finish` (there
        LLVM promotes slots to registers; in a loop the stack would grow every iteration)."""
        builder = ll.IRBuilder(self.function.entry_basic_block)  # open until `finish`
        size = None if count == 1 else ll.Constant(I64, count)
        return builder.alloca(t, size=size, name=name)

    def finish(self) -> None:
        """Ends the entry block (only stack slots) with a branch to the code after it."""
        entry = self.function.entry_basic_block
        ll.IRBuilder(entry).branch(self.function.basic_blocks[1])

    def local_slot(self, t: DType, name: str) -> ll.Value:
        return self.alloca(value_type(t), name)

    def site_key(self, node: ir.Node) -> tuple[tuple[int, ...], int]:
        """What names the array access `node` at the place being emitted: a device function's
        body is emitted once per call, so the calls it is inlined through are part of it."""
        return self.call_path, id(node)

    # ------------------------------------------------------------ functions

    def intrinsic(self, name: str, result: ll.Type, args: tuple[ll.Type, ...]) -> ll.Function:
        """The declaration of intrinsic or C function `name` (declared once per module)."""
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ll.Function(self.module, ll.FunctionType(result, args), name=name)

    def call(self, name: str, result: ll.Type, *args: ll.Value) -> ll.Value:
        fn = self.intrinsic(name, result, tuple(a.type for a in args))
        return self.builder.call(fn, args)

    def i64(self, value: ll.Value, signed: bool = True) -> ll.Value:
        """An integer value widened (or kept) to i64."""
        if value.type == I64:
            return value
        return self.builder.sext(value, I64) if signed else self.builder.zext(value, I64)

    def i32(self, value: int) -> ll.Constant:
        return ll.Constant(I32, value)
