"""Advanced indexing (numpy's): `t[mask]`, `t[idx]`, `t[i, :, j]` and their assignments.

A key is first read into a `Selection` (`advanced_key`). Every element the key selects then
lies at  span[pre[p] + lin[b] + post[q]]  in a flat view `span` of the tensor's memory, where
`b` runs over the index arrays' broadcast shape, `p` over the sliced dimensions that come
before it in the result and `q` over those after it; the three offset vectors are i64 tensors
built on the device (`lin` from the index arrays, `pre` and `post` from the strides of the
basic view). One kernel reads the result in a grid over (q, b, p) or, in the other direction,
writes a value.

Reads are copies (as numpy's). Writes where several index entries name the same element
keep the last one in row-major order of the index arrays' broadcast shape ("last wins",
deterministic, unlike numpy, where it is unspecified): each entry first claims its target with
an atomic max of its position in a table over the indexed dimensions, and only the winner
writes; where that table would be far larger than the index arrays, a stable sort of the
targets finds the winners instead.
"""

import functools
from dataclasses import dataclass
from typing import Any

import pykern as pk

from pykern.autograd import inplace
from pykern.autograd.graph import needs_grad, record
from pykern.autograd.mode import no_grad
from pykern.autograd.version import bump
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.index.advanced_key import Selection, select
from pykern.tensor.create.creation import arange, full
from pykern.tensor.elementwise.functions import as_tensor, assign
from pykern.tensor.core.strided import collapse, has_internal_overlap, prod, view
from pykern.tensor.core.tensor import Tensor, _index, empty
from pykern.tensor.reduce.sort import argsort
from pykern.tensor.index.indexing import take

# past this many claim slots (the size of the indexed dimensions), winners of repeated
# indices are found by a stable sort of the targets instead of a claim table
CLAIM_TABLE_LIMIT = 1 << 22


@dataclass(frozen=True)
class Layout:
    """Where the elements a Selection picks from one tensor lie: span[pre[p] + lin[b] +
    post[q]] is the element at (p, b, q) of the result viewed as (P, B, Q)."""

    span: Tensor
    pre: Tensor
    lin: Tensor
    post: Tensor
    shape: tuple[int, ...]  # the result's shape

    @property
    def pbq(self) -> tuple[int, int, int]:
        return self.pre.shape[0], self.lin.shape[0], self.post.shape[0]


def getitem(x: Tensor, key: object) -> Tensor:
    """`x[key]` for a key with integer arrays or boolean masks: a new tensor of x's dtype."""
    if needs_grad(x, complex_ok=True):
        with no_grad():
            sel = select(x, key)
        return gathered(x, sel, gather(x, sel))
    return gather(x, select(x, key))


def gather(x: Tensor, sel: Selection) -> Tensor:
    """The elements of `x` that `sel` picks, as a new tensor."""
    lay = layout(x, sel)
    out = empty(lay.shape, x.dtype)
    p, b, q = lay.pbq
    if out.size == 0:
        return out
    kern = _copy_kernel(x.dtype, _workgroup(q), scatter=False)
    kern[q, b, p](lay.span, lay.pre, lay.lin, lay.post, view(out, (p, b, q), (b * q, q, 1)))
    return out


def setitem(x: Tensor, key: object, value: object) -> None:
    """`x[key] = value` for an advanced key: `value` (a scalar, tensor or array) broadcast to
    the shape `x[key]` has and converted to x's dtype. Everything is checked before anything
    is written."""
    if inplace.records_write(x, value):
        inplace.refuse_leaf("t[key] = value", x)
        with no_grad():
            sel = select(x, key)
        inplace.assign("setitem", x, put(x, sel, value), from_target=True)
        return
    scatter(x, select(x, key), value)


def scatter(x: Tensor, sel: Selection, value: object) -> None:
    """Writes `value` into the elements of `x` that `sel` picks (last wins on repeats)."""
    if has_internal_overlap(x):
        raise ValueError("cannot assign into a broadcast view (several indices share one "
                         "element)")
    lay = layout(x, sel)
    vals = _values(value, x.dtype, lay)
    p, b, q = lay.pbq
    if p * b * q == 0:
        return
    if sel.unique:
        kern = _copy_kernel(x.dtype, _workgroup(q), scatter=True)
        kern[q, b, p](lay.span, lay.pre, lay.lin, lay.post, vals)
    else:
        won = winners(sel)
        _scatter_last_kernel(x.dtype, _workgroup(q))[q, b, p](lay.span, lay.pre, lay.lin,
                                                              lay.post, vals, won)
    bump(x)


def _values(value: object, dtype: DType, lay: Layout) -> Tensor:
    """`value` as a new (P, B, Q) tensor of `dtype`, broadcast to the result's shape by the
    strided copy (its checks and conversions are basic assignment's; a value that shares
    the target's memory is read before anything is written)."""
    vals = empty(lay.shape, dtype)
    assign(vals, value)
    return vals.reshape(lay.pbq)


