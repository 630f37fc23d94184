"""Which reductions run fused with their expression, and the work around the fused kernel.

A fused function whose one result is `expr.sum()`, `.prod()`, `.mean()`, `.max()` or `.min()`
over all axes or the last one runs `reduce_codegen`'s kernel: the expression is computed and
reduced without being written. Other reductions (other axes, several results, bool max/min,
integer means), and calls whose operands do not collapse to at most four dimensions, write
the expression with the elementwise kernel and reduce it with the library's reduction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pykern.fuse.codegen import Group
from pykern.fuse.nodes import Apply, Reduce
from pykern.ops.choice import config, on_host, tune
from pykern.ops.public import internal
from pykern.ops.registry import Impl, always
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.core import promotion as pr
from pykern.tensor.reduce import reduction
from pykern.tensor.core import strided
from pykern.tensor.core.tensor import Tensor
from pykern.fuse.trace import input_tensor
from pykern.tensor.elementwise import functions as ew


# where the fused reduction's kernel runs a chunk per invocation or per workgroup (the
# implementation's `kernel` is reduce_codegen's mode), and its sizes: a workgroup of `wg`
# invocations reduces `wg * group_share` elements at most, an invocation `thread_chunk`
FUSED_REDUCE = internal(
    "fused_reduce", "reduction", "A reduction fused with the expression it reduces.",
    Impl("thread", on_host, "an invocation per chunk, no shared memory or barrier (a barrier "
         "costs more than a loop on the host)", kernel="thread"),
    Impl("group", always, "a workgroup per chunk, neighbouring invocations reading "
         "neighbouring elements, a tree in shared memory", kernel="group"))
tune("fused_reduce", lambda info: {"wg": 64, "group_share": 256, "thread_chunk": 4096})


def fusable(node: object) -> bool:
    """Whether `node` is a reduction the fused kernel runs (for some layouts of its inputs)."""
    if not isinstance(node, Reduce) or not isinstance(node.x, Apply):
        return False
    x = node.x
    axes = reduction.normalize_axes(node.axis, len(x.shape))
    if axes not in (tuple(range(len(x.shape))), (len(x.shape) - 1,)):
        return False
    if node.op in ("max", "min"):
        return x.dtype != dt.bool_
    if node.op == "mean":
        return x.dtype.is_float
    return True


@dataclass(frozen=True)
class Spec:
    """The sizes and types of one fused reduction call."""

    op: str  # the kernel's combining op: sum, prod, max or min (mean sums)
    acc: DType
    n_out: int
    n_red: int
    n_chunks: int
    mode: str  # reduce_codegen's: "group" or "thread"
    chunk: int  # elements of one partial at most
    wg: int  # invocations per workgroup in "group" mode

    @property
    def grid(self) -> int:
        return self.n_out * self.n_chunks * (self.wg if self.mode == "group" else 1)


def layout(node: Reduce, group: Group, tensors: Sequence[Tensor]) -> strided.Launch | None:
    """The operands of the expression viewed flat (nd=1) or as 4-D, in row-major element
    order; None where there is nothing to reduce or more than four dimensions remain."""
    shape = node.x.shape
    if strided.prod(shape) == 0:
        return None  # empty reductions: the library's rules (0, 1, nan or an error)
    ins = [input_tensor(i, tensors).broadcast_to(shape) for i in group.inputs]
    jobs = list(strided.plan(shape, [*ins, Tensor(None, shape, node.x.dtype)]))
    if len(jobs) != 1:
        return None
    job = jobs[0]
    return strided.Launch(job.nd, job.views[:-1], job.n)


def spec(node: Reduce, job: strided.Launch, info: object) -> Spec:
    """The sizes and types of the fused reduction of `node` over `job`'s operands on the
    device `info` describes."""
    x = node.x
    axes = reduction.normalize_axes(node.axis, len(x.shape))
    n_red = strided.prod([x.shape[a] for a in axes])
    n_out = job.n // n_red
    if node.op in ("sum", "prod"):
        acc = pr.accumulator(node.dtype)
    elif node.op == "mean":
        acc = pr.compute_float(x.dtype)
    else:
        acc = pr.compute_dtype(x.dtype)
    op = "sum" if node.op == "mean" else node.op
    mode = FUSED_REDUCE.choose(info).kernel
    cfg = config("fused_reduce", info)
    chunk = cfg.wg * cfg.group_share if mode == "group" else cfg.thread_chunk
    return Spec(op, acc, n_out, n_red, strided.cdiv(n_red, chunk), mode, chunk, cfg.wg)


def finish(node: Reduce, s: Spec, part: Tensor) -> Tensor:
    """The result from the kernel's partials: combined per output by the library where an
    output had several chunks, divided for a mean, in the result's dtype and shape."""
    result = part
    if s.n_chunks > 1:
        rows = part.reshape(s.n_out, s.n_chunks)
        if s.op in ("max", "min"):
            result = reduction.max(rows, axis=-1) if s.op == "max" else \
                reduction.min(rows, axis=-1)
        else:
            result = (reduction.sum if s.op == "sum" else reduction.prod)(rows, axis=-1,
                                                                         dtype=s.acc)
    if node.op == "mean":
        result = ew.divide(result, float(s.n_red))
    return result.astype(node.dtype, copy=False).reshape(node.shape)
