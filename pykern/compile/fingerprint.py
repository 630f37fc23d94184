"""What two recordings of one compiled function must share for a replay to be trusted.

A recording notes each launch's program, grid and argument block (scalars the Python computed:
learning rates, sizes, random seeds...), the bytes of each upload, and which buffers each
binds: by role, not by address. A slot (the call's argument) is its position, a buffer made
during the call is its order of first use, and any other buffer (a parameter, the
optimizer's state, a cached constant) is itself. Two calls with the same signature that give
the same fingerprint ran the same kernels on the same state with the same host values, so
the Python between them decided nothing that changes from call to call. Where they differ,
`difference` says at which launch, and where in the user's code it was made.
"""

from __future__ import annotations

from typing import Any

from pykern.compile.locate import describe
from pykern.jit.profile import program_name

try:  # the host backend's argument block holds each buffer's address and length
    from pykern.llvm.layout import LENGTH
except ImportError:  # pragma: no cover - llvmlite is a dependency; kept for clarity
    LENGTH = 1


def fingerprint(log: list[tuple], slots: dict[int, int], created: set[int]) -> list[tuple]:
    """The log of a recording (`Graph.log`) with buffers by role (see the module docstring);
    `slots` maps id(buffer) of each slot to its position."""
    order: dict[int, int] = {}
    out = []
    for program, grid, buffers, block, _ in log:
        roles = []
        for buf in buffers:
            if buf is None:
                roles.append(None)
                continue
            key = id(buf)
            if key in slots:
                roles.append(("slot", slots[key]))
            elif key in created:
                roles.append(("new", order.setdefault(key, len(order))))
            else:
                roles.append(("held", buf))
        out.append((program, grid, tuple(roles), _plain_block(program, block)))
    return out


def _plain_block(program: Any, block: Any) -> Any:
    """The block without what the host device writes into it per launch (addresses)."""
    slots = getattr(program, "pointer_slots", None)
    if not slots or not isinstance(block, list):
        return block if isinstance(block, (bytes, str)) else tuple(block)
    plain = list(block)
    for slot in slots:
        plain[slot] = plain[slot + LENGTH] = 0
    return tuple(plain)


def difference(a: list[tuple], b: list[tuple], log_a: list[tuple], log_b: list[tuple]
               ) -> str | None:
    """What differs between two fingerprints (None where nothing does), for an error."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return (f"launch {i + 1} differs: {_what(log_a[i], x)} made at "
                    f"{describe(log_a[i][4])} on one call, {_what(log_b[i], y)} made at "
                    f"{describe(log_b[i][4])} on the next; {_why(x, y)}")
    if len(a) != len(b):
        n = min(len(a), len(b))
        longer = log_a if len(a) > len(b) else log_b
        return (f"one call made {len(a)} launches, the next {len(b)}; the first extra one "
                f"was made at {describe(longer[n][4])}")
    return None


def _what(entry: tuple, fp: tuple) -> str:
    program = entry[0]
    if program in ("upload", "copy"):
        return f"an {program}" if program == "upload" else "a copy"
    name = program_name(program)
    return f"kernel {name!r}" if name else "a kernel"


def _why(x: tuple, y: tuple) -> str:
    if x[0] is not y[0]:
        return "another kernel ran (Python chose it from something that changes per call)"
    if x[1] != y[1]:
        return "its grid differs"
    if x[2] != y[2]:
        return ("it uses other tensors (a tensor made by an earlier call, or one the Python "
                "chose per call)")
    return ("its arguments differ: a host value that changes per call (a counter, a random "
            "draw on the host, data uploaded from numpy) is baked into it; pass it as an "
            "argument or compute it on the device")
