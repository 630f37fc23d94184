"""Set functions of the array API: `unique_values`, `unique_counts`, `unique_inverse`,
`unique_all`.

The flattened input is sorted (stable `argsort`), a kernel marks where a run of equal values
starts (every nan starts its own run: the standard counts nans as distinct), a prefix sum
(`cumsum`) numbers the runs, and compaction kernels write the values, first indices, counts
and the inverse. The number of unique values decides the result's shape, so it is read back.
"""

from __future__ import annotations

from typing import NamedTuple

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.index.indexing import take
from pykern.tensor.reduce.scan import cumsum
from pykern.tensor.reduce.sort import argsort
from pykern.ops.public import declare, torch_names


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


@pk.kernel
def _run_starts(s: pk.Array, starts: pk.Array):
    i = pk.global_id(0)
    if i == 0:
        starts[i] = 1
    elif s[i] != s[i - 1]:
        starts[i] = 1
    else:
        starts[i] = 0


@pk.kernel
def _compact_runs(starts: pk.Array, run: pk.Array, s: pk.Array, perm: pk.Array,
                  values: pk.Array, first: pk.Array, begin: pk.Array):
    i = pk.global_id(0)
    if starts[i] != 0:
        k = run[i] - 1
        values[k] = s[i]
        first[k] = perm[i]  # the stable sort keeps the first occurrence first
        begin[k] = i


@pk.kernel
def _counts(begin: pk.Array, n: int, counts: pk.Array):
    k = pk.global_id(0)
    if k + 1 < len(begin):
        counts[k] = begin[k + 1] - begin[k]
    else:
        counts[k] = n - begin[k]


@pk.kernel
def _inverse(perm: pk.Array, run: pk.Array, inverse: pk.Array):
    i = pk.global_id(0)
    inverse[perm[i]] = run[i] - 1


def _unique(x: object) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(values, first indices, run starts in sorted order, run numbers, sort permutation)."""
    x = ew.as_tensor(x)
    flat = x.reshape(-1)
    n = flat.shape[0]
    if n == 0:
        e = empty((0,), dt.i64)
        return empty((0,), x.dtype), e, e, e, e
    perm = argsort(flat, axis=0)  # complex: numpy's order (real, then imaginary part)
    s = take(flat, perm, axis=0)
    starts = empty((n,), dt.i32)
    _run_starts[n](s, starts)
    run = cumsum(starts, axis=0)
    m = int(run[n - 1].item())
    values = empty((m,), x.dtype)
    first = empty((m,), dt.i64)
    begin = empty((m,), dt.i64)
    _compact_runs[n](starts, run, s, perm, values, first, begin)
    return values, first, begin, run, perm


def unique_values(x: object, /) -> Tensor:
    """The distinct values of `x` (flattened), sorted; each nan is distinct."""
    return _unique(x)[0]


def unique_counts(x: object, /) -> UniqueCountsResult:
    """The distinct values and how often each occurs (i64)."""
    values, _, begin, _, _ = _unique(x)
    return UniqueCountsResult(values, _run_counts(begin, ew.as_tensor(x).size))


def unique_inverse(x: object, /) -> UniqueInverseResult:
    """The distinct values and, for each element of `x`, the index of its value among them (i64,
    of `x`'s shape)."""
    x = ew.as_tensor(x)
    values, _, _, run, perm = _unique(x)
    return UniqueInverseResult(values, _inverse_of(run, perm, x.shape))


def unique_all(x: object, /) -> UniqueAllResult:
    """Distinct values, the index of each one's first occurrence in the flattened `x`, the
    inverse indices (of `x`'s shape) and the counts."""
    x = ew.as_tensor(x)
    values, first, begin, run, perm = _unique(x)
    return UniqueAllResult(values, first, _inverse_of(run, perm, x.shape),
                           _run_counts(begin, x.size))


def _run_counts(begin: Tensor, n: int) -> Tensor:
    counts = empty(begin.shape, dt.i64)
    if begin.shape[0]:
        _counts[begin.shape[0]](begin, n, counts)
    return counts


def _inverse_of(run: Tensor, perm: Tensor, shape: tuple[int, ...]) -> Tensor:
    n = run.shape[0]
    inverse = empty((n,), dt.i64)
    if n:
        _inverse[n](perm, run, inverse)
    return inverse.reshape(shape)


unique_values = declare(unique_values, "sort", grad="refused", exports=("array_api",),
                        aliases=torch_names("unique", "aten::_unique2", numpy="unique_values",
                                            array_api="unique_values"))
unique_counts = declare(unique_counts, "sort", grad="refused", exports=("array_api",),
                        aliases=torch_names(None, numpy="unique_counts",
                                            array_api="unique_counts"))
unique_inverse = declare(unique_inverse, "sort", grad="refused", exports=("array_api",),
                         aliases=torch_names(None, numpy="unique_inverse",
                                             array_api="unique_inverse"))
unique_all = declare(unique_all, "sort", grad="refused", exports=("array_api",),
                     aliases=torch_names(None, numpy="unique_all", array_api="unique_all"))
