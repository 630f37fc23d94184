"""The launch grid: the one place its rules are checked (stdlib only, no Vulkan).

A grid is an int or a tuple (or list) of 1 to 3 ints, each in [0, 2**31): kernels compute
their ids in 32-bit ints, so a larger dimension could not be indexed. All dimensions together
name at most 2**40 invocations (`TOTAL_LIMIT`). Booleans and floats are refused, numpy integers
accepted. The runtime, the JIT layer and the interpreter all call
`grid_dims` / `normalize_grid`; each turns the `GridError` into its own kind of error (the
JIT layer into `pk.LaunchError` naming the kernel).

    >>> normalize_grid(64)
    (64, 1, 1)
    >>> grid_dims((16, 8))
    (16, 8)
"""

from __future__ import annotations

from .errors import LaunchError

GRID_LIMIT = 2**31  # each grid dimension must stay below this
# The invocations of one launch, all dimensions together, are at most this many. Each dimension
# in range still allows 2**62 or 2**93 of them, which no device finishes (the host would run
# for ever, and the Vulkan runtime would not even finish planning the dispatches its
# workgroup-count limit cuts the grid into). 2**40 (about 10**12) is more than one invocation
# per byte of the largest device memory (an H200 has 2**37 bytes): no op on tensors comes near
# it, and a kernel over all pairs of a million items still fits.
TOTAL_LIMIT = 2**40
MAX_DIMS = 3


class GridError(LaunchError, ValueError):
    """A grid that breaks the rules above; the message says which and contains "grid"."""


def grid_dims(grid: object) -> tuple[int, ...]:
    """The dimensions `grid` names (1 to 3 ints), checked, as plain ints."""
    if isinstance(grid, (tuple, list)):
        dims = tuple(grid)
    elif _is_index(grid):
        dims = (grid,)
    else:
        raise GridError(f"the grid must be an int or a tuple of 1 to 3 ints, not {grid!r}")
    if not 1 <= len(dims) <= MAX_DIMS:
        raise GridError(f"a grid has 1 to 3 dimensions, not {len(dims)}: {grid!r}")
    if not all(_is_index(d) for d in dims):
        raise GridError(f"grid dimensions must be integers: {grid!r}")
    out = tuple(d.__index__() for d in dims)  # type: ignore[attr-defined]
    if any(d < 0 or d >= GRID_LIMIT for d in out):
        raise GridError(f"grid {out} is out of range: each dimension must be in 0 .. 2**31-1")
    total = 1
    for d in out:
        total *= d
    if total > TOTAL_LIMIT:
        raise GridError(f"grid {out} names {total} invocations, more than the {TOTAL_LIMIT} "
                        "(2**40) a launch may run")
    return out


def normalize_grid(grid: object) -> tuple[int, int, int]:
    """`grid` checked by `grid_dims` and padded to three dimensions with 1s."""
    if type(grid) is tuple and len(grid) == 3:  # the launch's common case, checked cheaply
        g0, g1, g2 = grid
        if (type(g0) is int and type(g1) is int and type(g2) is int
                and 0 <= g0 < GRID_LIMIT and 0 <= g1 < GRID_LIMIT and 0 <= g2 < GRID_LIMIT
                and g0 * g1 * g2 <= TOTAL_LIMIT):
            return grid  # type: ignore[return-value]
    dims = grid_dims(grid)
    return dims + (1,) * (MAX_DIMS - len(dims))  # type: ignore[return-value]


def _is_index(value: object) -> bool:
    """An integer that is not a bool: an int, a numpy integer, anything with `__index__`."""
    return not isinstance(value, bool) and hasattr(value, "__index__")
