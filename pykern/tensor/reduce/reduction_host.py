"""Reductions on the host device: kernels without barriers whose inner loops LLVM vectorises.

The problem is reduction.py's: `n_out` outputs of `n_red` elements, element r of output o at
x[o, r] of a 2-D view or x[o * n_red + r] of a flat one. Each invocation keeps LANES partial
results in a `pk.local` array, and its innermost loop runs over consecutive elements with the
loop variable as the index, one element per lane, so LLVM turns it into vector loads and
vector combines (reduction.py's `combine`, passed in) where the elements are contiguous:

- "rows" (the reduced axis contiguous, or a flat view): an invocation reduces a chunk of up
  to `row_chunk` elements of one output; lane l takes elements l, l + `lanes`, ... of it, and
  the lanes are merged by a tree at the end (at most row_chunk / lanes elements in series,
  then log2(lanes) levels: a blocked pairwise sum).
- "columns" (the kept axis contiguous, the reduced one strided: a column sum): an invocation
  reduces up to `column_chunk` rows for `column_lanes` neighbouring outputs, a lane per output
  (rows of 4 KiB: long enough runs for the hardware prefetcher).

The sizes are the host's configuration (`sizes`, part of `config("reduce")`).

Outputs with more than one chunk write partial results (output o's chunk c to slot
o * n_chunks + c, as reduction.py's kernels do), which the next stage reduces as "rows".
max/min start every lane from the chunk's first element (they are idempotent), the others
from the op's identity.
"""

import functools
from typing import Any

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.core.strided import cdiv
from pykern.tensor.core.tensor import Tensor

OPS = ("sum", "sqdev", "prod", "max", "min", "any", "all")


def sizes(info: object) -> dict[str, int]:
    """The host kernels' sizes: `lanes` partial results per invocation in "rows", each
    invocation reducing `row_chunk` elements of one output at most; `column_lanes` outputs per
    invocation in "columns" (4 KiB of f32 rows), `column_chunk` rows each (a lane adds them in
    series)."""
    return {"lanes": 256, "row_chunk": 1024, "column_lanes": 1024, "column_chunk": 64}


def mode_for(op: str, x: Tensor, layout: str) -> str | None:
    """The host kernel for one stage ("rows", "columns"), or None where reduction.py's own
    kernels run (argmax/argmin, 4-D views)."""
    if op not in OPS or layout == "4d":
        return None
    if layout == "2d" and x.element_strides[1] != 1 and x.element_strides[0] == 1:
        return "columns"
    return "rows"


def stage(mode: str, combine: Func, op: str, acc: DType, x: Tensor, layout: str, m: Tensor,
          dst: Tensor, n_out: int, n_red: int, den: float, fin: str, cfg: Any) -> None:
    """One stage: `dst` receives `chunks(mode, n_red, cfg)` results per output (`cfg` the
    sizes of `sizes`)."""
    n_chunks = chunks(mode, n_red, cfg)
    if mode == "rows":
        kern = _rows_kernel(acc, combine, cfg.lanes, cfg.row_chunk)
        kern[n_out * n_chunks](x, m, dst, n_red, n_chunks, den, op, layout, fin)
    else:
        grid = cdiv(n_out, cfg.column_lanes) * n_chunks
        kern = _columns_kernel(acc, combine, cfg.column_lanes, cfg.column_chunk)
        kern[grid](x, m, dst, n_chunks, den, op, fin)


def chunks(mode: str, n_red: int, cfg: Any) -> int:
    """How many partial results per output a stage of `mode` leaves."""
    return cdiv(n_red, cfg.row_chunk if mode == "rows" else cfg.column_chunk)


@pk.func
def element(x, o, q, m, op, layout):
    """The value reduced for element q of output o (q absolute in a flat view), as the
    accumulator's type: squared deviation from m[o] for "sqdev", 0 or 1 for any/all."""
    if layout == "flat":
        v = x[q]
    else:
        v = x[o, q]
    if op == "any" or op == "all":
        return pk.bool_(v)
    if op == "sqdev":
        d = m.dtype(v) - m[o]
        return d * d
    return v


@pk.func
def identity(op, first):
    """Where every lane starts: the op's identity, or the chunk's first element."""
    if op == "sum" or op == "sqdev" or op == "any":
        return 0
    elif op == "prod" or op == "all":
        return 1
    return first


@pk.func
def finish(v, den, fin):
    if fin == "mean" or fin == "var":
        return v / den
    elif fin == "std":
        return pk.sqrt(v / den)
    return v


@functools.lru_cache(maxsize=None)
def _rows_kernel(acc: DType, combine: Func, n_lanes: int, row_chunk: int) -> pk.Kernel:
    ACC = acc  # noqa: N806
    LANES, ROW_CHUNK = n_lanes, row_chunk  # noqa: N806

    @pk.kernel
    def reduce_rows(x: pk.Array, m: pk.Array, out: pk.Array, n_red: int, n_chunks: int,
                    den: ACC, op: pk.constexpr, layout: pk.constexpr, fin: pk.constexpr):
        g = pk.global_id(0)
        o = g // n_chunks
        start = (g % n_chunks) * ROW_CHUNK
        count = min(ROW_CHUNK, n_red - start)
        lo = start
        if layout == "flat":
            lo = o * n_red + start  # flat views index absolutely
        width = 1  # lanes in use: a power of two, at least count where it can be
        while width < count and width < LANES:
            width *= 2
        lanes = pk.local(ACC, LANES)
        init = ACC(identity(op, ACC(element(x, o, lo, m, op, layout))))
        for t in range(width):
            lanes[t] = init
        for q0 in range(lo, lo + count, LANES):
            for q in range(q0, min(q0 + LANES, lo + count)):
                lanes[q - q0] = combine(lanes[q - q0], ACC(element(x, o, q, m, op, layout)),
                                        op)
        step = width // 2
        while step > 0:
            for t in range(step):
                lanes[t] = combine(lanes[t], lanes[t + step], op)
            step //= 2
        out[g] = finish(lanes[0], den, fin)

    return reduce_rows


@functools.lru_cache(maxsize=None)
def _columns_kernel(acc: DType, combine: Func, n_lanes: int, n_rows: int) -> pk.Kernel:
    ACC = acc  # noqa: N806
    COLUMN_LANES, COLUMN_CHUNK = n_lanes, n_rows  # noqa: N806

    @pk.kernel
    def reduce_columns(x: pk.Array, m: pk.Array, out: pk.Array, n_chunks: int, den: ACC,
                       op: pk.constexpr, fin: pk.constexpr):
        # invocation g: outputs [o0, o0 + COLUMN_LANES) over chunk c of the rows; neighbours
        # take neighbouring outputs of the same rows
        n_out = x.shape[0]
        blocks = pk.grid(0) // n_chunks
        g = pk.global_id(0)
        o0 = (g % blocks) * COLUMN_LANES
        c = g // blocks
        start = c * COLUMN_CHUNK
        stop = min(start + COLUMN_CHUNK, x.shape[1])
        o1 = min(o0 + COLUMN_LANES, n_out)
        lanes = pk.local(ACC, COLUMN_LANES)
        for o in range(o0, o1):
            lanes[o - o0] = ACC(identity(op, ACC(element(x, o, start, m, op, "2d"))))
        for r in range(start, stop):
            for o in range(o0, o1):
                lanes[o - o0] = combine(lanes[o - o0], ACC(element(x, o, r, m, op, "2d")), op)
        for o in range(o0, o1):
            out[o * n_chunks + c] = finish(lanes[o - o0], den, fin)

    return reduce_columns
