"""Debug mode in native code: every array access bounds-checked, asserts evaluated, and the
first failure written to a report the launcher reads afterwards (`pykern.llvm.reports`).

The checks are those of the Vulkan path (`pykern.spirv.debug`): each index against its
dimension, compared unsigned so that a negative index fails too, for parameters, `pk.local`
and `pk.shared` arrays alike. A failing access does not touch memory (a load or an atomic
gives 0) and the invocation goes on, as does one whose assert fails.

The report is `REPORT_WORDS` i32 words, in the layout of the Vulkan path's debug buffer:

- word 0: 0 while nothing failed; else 1 + the index of the failing site in the kernel's
  `sites` (only the first failure is written: later ones find word 0 set);
- words 1-3: the global id (x, y, z) of the invocation that failed;
- words 4-7: the indices of the access (index accesses only);
- words 8-11: the shape of the array it accessed.

The entry's argument block holds the report's address (`layout.ArgLayout.report_slot`). Each
call of the entry (one range of workgroups, run by one thread) gets a report of its own, so
the words are written without atomics and "first" is the order in which the range runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from llvmlite import ir as ll

from pykern import ir
from pykern.llvm.emitter import ArrayView, Emitter
from pykern.llvm.types import I32

REPORT_WORDS = 16
# where the report keeps the failing invocation, the indices and the shape (first word of each)
INVOCATION_WORDS, INDEX_WORDS, SHAPE_WORDS = 1, 4, 8
INDEX, ASSERT = "index", "assert"


@dataclass(frozen=True)
class DebugSite:
    """A place in the kernel that can fail: an array access (`array` and its `ndim` set) or
    an assert (`message`)."""

    kind: str  # INDEX or ASSERT
    loc: ir.Loc
    array: str = ""
    ndim: int = 0
    message: str = ""


@dataclass
class DebugChecks:
    """The checks of one debug kernel being emitted: the report's address (read from the
    argument block) and the sites collected so far."""

    report: ll.Value
    sites: list[DebugSite] = field(default_factory=list)

    def site(self, site: DebugSite) -> int:
        self.sites.append(site)
        return len(self.sites) - 1


def checked_access(em: Emitter, node: ir.Node, array: str, view: ArrayView,
                   indices: Sequence[ll.Value], access: Callable[[], ll.Value | None]
                   ) -> ll.Value | None:
    """`access()` (a load, store or atomic of `array[indices]`) run only when every index
    lies inside its dimension; else the access is reported and skipped. Its value, 0 where it
    was skipped (None for a store)."""
    assert em.debug is not None
    bld = em.builder
    inside = None
    for index, size in zip(indices, view.shape, strict=True):
        ok = bld.icmp_unsigned("<", index, size)  # a negative index is a huge unsigned one
        inside = ok if inside is None else bld.and_(inside, ok)
    site = em.debug.site(DebugSite(INDEX, node.loc, array=array, ndim=len(indices)))
    return em.either(inside, access, lambda: _report(em, site, indices, view.shape),
                     "in_bounds")


def check_assert(em: Emitter, s: ir.Assert, cond: ll.Value) -> None:
    """Reports the assert `s` where `cond` (an i1) is false."""
    assert em.debug is not None
    site = em.debug.site(DebugSite(ASSERT, s.loc, message=s.message))
    with em.builder.if_then(em.builder.not_(cond), likely=False):
        _report(em, site, (), ())


def _report(em: Emitter, site: int, indices: Sequence[ll.Value],
            shape: Sequence[ll.Value]) -> None:
    """Writes the report of a failure at `site`, unless an earlier one was written."""
    assert em.debug is not None and em.ids is not None
    bld = em.builder
    report = em.debug.report

    def word(k: int) -> ll.Value:
        return bld.gep(report, [ll.Constant(I32, k)], source_etype=I32)

    nothing_yet = bld.icmp_unsigned("==", bld.load(word(0), typ=I32), ll.Constant(I32, 0))
    with bld.if_then(nothing_yet):
        bld.store(ll.Constant(I32, site + 1), word(0))
        for d, gid in enumerate(em.ids.global_id):
            bld.store(gid, word(INVOCATION_WORDS + d))
        for k, (index, size) in enumerate(zip(indices, shape, strict=True)):
            bld.store(index, word(INDEX_WORDS + k))
            bld.store(size, word(SHAPE_WORDS + k))
