"""Prefix sums and products: `cumsum`, `cumprod`.

Short rows are scanned one row per invocation, in order — for f32, f64 and integers this is
numpy's own order of additions, so results match numpy's bit for bit. (Up to 64 elements on
GPUs; on CPU devices up to 256, or 8,192 when there are 2,048 rows or more: the configuration
`config("cumsum")`.) Long rows use a three-phase blocked scan: each workgroup reduces a block
of `threads` × `per_thread` elements to its sum, the block sums of every row are scanned (by
this same function, recursively), and each workgroup then scans its block (sequentially per
invocation, a Hillis-Steele scan over the invocations' totals in shared memory) starting from
the carry of the blocks before it.
"""

import functools
from collections.abc import Callable
from typing import Any

import pykern as pk

from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad
from pykern.ops.public import declare, torch_names
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.elementwise.binary_ops import add_f, multiply_f
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.reduce.reduction import sum_dtype
from pykern.tensor.core.device_limits import loop_budget
from pykern.ops.choice import config, device_info, on_cpu, tune
from pykern.ops.registry import Impl, always, get
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.complex import complex_layout
from pykern.tensor.core.promotion import accumulator
from pykern.tensor.core.strided import batch_pieces, cdiv, prod, view
from pykern.tensor.core.tensor import normalize_axis
from pykern.tensor.core.workgroup import merge_halving

SCAN_DTYPES = (dt.bool_, dt.i8, dt.i16, dt.i32, dt.i64, dt.u8, dt.u16, dt.u32, dt.u64, dt.f16,
               dt.f32, dt.f64, dt.bf16)


def _scan_config(info: object) -> dict[str, int]:
    """Rows up to `row_max` elements are scanned one per invocation, and so are rows up to
    `many_row_max` where there are `many_rows` or more. CPU devices have few cores: a row per
    invocation keeps them all busy; on GPUs it reads uncoalesced and leaves the GPU idle. The
    blocked scan's workgroups have `threads` invocations of `per_thread` elements each."""
    rows = {"row_max": 256, "many_rows": 2048, "many_row_max": 8192} if on_cpu(info) else \
        {"row_max": 64, "many_rows": 0, "many_row_max": 0}
    return {**rows, "threads": 256, "per_thread": 4}


tune("cumsum", _scan_config)


def _in_order(info: object, length: int, rows: int, budget: int | None) -> bool:
    """Whether rows of `length` (`rows` of them) are scanned one per invocation: short rows,
    where the device's loop budget allows a whole row."""
    cfg = config("cumsum", info)
    short = length <= cfg.row_max or (rows >= cfg.many_rows and length <= cfg.many_row_max)
    return short and (budget is None or length <= budget)


SCANS = (Impl("one row per invocation", _in_order, "short rows in order: numpy's own order of "
              "additions"),
         Impl("blocked", always, "three phases: block sums, their scan (recursively), each "
              "block scanned from its carry"))


def cumsum(x: object, axis: int | None = None, dtype: object = None) -> Tensor:
    """Cumulative sum along `axis` (numpy's `cumsum`; `axis=None` scans the flattened tensor).
    The result dtype is `dtype` when given, else that of `pk.sum`: i32 for bool and signed
    integers up to 32 bits, u32 for unsigned ones, i64 and u64 for those, the input's own for
    floats. Integer sums wrap. f16 sums are kept
    in f32 and rounded once per output (numpy rounds after every addition). Every dtype.

        pk.cumsum(x, axis=0)
    """
    op = "cumsum"
    x = as_tensor(x, f"{op}: x")
    if x.dtype.is_complex or (dtype is not None and dt.as_dtype(dtype).is_complex):
        return complex_layout.cumsum(x, axis, dtype)  # a real scan of the part view
    if x.dtype not in SCAN_DTYPES:
        raise TypeError(f"{op}: unsupported dtype {x.dtype.name}")
    out_dtype = sum_dtype(x.dtype) if dtype is None else dt.as_dtype(dtype)
    if axis is None:
        flat = x.contiguous()
        out = empty((x.size,), out_dtype)
        if out.size:
            _scan(view(flat, (x.size,), (1,)), out, 0)
        return out
    if x.ndim == 0:
        raise ValueError(f"{op}: x is 0-d; use axis=None")
    axis = normalize_axis(axis, x.ndim, op=op)
    out = empty(x.shape, out_dtype)
    if out.size:
        _scan(x, out, axis)
    return out


