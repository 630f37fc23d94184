"""Shapes and strides for the op library: broadcasting, collapsing dimensions, and cutting an
n-d strided problem into launches of the 1-D or 4-D generic kernels.

The generic kernels index their arrays either flat (`x[i]`: FLAT; on a GPU the spread pass gives
each invocation several elements) or as 4-D (`x[i0, i1, i2, i3]`: STRIDED, or ROWS over a grid of
rows on the host), always through the tensor's own strides, so any view works. Before a launch,
dimensions that are contiguous with their neighbour in every operand are merged (a row-major tensor
of any shape becomes 1-D), size-1 dimensions dropped, and what is left padded to 4-D; more than four
dimensions that cannot merge are cut into several 4-D launches along the leading ones.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pykern.tensor.core.tensor import Tensor

# the `nd` values of the generic elementwise kernels (pykern/tensor/elementwise/functions.py)
FLAT = 1  # flat, one element per invocation
ROWS = 2  # 4-D views over a 2-D grid: the last dimension, then the rows of the other three
STRIDED = 4  # 4-D views, one flat index unravelled per element


def cdiv(a: int, b: int) -> int:
    """a / b rounded up."""
    return -(-a // b)


def prod(xs: Sequence[int]) -> int:
    """The product of a shape (1 for ())."""
    n = 1
    for x in xs:
        n *= int(x)
    return n


def view(t: Tensor, shape: Sequence[int], strides: Sequence[int], offset: int | None = None
         ) -> Tensor:
    """A view of `t`'s buffer (strides and offset in elements; `t`'s offset by default)."""
    return Tensor(t.buffer, tuple(int(s) for s in shape), t.dtype,
                  tuple(int(s) for s in strides), t.offset if offset is None else int(offset))


def broadcast_shapes(*shapes: Sequence[int], op: str = "") -> tuple[int, ...]:
    """numpy's broadcasting of shapes; ValueError naming them (and `op`) when they do not
    fit."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, s in enumerate(shape, ndim - len(shape)):
            if s == out[i] or s == 1:
                continue
            if out[i] == 1:
                out[i] = s
            else:
                raise ValueError((f"{op}: " if op else "") + "shapes "
                                 + ", ".join(str(tuple(s)) for s in shapes)
                                 + " cannot be broadcast together")
    return tuple(out)


def broadcast_strides(shape: Sequence[int], t_shape: Sequence[int], t_strides: Sequence[int]
                      ) -> tuple[int, ...]:
    """Strides of a tensor of `t_shape` broadcast to `shape` (0 where it is repeated)."""
    lead = len(shape) - len(t_shape)
    out = [0] * lead
    for s, ts, st in zip(shape[lead:], t_shape, t_strides):
        out.append(0 if ts == 1 and s != 1 else st)
    return tuple(out)


