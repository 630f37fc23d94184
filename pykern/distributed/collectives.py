"""The collectives, with torch.distributed's names and arguments: `all_reduce`, `broadcast`,
`all_gather` (and `all_gather_into_tensor`), `reduce_scatter` (and `reduce_scatter_tensor`),
`barrier`.

Each takes pykern tensors of any device, contiguous or not, and returns once the result is in
them (as torch's with `async_op=False`). Each first checks that every rank called the same
collective on tensors of the same shape and dtype (signature.py), then moves the data through
MPI, non-blocking and polled with the group's deadline. A tensor of the host device is given
to MPI in place; one of a GPU is staged through host memory in pieces that overlap the
transfers (pipeline.py). They run outside autograd: the result is written in place, counted
as a write (version counter) as any in-place op is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

import pykern as pk
from pykern.distributed import pipeline, signature
from pykern.distributed.group import ProcessGroup, default_group
from pykern.distributed.reduce_op import ReduceOp
from pykern.distributed.staging import Staged, read, wire_dtype, write_all
from pykern.distributed.waiting import wait_for
from pykern.errors import GraphError
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.core.tensor import Tensor


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> None:
    """Replaces `tensor`, on every rank, by the reduction (`op`) of all ranks' `tensor`s."""
    g = _begin("all_reduce", group, async_op, tensor)
    mpi_op = _op(op).mpi_op(g.MPI, tensor.dtype)
    signature.check(g, "all_reduce", tensor, op)
    if tensor.size == 0:
        return
    after = _averaging(g.size) if op is ReduceOp.AVG else None
    with _contiguous(tensor) as target:
        stage = Staged(target)
        pipeline.run(g, "all_reduce", stage,
                     lambda piece: g.comm.Iallreduce(g.MPI.IN_PLACE, piece, mpi_op), after)
        stage.written()


def broadcast(tensor: Tensor, src: int = 0, group: ProcessGroup | None = None,
              async_op: bool = False) -> None:
    """Copies rank `src`'s `tensor` into `tensor` on every other rank."""
    g = _begin("broadcast", group, async_op, tensor)
    _check_rank(g, src, "broadcast: src")
    signature.check(g, "broadcast", tensor, root=src)
    if tensor.size == 0:
        return
    sender = g.rank == src
    with _contiguous(tensor, keep_values=sender) as target:
        stage = Staged(target)
        pipeline.run(g, "broadcast", stage, lambda piece: g.comm.Ibcast(piece, root=src),
                     fetch=sender, store=not sender)
        if not sender:
            stage.written()


def all_gather(tensor_list: Sequence[Tensor], tensor: Tensor,
               group: ProcessGroup | None = None, async_op: bool = False) -> None:
    """Fills `tensor_list[r]` with rank r's `tensor`, for every rank r, on every rank."""
    g = _begin("all_gather", group, async_op, tensor)
    _check_list(g, "all_gather: tensor_list", tensor_list, tensor)
    signature.check(g, "all_gather", tensor, count=len(tensor_list))
    gathered = _gather(g, tensor)
    for out, values in zip(tensor_list, gathered):
        write_all(out, values)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None, async_op: bool = False) -> None:
    """`output_tensor` (world size times as many elements as `input_tensor`, same dtype)
    becomes every rank's `input_tensor`, in rank order (flat, then in its own shape)."""
    g = _begin("all_gather_into_tensor", group, async_op, input_tensor, output_tensor)
    _check_sizes(g, "all_gather_into_tensor", output_tensor, input_tensor)
    signature.check(g, "all_gather", input_tensor, extra="into_tensor")
    write_all(output_tensor, _gather(g, input_tensor).reshape(-1))