def cumprod(x: object, axis: int | None = None, dtype: object = None) -> Tensor:
    """Cumulative product along `axis` (numpy's `cumprod`; `axis=None` scans the flattened
    tensor), with `pk.cumsum`'s dtypes (integer products wrap) and the same scans; complex
    tensors too. No gradient yet (NotImplementedError where one is needed).

        pk.cumprod(x, axis=0)
    """
    op = "cumprod"
    x = as_tensor(x, f"{op}: x")
    if x.dtype not in SCAN_DTYPES and not x.dtype.is_complex:
        raise TypeError(f"{op}: unsupported dtype {x.dtype.name}")
    out_dtype = sum_dtype(x.dtype) if dtype is None else dt.as_dtype(dtype)
    if axis is None:
        x = view(x.contiguous(), (x.size,), (1,))
        axis = 0
    elif x.ndim == 0:
        raise ValueError(f"{op}: x is 0-d; use axis=None")
    axis = normalize_axis(axis, x.ndim, op=op)
    out = empty(x.shape, out_dtype)
    if out.size:
        _scan(x, out, axis, multiply_f)
    return out


def _cumsum_backward(forward: Callable[..., Tensor], x: Any, axis: int | None = None,
                     dtype: object = None) -> Tensor:
    """cumsum recorded: the gradient is the reversed cumulative sum of g (axis=None: of the
    flattened tensor, reshaped by the recorded reshape)."""
    x = as_tensor(x, "cumsum: x")
    if x.dtype.is_complex or (dtype is not None and dt.as_dtype(dtype).is_complex):
        return forward(x, axis, dtype)  # a real scan of the part view, recorded there
    if axis is None:
        return _cumsum_backward(forward, x.reshape(-1), 0, dtype)
    with no_grad():
        out = forward(x, axis, dtype)
    if not out.dtype.is_float:  # dtype= an integer type: nothing to differentiate
        return out
    return record("cumsum", out, (x,),
                  lambda g: (cumsum(g.flip(axis), axis=axis).flip(axis),))


cumsum = declare(cumsum, "scan", grad="rule", backward=_cumsum_backward, complex_grad=True,
                 implementations=SCANS,
                 aliases=torch_names("cumsum", "aten::cumsum", numpy="cumsum",
                                     array_api="cumulative_sum"))
cumprod = declare(cumprod, "scan", grad="refused", implementations=SCANS,
                  aliases=torch_names("cumprod", "aten::cumprod", numpy="cumprod",
                                      array_api="cumulative_prod"))


def _identity(op: Func) -> int:
    """The start of a scan with `op`: 0 for sums, 1 for products."""
    return 1 if op is multiply_f else 0


def _scan(x: Tensor, out: Tensor, axis: int, op: Func | None = None) -> None:
    """out = inclusive prefix sums (or, with `op=multiply_f`, products) of x along axis (same
    shapes)."""
    op = add_f if op is None else op
    length = x.shape[axis]
    rest = x.shape[:axis] + x.shape[axis + 1:]
    rows = prod(rest)
    strides = ([x.element_strides[:axis] + x.element_strides[axis + 1:],
                out.element_strides[:axis] + out.element_strides[axis + 1:]]
               if rest else [(0,), (0,)])
    info = device_info("cumsum")
    sequential = get("cumsum").choose(info, length, rows, loop_budget()) is SCANS[0]
    cfg = config("cumsum", info)
    block = cfg.threads * cfg.per_thread
    acc = accumulator(out.dtype)
    for deltas, shape, (sx, so) in batch_pieces(rest or (1,), strides, 3):
        xv = view(x, shape + (length,), sx + (x.element_strides[axis],), x.offset + deltas[0])
        ov = view(out, shape + (length,), so + (out.element_strides[axis],),
                  out.offset + deltas[1])
        n = prod(shape)
        if sequential:
            _sequential_kernel(x.dtype, out.dtype, acc, op)[n](xv, ov)
            continue
        nblocks = cdiv(length, block)
        sums = empty(shape + (nblocks,), acc)
        sizes = (cfg.threads, cfg.per_thread)
        _block_sum_kernel(x.dtype, acc, op, *sizes)[cfg.threads * nblocks, n](xv, sums)
        carries = empty(shape + (nblocks,), acc)
        _scan(sums, carries, 3, op)  # inclusive scan of the block totals of each row
        kern = _block_scan_kernel(x.dtype, out.dtype, acc, op, *sizes)
        kern[cfg.threads * nblocks, n](xv, carries, ov)


