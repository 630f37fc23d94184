"""Flat row-major indices back to coordinates, inside kernels: the one place the op library
unravels an index.

`unravelN(i, a, d)` is coordinate `d` of the flat index `i` over the first N dimensions of the
array `a` (its last N-1 sizes are read; the first is not needed). The kernel language has no
tuple returns yet, so a kernel calls it once per coordinate; the device compiler inlines the
calls and shares their divisions, so the code is the hand-written chain of `%` and `//`. When
`pk.unravel(i, shape)` lands, these bodies become that call and the call sites one tuple
assignment each.
"""

from __future__ import annotations

import pykern as pk


@pk.func
def unravel2(i, a, d):
    """Coordinate d (0 or 1) of flat index i over a's first two dimensions."""
    if d == 0:
        return i // a.shape[1]
    return i % a.shape[1]


@pk.func
def unravel3(i, a, d):
    """Coordinate d (0..2) of flat index i over a's first three dimensions."""
    if d == 2:
        return i % a.shape[2]
    q = i // a.shape[2]
    if d == 1:
        return q % a.shape[1]
    return q // a.shape[1]


@pk.func
def unravel4(i, a, d):
    """Coordinate d (0..3) of flat index i over a's four dimensions."""
    if d == 3:
        return i % a.shape[3]
    q = i // a.shape[3]
    if d == 2:
        return q % a.shape[2]
    q = q // a.shape[2]
    if d == 1:
        return q % a.shape[1]
    return q // a.shape[1]
