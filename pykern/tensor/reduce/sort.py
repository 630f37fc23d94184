"""Sorting: `sort`, `argsort`, `topk`.

A bitonic sorting network over (key, index) pairs. Comparing the index when keys tie makes the
network stable (equal keys keep their original order, in both directions), so argsort is a
stable argsort. NaN sorts after every number in ascending order (numpy) and before every number
in descending order (PyTorch: NaN counts as the largest value). Complex keys are in numpy's
order: by real part, then imaginary part, with the NaNs in numpy's classes
`[R + Rj, R + nanj, nan + Rj, nan + nanj]` (each class ordered by its non-NaN part);
descending is the reverse order, ties still in index order. `topk` refuses complex tensors,
as PyTorch does.

Rows are padded to a power of two P with elements that sort last. Rows with P <= BLOCK (2048
by default, `config("sort").block`; halved while a block's keys and indices would not fit the
device's shared memory: c128 keys on a 32 KiB device) are sorted in shared memory by one
workgroup (tiny rows: several per workgroup). Longer rows go through a global scratch copy:
each BLOCK-long chunk is sorted in shared memory, then every merge stage k > BLOCK runs its
strides >= BLOCK as global compare-exchange launches and its strides < BLOCK in shared memory
again — log2(P/BLOCK)·(log2(P/BLOCK)+3)/2 + 1 launches.
"""

import functools
from collections.abc import Callable
from typing import Any

import pykern as pk

from pykern.ops.public import declare, torch_names
from pykern.tensor.index import gather_backward
from pykern.autograd.graph import needs_grad
from pykern.autograd.mode import no_grad
from pykern.tensor.core.stand_in import stand_in
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.runtime import get_device
from pykern.ops.choice import config, device_info, tune
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.complex.complex_elementwise import not_defined
from pykern.tensor.core.checks import check_int
from pykern.tensor.create.creation import fill
from pykern.tensor.elementwise.functions import as_tensor, assign
from pykern.tensor.core.strided import batch_pieces, cdiv, prod, view
from pykern.tensor.core.tensor import normalize_axis
from pykern.tensor.api.torch_style import TopK

SORT_DTYPES = (dt.bool_, dt.i8, dt.i16, dt.i32, dt.i64, dt.u8, dt.u16, dt.u32, dt.u64, dt.f16,
               dt.f32, dt.f64, dt.bf16, dt.c64, dt.c128)
INDEX_DTYPE = dt.i64  # argsort/topk indices, as numpy's intp
# the elements one workgroup sorts in shared memory at most (`block`, where the device's shared
# memory holds them) and its invocations at most (`threads`)
tune("sort", lambda info: {"block": 2048, "threads": 256})


def sort(x: object, axis: int = -1, descending: bool = False) -> Tensor:
    """`x` sorted along `axis` (ascending unless `descending`); NaN last ascending, first
    descending. Every dtype; complex values in numpy's order (real part, then imaginary part;
    NaNs as `[R + Rj, R + nanj, nan + Rj, nan + nanj]`).

        pk.sort(scores, descending=True)
    """
    return _sort_op(x, axis, descending, None, "sort", indices=False)[0]


def _sort_backward(forward: Callable[..., Tensor], x: object, axis: int = -1,
                   descending: bool = False) -> Tensor:
    """sort recorded as the gather of x at the indices it found (any dtype: the backward
    scatters g back)."""
    with no_grad():
        values, indices = _sort_op(x, axis, descending, None, "sort")
    return gather_backward.sorted_values(values, indices, x, axis, "sort")


ROW_SAMPLES = {"shapes": ((3, 5),), "calls": ({"axis": -1}, {"axis": 0})}
sort = declare(sort, "sort", grad="rule", backward=_sort_backward, complex_grad=True,
               samples=ROW_SAMPLES, aliases=torch_names("sort", "aten::sort", numpy="sort"))


def argsort(x: object, axis: int = -1, descending: bool = False) -> Tensor:
    """The i64 indices that sort `x` along `axis`; stable: equal elements keep their order
    (in both directions), so it equals numpy's `argsort(kind="stable")` for ascending order.
    Every dtype (complex in numpy's order, as `sort`)."""
    return _sort_op(x, axis, descending, None, "argsort", values=False)[1]


