"""Definite assignment: whether every path from a function's entry to a read of a local has
assigned it.

Python raises UnboundLocalError at such a read; a kernel would read whatever the variable held
(zero), a silent wrong answer. So the translator keeps, as it goes through a body in order, the
set of locals assigned on every path to the current point, and a read of a local outside it is
a compile error that says where the variable is assigned and why that does not cover the read:
an `if` without the assignment in the other branch, a loop that may run zero times, a `break`
or `continue` that leaves before it. Only the branch taken of a compile-time `if` is
translated, so only it counts. A loop that runs at least once (constant bounds, `while True`)
assigns what its body assigns on every way out of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pykern.ir import Loc

# the locals assigned on every path to here, each with (one) place assigning it; None where
# no path arrives (after a return, break or continue)
State = dict[str, Loc] | None


@dataclass
class _Loop:
    kind: str  # "for" or "while"
    loc: Loc
    before: State
    var: str | None  # a for loop's variable
    leaving: list[tuple[State, str]] = field(default_factory=list)  # (state, what) at breaks
    continuing: list[tuple[State, str]] = field(default_factory=list)  # at continues


class Assignments:
    """The definite-assignment state of one function body being translated."""

    def __init__(self) -> None:
        self.state: State = {}
        self.why: dict[str, str] = {}  # for a local that may be unassigned: the reason
        self.loops: list[_Loop] = []

    # ------------------------------------------------------------ straight-line code

    def assign(self, name: str, loc: Loc) -> None:
        if self.state is not None:
            self.state.setdefault(name, loc)

    def declare(self, name: str, loc: Loc) -> None:
        """`name: type` without a value: the type is known, the variable not assigned."""
        if self.state is not None and name not in self.state:
            self.why.setdefault(name, f"it is only declared at {loc}, not assigned")

    def unassigned(self, name: str) -> str | None:
        """None if `name` is assigned on every path to here, else why it may not be."""
        if self.state is None or name in self.state:
            return None
        return self.why.get(name, "it is not assigned on every path to here")

    def fork(self) -> State:
        """A copy of the state, to start a branch from."""
        return None if self.state is None else dict(self.state)

    def end_path(self) -> None:
        """After a `return`: nothing follows on this path."""
        self.state = None

    # ------------------------------------------------------------ if

    def join_branches(self, body: State, orelse: State) -> None:
        """After a run-time `if`: what both branches assigned."""
        for name, loc in _only_in(body, orelse):
            self.why[name] = f"it is only assigned in the if-branch at {loc}"
        for name, loc in _only_in(orelse, body):
            self.why[name] = f"it is only assigned in the else-branch at {loc}"
        self.state = _meet([body, orelse])

    # ------------------------------------------------------------ loops

    def enter_loop(self, kind: str, loc: Loc, var: str | None = None) -> None:
        """Before a loop's body; a for loop assigns its variable on entering the body."""
        self.loops.append(_Loop(kind, loc, self.fork(), var))
        if var is not None:
            self.assign(var, loc)

    def leave(self, what: str) -> None:
        """At a `break` (what: 'the break at ...')."""
        self.loops[-1].leaving.append((self.fork(), what))
        self.state = None

    def next_iteration(self, what: str) -> None:
        """At a `continue`."""
        self.loops[-1].continuing.append((self.fork(), what))
        self.state = None

    def exit_loop(self, runs: str) -> None:
        """After a loop. `runs`: 'maybe' (it may run zero times), 'once' (its body runs at
        least once) or 'forever' (it ends only at a break)."""
        loop = self.loops.pop()
        ends = [(self.state, ""), *loop.continuing] if runs != "forever" else []
        ways_out = ends + loop.leaving
        if runs == "maybe":
            ways_out = [(loop.before, "")] + ways_out
        self.state = _meet([s for s, _ in ways_out])
        assigned = {n: loc for s, _ in ways_out if s is not None for n, loc in s.items()}
        for name, loc in assigned.items():
            if self.state is not None and name in self.state:
                continue
            if runs == "maybe" and (loop.before is None or name not in loop.before):
                self.why[name] = (f"it is the variable of the for loop at {loop.loc}, which may "
                                  "run zero times") if name == loop.var else \
                    (f"it is only assigned inside the {loop.kind} loop at {loop.loc}, which may "
                     "run zero times")
            else:
                what = next(w for s, w in ways_out if s is not None and name not in s)
                what = what or "its body"
                self.why[name] = f"{what} can end the {loop.kind} loop at {loop.loc} without " \
                                 f"assigning it (it is assigned at {loc})"


def _meet(states: list[State]) -> State:
    """The locals assigned on every path that arrives (None when none does)."""
    arriving = [s for s in states if s is not None]
    if not arriving:
        return None
    first, *rest = arriving
    return {n: loc for n, loc in first.items() if all(n in s for s in rest)}


def _only_in(a: State, b: State) -> list[tuple[str, Loc]]:
    """Names assigned on every path through `a` but not through `b` (both arriving)."""
    if a is None or b is None:
        return []
    return [(n, loc) for n, loc in a.items() if n not in b]