@functools.lru_cache(maxsize=None)
def _sequential_kernel(x_dt: DType, o_dt: DType, acc_dt: DType, op: Func = add_f
                       ) -> pk.Kernel:
    ACC = acc_dt  # noqa: N806
    START = _identity(op)  # noqa: N806

    @pk.kernel
    def cumsum_rows(x: x_dt[:, :, :, :], out: o_dt[:, :, :, :]):
        r = pk.global_id(0)
        i0, i1, i2 = pk.unravel(r, x.shape[:3])
        s: ACC = START
        for j in range(x.shape[3]):
            s = op(s, ACC(o_dt(x[i0, i1, i2, j])))
            out[i0, i1, i2, j] = s

    return cumsum_rows


@pk.func
def block_share(x, threads, per_thread):
    """Where this invocation's share of the blocked scan lies: row global_id(1) of `x`
    (unravelled: i0, i1, i2), and the first of its `per_thread` elements in block
    group_id(0) of `threads` * `per_thread` elements."""
    i0, i1, i2 = pk.unravel(pk.global_id(1), x.shape[:3])
    start = pk.group_id(0) * (threads * per_thread) + pk.local_id(0) * per_thread
    return i0, i1, i2, start


@functools.lru_cache(maxsize=None)
def _block_sum_kernel(x_dt: DType, acc_dt: DType, op: Func, threads: int, per_thread: int
                      ) -> pk.Kernel:
    ACC = acc_dt  # noqa: N806
    START = _identity(op)  # noqa: N806
    T = threads  # noqa: N806
    P = per_thread  # noqa: N806
    O_DT = acc_dt  # noqa: N806

    @pk.func
    def fold(parts, i, j):
        parts[0, i] = op(parts[0, i], parts[0, j])

    @pk.kernel(workgroup=(T, 1, 1))
    def cumsum_block_sums(x: x_dt[:, :, :, :], sums: acc_dt[:, :, :, :]):
        buf = pk.shared(ACC, (1, T))
        t = pk.local_id(0)
        i0, i1, i2, start = block_share(x, T, P)
        s: ACC = START
        for e in range(P):
            if start + e < x.shape[3]:
                s = op(s, ACC(O_DT(x[i0, i1, i2, start + e])))
        buf[0, t] = s
        merge_halving(fold, buf, t, T)
        if t == 0:
            sums[i0, i1, i2, pk.group_id(0)] = buf[0, 0]

    return cumsum_block_sums


@functools.lru_cache(maxsize=None)
def _block_scan_kernel(x_dt: DType, o_dt: DType, acc_dt: DType, op: Func, threads: int,
                       per_thread: int) -> pk.Kernel:
    ACC = acc_dt  # noqa: N806
    START = _identity(op)  # noqa: N806
    T = threads  # noqa: N806
    P = per_thread  # noqa: N806
    LEVELS = threads.bit_length() - 1  # noqa: N806

    @pk.kernel(workgroup=(T, 1, 1))
    def cumsum_block_scan(x: x_dt[:, :, :, :], carries: acc_dt[:, :, :, :],
                          out: o_dt[:, :, :, :]):
        buf = pk.shared(ACC, (2, T))
        vals = pk.local(ACC, P)
        t = pk.local_id(0)
        b = pk.group_id(0)
        i0, i1, i2, start = block_share(x, T, P)
        length = x.shape[3]
        s: ACC = START
        for e in range(P):
            v: ACC = START
            if start + e < length:
                v = ACC(o_dt(x[i0, i1, i2, start + e]))
            s = op(s, v)
            vals[e] = s
        # inclusive Hillis-Steele scan of the invocations' totals, double-buffered
        buf[0, t] = s
        pk.barrier()
        for level in range(LEVELS):
            src = level % 2
            d = 1 << level
            v2 = buf[src, t]
            if t >= d:
                v2 = op(buf[src, t - d], v2)
            buf[1 - src, t] = v2
            pk.barrier()
        before: ACC = START
        if t > 0:
            before = buf[LEVELS % 2, t - 1]
        if b > 0:
            before = op(carries[i0, i1, i2, b - 1], before)
        for e in range(P):
            if start + e < length:
                out[i0, i1, i2, start + e] = op(before, vals[e])

    return cumsum_block_scan