def collapse(shape: Sequence[int], strides: Sequence[Sequence[int]]
             ) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Drops size-1 dimensions and merges dimension k into k+1 wherever every operand has
    stride[k] == stride[k+1] * shape[k+1]. The element order is unchanged."""
    dims = [i for i, s in enumerate(shape) if s != 1]
    new_shape: list[int] = []
    new_strides: list[list[int]] = [[] for _ in strides]
    for i in dims:
        if new_shape and all(ns[-1] == st[i] * shape[i] for ns, st in zip(new_strides, strides)):
            new_shape[-1] *= shape[i]
            for ns, st in zip(new_strides, strides):
                ns[-1] = st[i]
        else:
            new_shape.append(shape[i])
            for ns, st in zip(new_strides, strides):
                ns.append(st[i])
    return tuple(new_shape), [tuple(ns) for ns in new_strides]


@dataclass(frozen=True)
class Launch:
    """One launch of a generic kernel: `nd` is FLAT, ROWS or STRIDED, `views` the operands
    (same order as given) shaped for it, `n` the number of elements, `grid` what to launch
    over (`n`; for ROWS the last dimension and the rows)."""

    nd: int
    views: tuple[Tensor, ...]
    n: int
    grid: int | tuple[int, int] = 0

    def __post_init__(self) -> None:
        if not self.grid:
            object.__setattr__(self, "grid", self.n)


def plan(shape: Sequence[int], tensors: Sequence[Tensor], rows: bool = False
         ) -> Iterator[Launch]:
    """Launches covering an elementwise problem of `shape`: every tensor in `tensors` is
    already a view of exactly `shape` (broadcast ones with stride 0). With `rows`, what does
    not collapse to 1-D launches as ROWS (a 2-D grid: the last dimension, then the rows of
    the other three) instead of STRIDED."""
    n_total = 1
    for s in shape:
        n_total *= s
    if n_total == 0:
        return
    cshape, cstrides = collapse(shape, [t.element_strides for t in tensors])
    if len(cshape) <= 1:
        n = cshape[0] if cshape else 1
        views = tuple(Tensor(t.buffer, (n,), t.dtype, (st[0] if st else 0,), t.offset)
                      for t, st in zip(tensors, cstrides))
        yield Launch(FLAT, views, n)
        return
    lead = max(len(cshape) - 4, 0)
    inner = (1,) * (4 - len(cshape) + lead) + cshape[lead:]
    n = 1
    for s in inner:
        n *= s
    for index in itertools.product(*(range(s) for s in cshape[:lead])):
        views = []
        for t, st in zip(tensors, cstrides):
            offset = t.offset + sum(i * s for i, s in zip(index, st[:lead]))
            strides = (0,) * (4 - len(st) + lead) + st[lead:]
            views.append(Tensor(t.buffer, inner, t.dtype, strides, offset))
        if rows:
            yield Launch(ROWS, tuple(views), n, (inner[3], inner[0] * inner[1] * inner[2]))
        else:
            yield Launch(STRIDED, tuple(views), n)


def batch_pieces(shape: Sequence[int], strides: Sequence[Sequence[int]], keep: int
                 ) -> Iterator[tuple[list[int], tuple[int, ...], list[tuple[int, ...]]]]:
    """Cuts iteration over `shape` (every operand's strides for it given) into pieces of exactly
    `keep` dimensions, for kernels that take arrays of a fixed rank: yields (offset delta per
    operand, shape, strides per operand). Merges dimensions first; leading ones that still do
    not fit are walked one index at a time (one launch each)."""
    if prod(shape) == 0:
        return
    cshape, cstrides = collapse(shape, strides)
    extra = max(len(cshape) - keep, 0)
    pad = keep - (len(cshape) - extra)
    inner_shape = (1,) * pad + cshape[extra:]
    inner_strides = [(0,) * pad + st[extra:] for st in cstrides]
    for idx in itertools.product(*(range(s) for s in cshape[:extra])):
        deltas = [sum(map(operator.mul, idx, st[:extra])) for st in cstrides]
        yield deltas, inner_shape, inner_strides


def extent(t: Tensor) -> tuple[int, int]:
    """The lowest and highest element offsets `t` touches (t.size > 0)."""
    return t._extent()


def may_overlap(a: Tensor, b: Tensor) -> bool:
    """Whether the two views can touch a common element (by buffer and address range)."""
    if a.buffer is not b.buffer or a.size == 0 or b.size == 0:
        return False
    alo, ahi = extent(a)
    blo, bhi = extent(b)
    return alo <= bhi and blo <= ahi


def same_elements(a: Tensor, b: Tensor) -> bool:
    """Whether element k of `a` is element k of `b` for every k (the same view, broadcast
    dimensions aside), so reading `b` while writing `a` elementwise is safe."""
    if a.buffer is not b.buffer or a.shape != b.shape or a.offset != b.offset:
        return False
    return all(sa == sb or n == 1 for sa, sb, n in zip(a.element_strides, b.element_strides,
                                                      a.shape))


def has_internal_overlap(t: Tensor) -> bool:
    """True when two indices of `t` reach one element (a broadcast view): writing it would
    race."""
    return any(st == 0 and s > 1 for s, st in zip(t.shape, t.element_strides))