# ---------------------------------------------------------------- offsets

def layout(x: Tensor, sel: Selection) -> Layout:
    """The flat span of x's memory and the three offset vectors of `sel` in it."""
    shape, strides, offset = _index(x, sel.basic)
    rest = [d for d in range(len(shape)) if d not in sel.dims]
    if sel.adjacent:
        pre = [d for d in rest if d < sel.dims[0]]
        post = [d for d in rest if d > sel.dims[-1]]
    else:
        pre, post = [], rest
    result = (tuple(shape[d] for d in pre) + sel.shape + tuple(shape[d] for d in post))
    lo = offset
    hi = offset
    if prod(shape):
        for s, st in zip(shape, strides):
            lo, hi = (lo + (s - 1) * st, hi) if st < 0 else (lo, hi + (s - 1) * st)
    span = view(x, (hi - lo + 1,), (1,), lo)
    pre_off = _dim_offsets([shape[d] for d in pre], [strides[d] for d in pre], offset - lo)
    post_off = _dim_offsets([shape[d] for d in post], [strides[d] for d in post], 0)
    lin = _linear(sel, [strides[d] for d in sel.dims])
    return Layout(span, pre_off, lin, post_off, result)


def _dim_offsets(shape: list[int], strides: list[int], base: int) -> Tensor:
    """base + the memory offset of every index of `shape` (row-major), as an i64 vector."""
    cshape, (cstrides,) = collapse(shape, [strides])
    off = full((1,), base, dt.i64)
    for n, st in zip(cshape, cstrides):
        step = arange(n, dtype=dt.i64) * st
        off = (off.reshape(-1, 1) + step.reshape(1, -1)).reshape(-1)
    if prod(shape) == 0:
        return empty((0,), dt.i64)
    return off


def _linear(sel: Selection, strides: list[int]) -> Tensor:
    """sum_k arrays[k] * strides[k] over the broadcast shape, flattened (i64)."""
    const = sum(a * st for a, st in zip(sel.arrays, strides) if isinstance(a, int))
    lin: Tensor | None = None
    for a, st in zip(sel.arrays, strides):
        if isinstance(a, Tensor):
            term = a * st if st != 1 else a
            lin = term if lin is None else lin + term
    if lin is None or tuple(lin.shape) != sel.shape:  # only ints, or arrays that broadcast
        lin = full(sel.shape, const, dt.i64) + (0 if lin is None else lin)
    elif const:
        lin = lin + const
    return lin.reshape(-1)


def target_keys(sel: Selection) -> tuple[Tensor, int]:
    """Each broadcast entry's target as one row-major number over the indexed dimensions'
    sizes (i64, flattened), and how many such targets there are."""
    sizes = sel.sizes
    row = [prod(sizes[k + 1:]) for k in range(len(sizes))]
    return _linear(sel, row), prod(sizes)


# ---------------------------------------------------------------- last wins

def winners(sel: Selection) -> Tensor:
    """An i32 vector over the broadcast entries: 1 where the entry is the last one (in
    row-major order) naming its target element."""
    keys, count = target_keys(sel)
    n = keys.shape[0]
    won = empty((n,), dt.i32)
    if count <= max(CLAIM_TABLE_LIMIT, 4 * n):
        table = full((count,), -1, dt.i32)
        _claim[n](keys, table)
        _won_claim[n](keys, table, won)
    else:
        order = argsort(keys, 0)  # stable: ties keep entry order
        _won_sorted[n](take(keys, order), order, won)
    return won


@pk.kernel
def _claim(keys: dt.i64[:], table: dt.i32[:]):
    b = pk.global_id(0)
    pk.atomic_max(table, keys[b], pk.i32(b))


@pk.kernel
def _won_claim(keys: dt.i64[:], table: dt.i32[:], won: dt.i32[:]):
    b = pk.global_id(0)
    won[b] = pk.i32(table[keys[b]] == pk.i32(b))


@pk.kernel
def _won_sorted(sorted_keys: dt.i64[:], order: dt.i64[:], won: dt.i32[:]):
    s = pk.global_id(0)
    last = s + 1 == sorted_keys.shape[0]
    if not last:
        last = sorted_keys[s + 1] != sorted_keys[s]
    won[order[s]] = pk.i32(last)


# ---------------------------------------------------------------- kernels

def _workgroup(q: int) -> tuple[int, int, int]:
    """Wide along q when rows are long, along b when each entry picks a single element."""
    return (16, 4, 1) if q >= 16 else (1, 64, 1)