def topk(x: object, k: int, axis: int = -1, largest: bool = True, *, dim: int | None = None,
         sorted: bool = True) -> TopK:  # noqa: A002
    """The `k` largest (or smallest, `largest=False`) elements along `axis` and their i64
    indices, as PyTorch's `topk` (a named tuple `(values, indices)`; PyTorch's `dim=` names
    the axis too): sorted (largest first, or smallest first, also with `sorted=False`), ties in
    index order, NaN counted as the largest value. `k` may be 0 to the axis length. Every real
    dtype (complex tensors are refused, as PyTorch refuses them).

        values, indices = pk.topk(logits, 5)
    """
    op = "topk"
    if dim is not None:
        if axis != -1:
            raise TypeError(f"{op}: give axis= or dim=, not both")
        axis = dim
    return TopK(*_topk(x, k, axis, largest, op))


def _topk(x: object, k: int, axis: int, largest: bool, op: str) -> tuple[Tensor, Tensor]:
    xt = as_tensor(x, f"{op}: x")
    if xt.dtype.is_complex:
        raise not_defined(op, xt.dtype)
    k = check_int(k, op, "k", 0)
    if xt.ndim == 0:
        raise ValueError(f"{op}: x is 0-d")
    ax = normalize_axis(axis, xt.ndim, op=op)
    if k > xt.shape[ax]:
        raise ValueError(f"{op}: k = {k} is larger than axis {ax}'s length {xt.shape[ax]}")
    if needs_grad(xt):  # (its backward beside the values: indices are not differentiated)
        with no_grad():
            values, indices = _sort_op(xt, ax, bool(largest), k, op)
        return gather_backward.sorted_values(values, indices, xt, ax, op), indices
    return _sort_op(xt, ax, bool(largest), k, op)


argsort = declare(argsort, "sort", samples=ROW_SAMPLES,
                  aliases=torch_names("argsort", "aten::argsort", numpy="argsort"))
topk = declare(topk, "sort", grad="inline", aliases=torch_names("topk", "aten::topk"))


def _sort_op(x: object, axis: object, descending: bool, k: int | None, op: str,
             values: bool = True, indices: bool = True) -> tuple[Tensor, Tensor]:
    """Sorted values and indices along `axis` (the first k with `k`); an output not wanted
    is written to a one-element scratch tensor (stride 0) instead of being allocated."""
    x = as_tensor(x, f"{op}: x")
    if x.dtype not in SORT_DTYPES:
        raise TypeError(f"{op}: unsupported dtype {x.dtype.name}")
    if not isinstance(descending, (bool, int)):
        raise TypeError(f"{op}: descending must be a bool")
    if x.ndim == 0:
        if k is None:
            out = empty((), x.dtype)
            assign(out, x)
            idx = empty((), INDEX_DTYPE)
            fill(idx, 0)
            return out, idx
        raise ValueError(f"{op}: x is 0-d")
    axis = normalize_axis(axis, x.ndim, op=op)
    length = x.shape[axis]
    nout = length if k is None else k
    shape = x.shape[:axis] + (nout,) + x.shape[axis + 1:]
    vals = empty(shape, x.dtype) if values else _sink(x.dtype, shape)
    inds = empty(shape, INDEX_DTYPE) if indices else _sink(INDEX_DTYPE, shape)
    if prod(shape) == 0:
        return vals, inds
    rest = x.shape[:axis] + x.shape[axis + 1:]

    def others(t: Tensor) -> tuple[int, ...]:
        return t.element_strides[:axis] + t.element_strides[axis + 1:]

    strides = [others(x), others(vals), others(inds)] if rest else [(0,), (0,), (0,)]
    p = 1 << max(length - 1, 0).bit_length()
    for deltas, bshape, (sx, sv, si) in batch_pieces(rest or (1,), strides, 2):
        xv = view(x, bshape + (length,), sx + (x.element_strides[axis],), x.offset + deltas[0])
        vv = view(vals, bshape + (nout,), sv + (vals.element_strides[axis],),
                  vals.offset + deltas[1])
        iv = view(inds, bshape + (nout,), si + (inds.element_strides[axis],),
                  inds.offset + deltas[2])
        _sort_rows(xv, vv, iv, p, bool(descending))
    return vals, inds


def _key_dtype(d: DType) -> DType:
    """What keys are kept as in shared memory: 32 bits at least (8- and 16-bit workgroup
    storage is an optional device feature); the conversion is exact."""
    if d in (dt.bool_, dt.i8, dt.i16):
        return dt.i32
    if d in (dt.u8, dt.u16):
        return dt.u32
    if d in (dt.f16, dt.bf16):
        return dt.f32
    return d