def reduce_scatter(output: Tensor, input_list: Sequence[Tensor], op: ReduceOp = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> None:
    """`output` becomes the reduction (`op`) over all ranks of their `input_list[rank]`."""
    g = _begin("reduce_scatter", group, async_op, output, *input_list)
    _check_list(g, "reduce_scatter: input_list", input_list, output)
    mpi_op = _op(op).mpi_op(g.MPI, output.dtype)
    signature.check(g, "reduce_scatter", output, op, count=len(input_list))
    send = np.empty((g.size, output.size), wire_dtype(output.dtype))
    for r, t in enumerate(input_list):
        _read_whole(t, send[r])
    _scatter(g, output, send, mpi_op, op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,
                          group: ProcessGroup | None = None, async_op: bool = False) -> None:
    """`output` becomes the reduction (`op`) over all ranks of their `input`'s block `rank`
    (`input` holds world size times as many elements, flat in rank order)."""
    g = _begin("reduce_scatter_tensor", group, async_op, output, input)
    _check_sizes(g, "reduce_scatter_tensor", input, output)
    mpi_op = _op(op).mpi_op(g.MPI, output.dtype)
    signature.check(g, "reduce_scatter", output, op, extra="tensor")
    send = np.empty(input.size, wire_dtype(input.dtype))
    _read_whole(input, send)
    _scatter(g, output, send.reshape(g.size, output.size), mpi_op, op)


def barrier(group: ProcessGroup | None = None, async_op: bool = False) -> None:
    """Returns once every rank has called barrier()."""
    g = _begin("barrier", group, async_op)
    signature.check(g, "barrier")  # an allgather: no rank gets past it before all arrive


# ------------------------------------------------------------------ helpers


def _begin(what: str, group: ProcessGroup | None, async_op: bool, *tensors: Any
           ) -> ProcessGroup:
    """The group, checked usable, after checking the arguments."""
    g = group if group is not None else default_group(f"{what}()")
    g.check_usable()
    if async_op:
        raise NotImplementedError(f"{what}(async_op=True): pykern's collectives return when "
                                  "done (DistributedDataParallel overlaps its own)")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: expected pk.Tensor arguments, got {type(t).__name__}")
        if getattr(t.device, "graph_recording", False):
            raise GraphError(f"{what} inside pk.graph(): a graph replays device work only; "
                             "communicate outside the recorded block")
    return g


def _op(op: object) -> ReduceOp:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a pykern.distributed.ReduceOp, not {op!r}")
    return op


def _check_rank(g: ProcessGroup, rank: object, what: str) -> None:
    if not isinstance(rank, int) or not 0 <= rank < g.size:
        raise ValueError(f"{what}={rank!r} is not a rank of a group of {g.size}")


def _check_list(g: ProcessGroup, what: str, tensors: Sequence[Tensor], like: Tensor) -> None:
    if len(tensors) != g.size:
        raise ValueError(f"{what} has {len(tensors)} tensors; the group has {g.size} ranks")
    for t in tensors:
        if tuple(t.shape) != tuple(like.shape) or t.dtype != like.dtype:
            raise ValueError(f"{what}: a {t.dtype.name} tensor of shape {tuple(t.shape)} "
                             f"where {like.dtype.name} {tuple(like.shape)} is expected")


def _check_sizes(g: ProcessGroup, what: str, whole: Tensor, part: Tensor) -> None:
    if whole.dtype != part.dtype or whole.size != g.size * part.size:
        raise ValueError(f"{what}: the larger tensor must hold {g.size} (world size) times "
                         f"the elements of the other, of the same dtype; got "
                         f"{whole.dtype.name} {tuple(whole.shape)} and {part.dtype.name} "
                         f"{tuple(part.shape)}")


def _averaging(size: int) -> Any:
    def divide(piece: np.ndarray) -> None:
        np.divide(piece, size, out=piece)
    return divide


@contextmanager
def _contiguous(t: Tensor, keep_values: bool = True) -> Iterator[Tensor]:
    """`t` itself where contiguous, else a contiguous copy written back into it at the end."""
    if t.is_contiguous:
        yield t
        return
    with pk.no_grad():
        copy = t.detach().contiguous() if keep_values else pk.empty(t.shape, t.dtype)
    yield copy
    with pk.no_grad():
        assign(t.detach(), copy)


def _read_whole(t: Tensor, out: np.ndarray) -> None:
    """`out` (1-D, wire dtype) filled with `t`'s elements in row-major order."""
    if t.is_contiguous:
        read(t, out)
    else:
        read(t.detach().contiguous(), out)


def _gather(g: ProcessGroup, tensor: Tensor) -> np.ndarray:
    """Every rank's `tensor` as rows of a host array of the wire dtype."""
    send = np.empty(tensor.size, wire_dtype(tensor.dtype))
    _read_whole(tensor, send)
    received = np.empty((g.size, tensor.size), send.dtype)
    if tensor.size:
        request = g.comm.Iallgather(send, received)
        wait_for(g, "all_gather", request.Test, (send, received))
    return received


def _scatter(g: ProcessGroup, output: Tensor, send: np.ndarray, mpi_op: Any,
             op: ReduceOp) -> None:
    """`output` = the reduction of row `rank` of every rank's `send`."""
    received = np.empty(output.size, send.dtype)
    if output.size:
        request = g.comm.Ireduce_scatter_block(send, received, mpi_op)
        wait_for(g, "reduce_scatter", request.Test, (send, received))
        if op is ReduceOp.AVG:
            np.divide(received, g.size, out=received)
    write_all(output, received)
