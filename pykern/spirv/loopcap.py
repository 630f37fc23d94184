"""Loops on a device whose driver cuts them short: every loop reports it, the host raises.

lavapipe (Mesa's llvmpipe) lets an invocation run 65,535 loop iterations, all its loops
together: one counter per batch of invocations, decremented at every loop back-edge. When it
runs out, every loop still running ends as if its condition had become false, and the kernel
goes on with wrong values. On a target with such a cap (`Target.loop_iteration_cap`) every loop
pykern emits (`pykern.spirv.control`) checks, after it, whether it was cut, and counts a cut in
the status buffer `LOOP_STATUS_BUFFER`, which the launcher binds and reads once the launch has
run (`pykern.jit.loop_status`): the user gets a `pk.DeviceError` naming the kernel and the loop,
never a silent wrong answer. Elsewhere nothing of this is emitted.

How a loop tells. A cut invocation leaves the loop from its back-edge, having run the continue
block, without taking any of the loop's exits, and the values it holds after the loop are the
ones the loop carries from one iteration to the next (a value that differs between two exits
is undefined for it). The check must also survive the driver's optimiser, which may assume
that code after a loop is reached only through its exits, where the exit test failed:

- A counted loop (`counted_loop`: a `for` over a range) compares its counter k with the trip
  count after the loop: k != trips means iterations were left. The exit test, k < trips, is
  another comparison, so the driver cannot fold the check, and a constant trip count still
  lets it unroll the loop (the check then folds away with it). `break` sets k to trips and
  goes on through the continue block, so the loop keeps one exit and k == trips after it.
- A while loop (`while_loop`) evaluates its condition before the loop and again at the end of
  each iteration into a variable `more`; the loop runs while `more and token`, `token` being
  word 0 of the status buffer compared with 0 (always true, unknown to the driver), and after
  the loop, `more` true means it was cut. `break` sets `more` false and goes on through the
  continue block.

The step of both (k += 1, the condition) runs in the body, before each branch to the continue
block, not in the continue block: Mesa moves a continue block reached from several places (a
`continue`) to the top of the loop, after the back-edge. So a loop whose last iteration used
the last back-edge allowed finished its step before it and knows it was done: no report.

The same driver loses stores to `pk.local` arrays indexed by an induction variable (`buf[b]`
then `buf[b + 1]`) in loops with a second exit (`break`, `return`), in loops that leave on a
flag, as a guarded while loop does, and in `for` loops that run such a loop inside (a `while`,
or the loop of an integer `**` or a float `%`). In those loops (`StatementLowering`) the
indices of `pk.local` arrays get `zero` added, a run-time 0 read from the status buffer, which
keeps the driver from treating them as induction variables.

Status buffer words (u32): word 0 is 0 (the token); word 1 + s counts the invocations whose
loop site s was cut (atomic adds; the host compares with what it saw before). Each site is
also written into the module as an OpString (JSON), so a module from the disk cache still
names its loops (`sites_in_module`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pykern import ir
from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.grammar import MemorySemantics, Op, Scope, StorageClass
from pykern.spirv.encoding.instruction import decode_string, instructions
from pykern.spirv.binding_plan import LOOP_STATUS_BUFFER
from pykern.spirv.encoding.types import BOOL, I32, U32, PointerType

TOKEN_WORD, FIRST_SITE_WORD = 0, 1
_SITE_KEY = "pykern_loop_site"

# what each kind of loop is called in a report
FOR, WHILE = "for loop", "while loop"
INT_POW = "loop that computes an integer **"
FLOAT_MOD = "loop that computes a float % or //"
CAS = "compare-and-swap loop of a float atomic"


@dataclass(frozen=True)
class LoopSite:
    """A loop of the kernel that can report being cut: where it is and what it is."""

    loc: ir.Loc
    what: str


def status_words(sites: Sequence[LoopSite]) -> int:
    """The number of u32 words of the status buffer of a module with `sites`."""
    return FIRST_SITE_WORD + len(sites)


class LoopGuard:
    """Emits the cut checks of one module's loops and collects their sites."""

    def __init__(self) -> None:
        self.sites: list[LoopSite] = []

    def token(self, ctx: LoweringContext) -> int:
        """A bool that is true at run time, which the driver cannot know (see the module
        docstring)."""
        return ctx.fn.i_equal(BOOL, self._token_word(ctx), ctx.const(U32, 0))

    def zero(self, ctx: LoweringContext) -> int:
        """An i32 that is 0 at run time, which the driver cannot know (word 0 of the status
        buffer, like `token`, but a load of its own: a while loop runs only while its token is
        true, so a zero derived from the token's load would be known to be 0 inside the loop,
        and lavapipe loses the `pk.local` stores again, as tests/kernels/test_loops.py shows)."""
        return ctx.fn.bitcast(I32, self._token_word(ctx))

    def count(self, ctx: LoweringContext, site: LoopSite) -> None:
        """Emits the report of a cut at `site`: its count of cut invocations goes up by one
        (the caller emits this where the loop was cut)."""
        index = len(self.sites)
        self.sites.append(site)
        ctx.module.string(json.dumps({_SITE_KEY: index, "what": site.what, "file": site.loc.file,
                                      "line": site.loc.line, "col": site.loc.col}))
        ctx.fn.atomic_i_add(U32, self._word(ctx, FIRST_SITE_WORD + index),
                            ctx.const(U32, Scope.Device), ctx.const(U32, MemorySemantics.None_),
                            ctx.const(U32, 1))

    def _token_word(self, ctx: LoweringContext) -> int:
        return ctx.fn.load(U32, self._word(ctx, TOKEN_WORD))

    def _word(self, ctx: LoweringContext, k: int) -> int:
        buffer = ctx.resources.buffer_variable(LOOP_STATUS_BUFFER, U32, 4,
                                               access_decorations=False)
        return ctx.fn.access_chain(PointerType(StorageClass.StorageBuffer, U32), buffer,
                                   ctx.const(I32, 0), ctx.const(I32, k))


def sites_in_module(words: bytes) -> tuple[LoopSite, ...]:
    """The loop sites a module's OpStrings name, in site order (none for a module compiled
    for a device without a loop cap)."""
    found: dict[int, LoopSite] = {}
    for opcode, operands in instructions(words):
        if opcode == Op.Function:
            break  # debug strings come long before the code
        if opcode == Op.String:
            text = decode_string(operands[1:])  # after the result id
            if _SITE_KEY in text:
                site = json.loads(text)
                loc = ir.Loc(site["file"], site["line"], site["col"])
                found[site[_SITE_KEY]] = LoopSite(loc, site["what"])
    return tuple(found[k] for k in sorted(found))