@pk.func
def _element(pre, lin, post):
    """(p, b, q, at): this invocation's place in the (P, B, Q) grid of the result (launched
    over (Q, B, P)) and the offset in `span` of the element it reads or writes."""
    q = pk.global_id(0)
    b = pk.global_id(1)
    p = pk.global_id(2)
    return p, b, q, pre[p] + lin[b] + post[q]


@functools.lru_cache(maxsize=None)
def _copy_kernel(x_dt: DType, workgroup: tuple[int, int, int], scatter: bool) -> pk.Kernel:
    """The gather (span's selected elements into the dense (P, B, Q) tensor) or, with
    `scatter`, the other way round: one direction is compiled, the flag is a constant."""
    SCATTER = scatter  # noqa: N806

    @pk.kernel(workgroup=workgroup)
    def advanced_copy(span: x_dt[:], pre: dt.i64[:], lin: dt.i64[:], post: dt.i64[:],
                      dense: x_dt[:, :, :]):
        p, b, q, at = _element(pre, lin, post)
        if SCATTER:
            span[at] = dense[p, b, q]
        else:
            dense[p, b, q] = span[at]

    return advanced_copy


@functools.lru_cache(maxsize=None)
def _scatter_last_kernel(x_dt: DType, workgroup: tuple[int, int, int]) -> pk.Kernel:
    @pk.kernel(workgroup=workgroup)
    def advanced_scatter_last(span: x_dt[:], pre: dt.i64[:], lin: dt.i64[:], post: dt.i64[:],
                              vals: x_dt[:, :, :], won: dt.i32[:]):
        p, b, q, at = _element(pre, lin, post)
        if won[b] != 0:
            span[at] = vals[p, b, q]

    return advanced_scatter_last


# ---------------------------------------------------------------- backward
# Reading is a gather, so its gradient is a scatter-add of `g` into zeros, where repeated
# indices accumulate (as PyTorch's `index` backward). A write is recorded as an out-of-place
# "put" (x with the selected elements replaced) that `inplace.assign` then copies into x: x's
# gradient is `g` with zeros at the written elements, the value's the gather of `g` there,
# zero for entries that lost to a later repeat of their index (they do not reach the result).


def gathered(x: Any, sel: Any, out: Any) -> Any:
    """`out` (= x[sel], computed without recording) with its backward recorded (any float or
    complex dtype: the scatter-add moves g as the gather moved x)."""
    if not (out.dtype.is_float or out.dtype.is_complex):
        return out
    shape = tuple(x.shape)
    return record("getitem", out, (x,), lambda g: (scatter_add_into_zeros(shape, sel, g),),
                  saved=())


def scatter_add_into_zeros(shape: tuple[int, ...], sel: Any, g: Any) -> Any:
    """Zeros of `shape` with `g` (shaped as x[sel]) added at the elements `sel` picks."""
    narrow = g.dtype in (dt.f16, dt.bf16)  # summed in f32, rounded once
    acc = dt.f32 if narrow else g.dtype
    size = prod(shape)
    with no_grad():
        lay = layout(pk.zeros(shape, acc), sel)  # a row-major stand-in: offsets only
        p, b, q = lay.pbq
        where = (lay.pre.reshape(p, 1, 1) + lay.lin.reshape(1, b, 1)
                 + lay.post.reshape(1, 1, q)).reshape(-1) + lay.span.offset
        flat = pk.scatter_add(pk.zeros((size,), acc), 0, where, g.astype(acc).reshape(-1))
        return flat.reshape(shape).astype(g.dtype, copy=False)


def put(x: Any, sel: Any, value: Any) -> Any:
    """x with the elements `sel` picks replaced by `value`, as a new tensor, recorded."""
    v = as_tensor(value, "t[key] = value: value")
    with no_grad():
        out = x.copy()
        scatter(out, sel, v)
    if not out.dtype.is_float:
        return out

    def back(g: Any) -> tuple[Any, Any]:
        gx = g.copy()
        scatter(gx, sel, 0)
        gv = None
        if getattr(v, "requires_grad", False):
            gv = gather(g, sel)
            if not sel.unique:
                w = winners(sel).astype(gv.dtype)
                gv = (gv.reshape(_pbq(gv.shape, sel)) * w.reshape(1, -1, 1)).reshape(gv.shape)
            if v.dtype.is_float:
                gv = gv.astype(v.dtype, copy=False)
        return gx, gv

    return record("index_put", out, (x, v), back, saved=())  # reads no values


def _pbq(result_shape: tuple[int, ...], sel: Any) -> tuple[int, int, int]:
    """The result's shape as (P, B, Q): sliced dims before the broadcast ones, those, after
    (adjacent index arrays sit where their first dimension was; others go first)."""
    lead = sel.dims[0] if sel.adjacent else 0
    n = len(sel.shape)
    return (prod(result_shape[:lead]), prod(result_shape[lead:lead + n]),
            prod(result_shape[lead + n:]))

