"""How the shared-memory kernel (stockham.py) runs a length: its radices, invocations per
transform, transforms per workgroup, and the per-stage constants the kernel is built from.

- Radices: the factorisation of n into RADICES (2..13 and 16; composite ones up to MAX_RADIX)
  with the fewest stages, then the smallest largest radix, then the largest smallest one
  (4096 = 8·8·8·8, 1000 = 8·5·5·5, 143 = 13·11, 6 = 6; with MAX_RADIX 16, 4096 = 16·16·16 and
  1000 = 10·10·10). Lengths with a prime factor above 13 have none (Bluestein).
- Invocations per transform: T = n / (largest radix), so the largest radix's stage runs one
  butterfly per invocation and every other stage a few.
- Transforms per workgroup: in the row layout enough for ROW_INVOCATIONS invocations, and more
  while over 1/16 of the invocations of a workgroup's subgroups of 32 would idle; in the
  column layout (strided transforms, adjacent in memory) at least COLUMN_GROUP where they fit
  (a run of 128 bytes of c64 per load) and more for short columns, up to COLUMN_INVOCATIONS
  invocations; the four-step's last pass asks for its own count. All within the device's shared
  memory and invocation limits.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

from pykern.fft.butterflies import PRIMES, RADICES

COMPLEX, RFFT, IRFFT, REAL_IN, HERMITIAN_IN = 0, 1, 2, 3, 4  # the kernel's modes
ROW_INVOCATIONS = 128  # invocations per workgroup we aim for in the row layout
COLUMN_GROUP = 16  # adjacent columns per workgroup we aim for (128 B of c64 per row)
COLUMN_INVOCATIONS = 256  # short columns: more of them, up to this many invocations
MAX_VALUES = 32  # complex values per invocation at most (registers)
MAX_RADIX = 8  # the largest composite radix the plans use (measured on an H100: radix 8
# with more invocations per transform beat radix 16 on 1000, 256 and 1024 points, tied on 4096)
PAD = True  # pad shared memory (row layout: value i at i + i/32) where it fits
PRIME_FACTORS_SLOW = (11, 13)  # radices a Bluestein length avoids (slower butterflies)


@dataclass(frozen=True)
class LaunchShape:
    """One compiled variant of the kernel: length, radices, invocations per transform,
    transforms per workgroup, layout and mode (stockham.py's module docstring)."""
    n: int
    radices: tuple[int, ...]
    threads: int
    groups: int
    columns: bool = False
    stores_across: bool = False
    pad: bool = False
    mode: int = COMPLEX
    flags: int = 0  # stockham's TWIDDLE, PRE, POST


class StageConstants(NamedTuple):
    ns: tuple[int, ...]  # product of the radices before each stage
    butterflies: tuple[int, ...]  # n / radix
    per_thread: tuple[int, ...]  # butterflies per invocation (the last ones maybe idle)
    guarded: tuple[bool, ...]  # whether some invocations have fewer
    log_ns: tuple[int, ...]  # log2(ns) where a power of two, else -1
    table_offset: tuple[int, ...]  # of the stage's twiddles in the table
    table_size: int  # twiddles in the table (of each of its two planes)
    values: int  # complex values an invocation holds


def smooth(n: int) -> bool:
    """Whether n's prime factors are all in PRIMES (a length without Bluestein)."""
    for p in PRIMES:
        while n > 1 and n % p == 0:
            n //= p
    return n == 1


@functools.lru_cache(maxsize=1024)
def radices_for(n: int, max_radix: int = 16) -> tuple[int, ...] | None:
    """The radices of length n (module docstring), none above `max_radix` but the primes 11
    and 13, largest first; None if n is not smooth."""
    if n == 1:
        return (1,)
    if not smooth(n):
        return None
    best: tuple[int, ...] | None = None

    def key(rs: tuple[int, ...]) -> tuple[int, int, int]:
        return len(rs), max(rs), -min(rs)

    def search(rest: int, top: int, chosen: tuple[int, ...]) -> None:
        nonlocal best
        if best is not None and len(chosen) >= len(best) and rest > 1:
            return
        if rest == 1:
            if best is None or key(chosen) < key(best):
                best = chosen
            return
        for r in reversed(RADICES):
            if r <= top and rest % r == 0 and (r <= max_radix or r in PRIMES):
                search(rest // r, r, chosen + (r,))

    search(n, max(RADICES), ())
    return best


def stage_constants(shape: LaunchShape) -> StageConstants:
    """The per-stage constants of `shape`'s kernel."""
    n, rad, t = shape.n, shape.radices, shape.threads
    ns = tuple(math.prod(rad[:s]) for s in range(len(rad)))
    bf = tuple(n // r for r in rad)
    per = tuple(-(-b // t) for b in bf)
    offsets, size = [], 0
    for s, r in enumerate(rad):
        offsets.append(size)
        if s > 0:
            size += (r - 1) * ns[s]
    return StageConstants(
        ns, bf, per, tuple(p * t > b for p, b in zip(per, bf)),
        tuple(v.bit_length() - 1 if v & (v - 1) == 0 else -1 for v in ns), tuple(offsets),
        max(size, 1), max(p * r for p, r in zip(per, rad)))


def slots(n: int, groups: int, pad: bool, across: bool) -> int:
    """Shared values (of each part) of `groups` transforms of length n."""
    return groups * (n + ((n >> 5) + (1 if across else 0) if pad else 0))


def idle_lanes(invocations: int) -> int:
    """Invocations of a workgroup's last subgroup of 32 left idle (T = 100: 28 of 128)."""
    return -invocations % 32


def launch_shape(n: int, itemsize: int, limit: int, max_invocations: int,
                 columns: bool = False, stores_across: bool = False, mode: int = COMPLEX,
                 groups: int | None = None) -> LaunchShape | None:
    """The kernel variant for transforms of length n with parts of `itemsize` bytes in
    `limit` bytes of shared memory (None where n does not fit or is not smooth); `groups`:
    transforms per workgroup wanted (the four-step's last pass), else the module's rule."""
    rad = radices_for(n, MAX_RADIX)
    if rad is None or 2 * n * itemsize > limit:
        return None
    t = n // max(rad)
    if t > max_invocations:
        return None

    def fits(g: int) -> bool:
        return 2 * slots(n, g, False, False) * itemsize <= limit and g * t <= max_invocations

    g = 1
    if columns:
        while fits(2 * g) and (2 * g * t <= COLUMN_INVOCATIONS or 2 * g <= COLUMN_GROUP):
            g *= 2
    elif groups is not None:
        while 2 * g <= groups and fits(2 * g):
            g *= 2
    else:
        while (2 * g * t <= ROW_INVOCATIONS or idle_lanes(g * t) * 16 > g * t) and fits(2 * g):
            g *= 2
    across = stores_across and g > 1 and not columns
    pad = PAD and not columns and 2 * slots(n, g, True, across) * itemsize <= limit
    shape = LaunchShape(n, rad, t, g, columns and g > 1, across, pad, mode)
    if stage_constants(shape).values > MAX_VALUES:
        return None
    return shape