def _block_size(kd: DType, cfg: Any) -> int:
    """The elements one workgroup sorts in shared memory: `cfg.block`, halved while its keys
    and i32 indices would not fit the device's shared memory."""
    limit = get_device().info.limits.max_shared_memory
    block = cfg.block
    while block > 16 and block * (kd.itemsize + 4) > limit:
        block //= 2
    return block


def _sort_rows(x: Tensor, vals: Tensor, inds: Tensor, p: int, desc: bool) -> None:
    """Sorts the rows of the (R1, R2, L) view x into (R1, R2, nout) views vals and inds."""
    rows = x.shape[0] * x.shape[1]
    length = x.shape[2]
    kd = _key_dtype(x.dtype)
    cfg = config("sort", device_info("sort"))
    chunk = _block_size(kd, cfg)
    if p <= chunk:
        block = max(p, 16)  # tiny rows share one kernel (and a workgroup: 8 rows each)
        threads = min(max(block // 2, 64), cfg.threads)
        kern = _block_kernel(x.dtype, kd, vals.dtype, block, threads, desc, True, True)
        groups = cdiv(rows * (block // 2), threads) if block // 2 < threads else rows
        keys, idx = _scratch_dummies(kd)
        kern[groups * threads](x, keys, idx, vals, inds, length, 2, block, rows)
        return
    keys = empty((rows, p), kd)
    idx = empty((rows, p), dt.i32)
    pairs = rows * (p // 2)
    threads = min(cfg.threads, chunk // 2)
    first = _block_kernel(x.dtype, kd, vals.dtype, chunk, threads, desc, True, False)
    nblocks = rows * (p // chunk)
    first[nblocks * threads](x, keys, idx, vals, inds, length, 2, chunk, rows)
    step = _global_step_kernel(kd, desc)
    merge = _block_kernel(x.dtype, kd, vals.dtype, chunk, threads, desc, False, False)
    last = _block_kernel(x.dtype, kd, vals.dtype, chunk, threads, desc, False, True)
    k = 2 * chunk
    while k <= p:
        j = k // 2
        while j >= chunk:
            step[pairs](keys, idx, k, j, length)
            j //= 2
        kern = last if k == p else merge
        kern[nblocks * threads](x, keys, idx, vals, inds, length, k, k, rows)
        k *= 2


def _sink(d: DType, shape: tuple[int, ...]) -> Tensor:
    """A write-only stand-in for an unwanted output: every element is one scratch element."""
    return view(_scratch_dummies(d)[0], shape, (0,) * len(shape), 0)


def _scratch_dummies(kd: DType) -> tuple[Tensor, Tensor]:
    """The stand-ins bound to the scratch slots a launch does not use."""
    return stand_in(kd, (1, 1)), stand_in(dt.i32, (1, 1))


@pk.func
def _real_less(a, b):
    """a < b with NaN after every number (numpy's ascending order)."""
    return a < b or (b != b and not a != a)


@pk.func
def _c_class(z):
    """numpy's NaN class of a complex value: 0 R + Rj, 1 R + nanj, 2 nan + Rj, 3 nan + nanj."""
    c = 0
    if z.real != z.real:
        c = 2
    if z.imag != z.imag:
        c += 1
    return c


@pk.func
def _c_less(a, b):
    """a < b in numpy's order of complex values: by NaN class, then by real part, then by
    imaginary part (a NaN part never decides: its class is the same for both)."""
    ca = _c_class(a)
    cb = _c_class(b)
    r = ca < cb
    if ca == cb:
        r = a.real < b.real or (not b.real < a.real and a.imag < b.imag)
    return r


@functools.lru_cache(maxsize=None)
def _before(k_dt: DType, desc: bool) -> Func:
    """The comparison the network runs for keys of `k_dt`: (ka, ia) sorts before (kb, ib)
    in numpy's ascending order of the keys (`desc`: its reverse, so NaN first), ties by
    index, pads (index >= n) last."""
    LESS = _c_less if k_dt.is_complex else _real_less  # noqa: N806
    DESC = desc  # noqa: N806

    @pk.func
    def before(ka, ia, kb, ib, n):
        r = ia < ib
        if ia < n and ib < n:
            first, second = ka, kb
            if DESC:
                first, second = kb, ka
            if LESS(first, second):
                r = True
            elif LESS(second, first):
                r = False
        return r

    return before


@functools.lru_cache(maxsize=None)
def _block_kernel(x_dt: DType, k_dt: DType, v_dt: DType, block: int, threads: int, desc: bool,
                  load_x: bool, store_out: bool) -> pk.Kernel:
    """Sorts BLOCK-long chunks in shared memory, running the bitonic stages kmin..kmax (for
    stages beyond the chunk only their strides < BLOCK). Loads from x (padding past the row's
    end) or from the scratch arrays; stores to the outputs (positions < their length) or back
    to the scratch."""
    BLK = block  # noqa: N806
    T = threads  # noqa: N806
    HALF = block // 2  # noqa: N806
    G = max(T // HALF, 1)  # noqa: N806  rows per workgroup (tiny rows)
    PAIRS = max(HALF // T, 1)  # noqa: N806  compare-exchanges per invocation per step
    LOADS = max(BLK // T, 1) if G == 1 else 2  # noqa: N806
    LOAD_X, STORE_OUT = load_x, store_out  # noqa: N806
    BEFORE = _before(k_dt, desc)  # noqa: N806
    KD = k_dt  # noqa: N806

    @pk.func
    def compare_exchange(sk, si, a, b, up, n):
        """Puts the keys at a and b (and their indices) in order: ascending where `up`."""
        ka = sk[a]
        ia = si[a]
        kb = sk[b]
        ib = si[b]
        # pairs are distinct (indices differ): "a before b" is "not b before a"
        if BEFORE(kb, ib, ka, ia, n) == up:
            sk[a] = kb
            si[a] = ib
            sk[b] = ka
            si[b] = ia

    @pk.kernel(workgroup=(T, 1, 1))
    def bitonic_block(x: x_dt[:, :, :], keys: k_dt[:, :], idx: pk.i32[:, :],
                      vals: v_dt[:, :, :], inds: pk.i64[:, :, :], n: int, kmin: int, kmax: int,
                      rows: int):
        sk = pk.shared(KD, G * BLK)
        si = pk.shared(pk.i32, G * BLK)
        t = pk.local_id(0)
        sub = t // HALF if G > 1 else 0  # which of the workgroup's rows
        lt = t % HALF if G > 1 else t  # invocation index within its row
        chunks = 1
        if not LOAD_X or not STORE_OUT:
            chunks = keys.shape[1] // BLK
        g = pk.group_id(0)
        row = g * G + sub
        chunk = 0
        if G == 1:
            row = g // chunks
            chunk = g % chunks
        base = chunk * BLK  # position of this chunk in its row
        live = row < rows
        r = min(row, rows - 1)
        r1, r2 = pk.unravel(r, x.shape[:2])
        for q in range(LOADS):
            e = lt + q * T if G == 1 else lt + q * HALF
            pos = base + e
            kv: KD = 0
            iv = pos
            if LOAD_X:
                if pos < n:
                    kv = KD(x[r1, r2, pos])
            else:
                kv = keys[r, pos]
                iv = idx[r, pos]
            sk[sub * BLK + e] = kv
            si[sub * BLK + e] = iv
        pk.barrier()
        k = kmin
        while k <= kmax:
            j = min(k // 2, HALF)
            while j > 0:
                for q in range(PAIRS):
                    pr = lt + q * T
                    i = 2 * j * (pr // j) + pr % j
                    ll = i + j
                    up = ((base + i) & k) == 0
                    compare_exchange(sk, si, sub * BLK + i, sub * BLK + ll, up, n)
                pk.barrier()
                j = j // 2
            k = k * 2
        for q in range(LOADS):
            e = lt + q * T if G == 1 else lt + q * HALF
            pos = base + e
            if live:
                if STORE_OUT:
                    if pos < vals.shape[2]:
                        vals[r1, r2, pos] = sk[sub * BLK + e]
                        inds[r1, r2, pos] = si[sub * BLK + e]
                else:
                    keys[r, pos] = sk[sub * BLK + e]
                    idx[r, pos] = si[sub * BLK + e]

    return bitonic_block


@functools.lru_cache(maxsize=None)
def _global_step_kernel(k_dt: DType, desc: bool) -> pk.Kernel:
    BEFORE = _before(k_dt, desc)  # noqa: N806

    @pk.kernel
    def bitonic_global_step(keys: k_dt[:, :], idx: pk.i32[:, :], k: int, j: int, n: int):
        g = pk.global_id(0)
        half = keys.shape[1] // 2
        r = g // half
        pr = g % half
        i = 2 * j * (pr // j) + pr % j
        ll = i + j
        ka = keys[r, i]
        ia = idx[r, i]
        kb = keys[r, ll]
        ib = idx[r, ll]
        up = (i & k) == 0
        swap = BEFORE(kb, ib, ka, ia, n) == up
        if swap:
            keys[r, i] = kb
            idx[r, i] = ib
            keys[r, ll] = ka
            idx[r, ll] = ia

    return bitonic_global_step
