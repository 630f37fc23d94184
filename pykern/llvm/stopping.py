"""Stopping a launch early (PYKERN_TIMEOUT, Ctrl-C): the native code polls the launch's stop
word, an i32 whose address is in the argument block (`pykern.llvm.layout`), and returns from
the entry when the launcher has set it (`pykern.llvm.pool`).

A poll is an atomic (monotonic) load, a compare and a branch that is almost never taken. It
is made where unbounded work can begin:

- before each workgroup;
- at the start of every iteration of a `while` loop, and of a loop around barriers or
  subgroup exchanges (`pykern.llvm.regions`, `pykern.llvm.divergence`);
- in a `range` loop: every iteration where its body may itself run long (a `while` loop or
  a `range` loop whose trip count is not a small constant); else the loop is cut into chunks
  of iterations that together do bounded work, polled between two chunks. A short loop (one
  chunk) never polls, and a chunk is a plain counted loop that LLVM vectorises as before;
- nowhere else: a `range` loop of a small constant trip count over bounded work needs none.

So between two polls an invocation does a bounded amount of work, and a stopped launch
returns within milliseconds. Everything of a workgroup runs on one thread (barriers are
region loops), so no invocation can wait for one that left: the workgroup simply ends.
What the launch wrote before it stopped stays written; the rest is not.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir as ll

from pykern import ir
from pykern.llvm.emitter import Emitter
from pykern.llvm.types import I32

# the work (statements run, roughly) a loop may do between two polls: a bound, not a rate;
# at a few nanoseconds per statement a chunk takes well under a tenth of a second
CHUNK_WORK = 1 << 16
# a constant trip count up to this many iterations, of bounded work, needs no poll
SMALL_LOOP_WORK = 1 << 16


def start(em: Emitter, stop: ll.Value, end: ll.Value) -> None:
    """Reads the stop word's address (`stop`, read from the argument block) for the polls, and
    makes the block they leave to: the entry returns (`end`, as if it had run its range: the
    launcher knows from the stop word that it did not)."""
    em.stop = stop
    em.stopped = em.block("stopped")
    ll.IRBuilder(em.stopped).ret(end)


def poll(em: Emitter) -> None:
    """Leaves the entry where the launch's stop word is set; else goes on."""
    if em.stop is None or em.stopped is None:
        return
    bld = em.builder
    word = bld.load_atomic(em.stop, "monotonic", 4, typ=I32)
    running = em.block("running")
    branch = bld.cbranch(bld.icmp_unsigned("==", word, ll.Constant(I32, 0)), running,
                         em.stopped)
    branch.set_weights([1 << 20, 1])
    bld.position_at_end(running)


@dataclass(frozen=True)
class RangePolls:
    """How a `range` loop polls: at every iteration (`every`), or between chunks of `chunk`
    iterations (`chunk`), or never (both unset)."""

    every: bool = False
    chunk: int | None = None


NO_POLLS = RangePolls()
EVERY_ITERATION = RangePolls(every=True)


def range_polls(kernel: ir.Kernel, s: ir.ForRange) -> RangePolls:
    """How the `range` loop `s` of `kernel` polls (see the module's docstring)."""
    body = work(kernel, s.body)
    if body is None:
        return EVERY_ITERATION
    trips = constant_trips(s)
    if trips is not None and trips * (body + 1) <= SMALL_LOOP_WORK:
        return NO_POLLS
    return RangePolls(chunk=max(1, CHUNK_WORK // (body + 1)))


def constant_trips(s: ir.ForRange) -> int | None:
    """The iterations of `s` where its bounds are constants, else None."""
    bounds = (s.start, s.stop, s.step)
    if not all(isinstance(b, ir.Const) and isinstance(b.value, int) for b in bounds):
        return None
    start, stop, step = (int(b.value) for b in bounds)  # type: ignore[union-attr, arg-type]
    return len(range(start, stop, step)) if step else 0


def work(kernel: ir.Kernel, body: tuple[ir.Stmt, ...] | tuple[ir.Node, ...]) -> int | None:
    """A bound on the statements `body` runs per execution (loops count their constant trip
    counts), or None where it has no bound below `CHUNK_WORK`: a `while` loop, a `range`
    loop whose trip count is not constant, or too much work."""
    total = 0
    for node in body:
        for n in _shallow(node):
            if isinstance(n, ir.While):
                return None
            if isinstance(n, ir.ForRange):
                trips, inner = constant_trips(n), work(kernel, n.body)
                if trips is None or inner is None:
                    return None
                total += trips * (inner + 1)
            elif isinstance(n, ir.Call):
                inner = work(kernel, _function(kernel, n.function).body)
                if inner is None:
                    return None
                total += inner
            else:
                total += 1
            if total > CHUNK_WORK:
                return None
    return total


def _shallow(node: ir.Node) -> list[ir.Node]:
    """`node` and what lies below it, not entering the bodies of loops (their own work is
    counted where they are met)."""
    found, pending = [], [node]
    while pending:
        n = pending.pop()
        found.append(n)
        if isinstance(n, (ir.ForRange, ir.While)):
            continue
        for child in _children(n):
            pending.append(child)
    return found


def _children(node: ir.Node) -> list[ir.Node]:
    out = []
    for value in vars(node).values():
        for child in value if isinstance(value, tuple) else (value,):
            if isinstance(child, ir.Node):
                out.append(child)
    return out


def _function(kernel: ir.Kernel, name: str) -> ir.Function:
    for f in kernel.functions:
        if f.name == name:
            return f
    raise AssertionError(f"call of unknown function {name}")
