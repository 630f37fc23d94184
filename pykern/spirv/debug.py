"""Debug mode on the device: bounds checks and asserts, reported to the host.

A kernel compiled with `debug` gets one more storage buffer, `DEBUG_BUFFER`, bound after the
array parameters (`plan_layout` adds its slot). It holds `DEBUG_WORDS` u32 words, which the
launcher zeroes before the launch and reads after it:

- word 0: 0 while nothing failed; else 1 + the index of the failing site in
  `SpirvModule.debug_sites` (the first failure wins, by compare-and-swap);
- words 1-3: the global id (x, y, z) of the invocation that failed;
- words 4-7: the indices of the access (index accesses only; i32 bits);
- words 8-11: the shape of the array it accessed.

`pykern.jit.debug_launch` binds the buffer at launch and turns those words into the
`pk.KernelIndexError` / `pk.KernelAssertionError` to raise. A failing access does not touch
memory (a load gives 0); a failing assert goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pykern import ir
from pykern.spirv.arrays import ArrayAccess
from pykern.spirv.builtins import builtin
from pykern.spirv.context import LoweringContext
from pykern.spirv.control import selection
from pykern.spirv.encoding.grammar import MemorySemantics, Scope, StorageClass
from pykern.spirv.binding_plan import DEBUG_BUFFER
from pykern.spirv.encoding.types import BOOL, I32, U32, PointerType, ScalarType

DEBUG_WORDS = 16
DEBUG_BYTES = 4 * DEBUG_WORDS
# where the report keeps the failing invocation, the indices and the shape (first word of each)
INVOCATION_WORDS, INDEX_WORDS, SHAPE_WORDS = 1, 4, 8
INDEX, ASSERT = "index", "assert"


@dataclass(frozen=True)
class DebugSite:
    """A place in the kernel that can fail: an array access (`array` set) or an assert."""

    kind: str  # INDEX or ASSERT
    loc: ir.Loc
    array: str = ""
    message: str = ""


class DebugReporter:
    """Emits the checks of one debug kernel and collects their sites."""

    def __init__(self) -> None:
        self.sites: list[DebugSite] = []

    def checked_access(self, ctx: LoweringContext, node: ir.Node, array_name: str,
                       array: ArrayAccess, indices: tuple[int, ...],
                       access: Callable[[], int | None], result: ScalarType | None) -> int | None:
        """Runs `access()` only when every index is inside its dimension, else reports the
        access; returns its value (0 when it failed) if `result` is its type."""
        fn = ctx.fn
        shape = [array.shape(fn, axis) for axis in range(len(indices))]
        ok = None
        for index, size in zip(indices, shape, strict=True):
            inside = fn.u_less_than(BOOL, index, size)  # also catches negative indices
            ok = inside if ok is None else fn.logical_and(BOOL, ok, inside)
        site = self._site(DebugSite(INDEX, node.loc, array=array_name))
        value = fn.variable(result, "checked") if result is not None else None

        def then() -> None:
            got = access()
            if value is not None:
                fn.store(value, got)

        def orelse() -> None:
            self._report(ctx, site, indices, shape)
            if value is not None:
                fn.store(value, ctx.const(result, 0))  # type: ignore[arg-type]

        selection(fn, ok, then, orelse)
        return fn.load(result, value) if value is not None else None

    def check_assert(self, ctx: LoweringContext, s: ir.Assert, cond: int) -> None:
        """Reports the assert `s` when `cond` is false."""
        site = self._site(DebugSite(ASSERT, s.loc, message=s.message))
        selection(ctx.fn, cond, None, lambda: self._report(ctx, site, (), ()))

    def _site(self, site: DebugSite) -> int:
        self.sites.append(site)
        return len(self.sites) - 1

    def _report(self, ctx: LoweringContext, site: int, indices: Sequence[int],
                shape: Sequence[int]) -> None:
        fn = ctx.fn
        buffer = ctx.resources.buffer_variable(DEBUG_BUFFER, U32, 4)
        pointer_type = PointerType(StorageClass.StorageBuffer, U32)

        def word(k: int) -> int:
            return fn.access_chain(pointer_type, buffer, ctx.const(I32, 0), ctx.const(I32, k))

        relaxed = ctx.const(U32, MemorySemantics.None_)
        before = fn.atomic_compare_exchange(U32, word(0), ctx.const(U32, Scope.Device), relaxed,
                                            relaxed, ctx.const(U32, site + 1),
                                            ctx.const(U32, 0))

        def record() -> None:
            for d in range(3):
                gid = builtin(ctx, ir.BuiltinKind.GLOBAL_ID, d)
                fn.store(word(INVOCATION_WORDS + d), fn.bitcast(U32, gid))
            for k, (index, size) in enumerate(zip(indices, shape, strict=True)):
                fn.store(word(INDEX_WORDS + k), fn.bitcast(U32, index))
                fn.store(word(SHAPE_WORDS + k), fn.bitcast(U32, size))

        selection(fn, fn.i_equal(BOOL, before, ctx.const(U32, 0)), record, None)
