"""The check that every rank calls the same collective on tensors of the same shape and dtype.

Before its data moves, each collective exchanges one small record per rank (an allgather of
16 integers): how many collectives this rank made on the group before, which one this is,
its reduce op and root, and the tensor's dtype and shape. Where the records differ, every rank
sees the same table and raises the same `pk.DistributedError` naming what each rank passed,
instead of letting MPI combine mismatched buffers, truncate them, or wait forever. The cost is
one small message per collective (microseconds on one machine).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from pykern.distributed.reduce_op import ReduceOp
from pykern.distributed.waiting import wait_for
from pykern.errors import DistributedError
from pykern.lang import dtypes as dt

FIELDS = 16
SHOWN_DIMS = 6  # shapes of up to this many dimensions are shown; longer ones by a checksum
KINDS = ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier",
         "DistributedDataParallel")
_DTYPE_NAMES = {zlib.crc32(d.name.encode()): d.name
                for d in (*dt.ALL_DTYPES, *dt.COMPLEX_DTYPES)}
_OP_NAMES = {zlib.crc32(op.name.encode()): op.name for op in ReduceOp}


def code(text: str) -> int:
    """A number for `text`, the same in every process (unlike hash())."""
    return zlib.crc32(text.encode())


def record(sequence: int, kind: str, tensor: Any = None, op: Any = None, root: int = -1,
           count: int = 0, extra: str = "") -> np.ndarray:
    """This rank's record of a collective: `count` is the length of a tensor list, `extra`
    any other text that must agree (checked by checksum)."""
    rec = np.full(FIELDS, -1, np.int64)
    rec[0], rec[1], rec[2] = sequence, KINDS.index(kind), code(op.name) if op else 0
    rec[3], rec[4], rec[5] = root, count, code(extra)
    if tensor is not None:
        shape = tuple(tensor.shape)
        rec[6], rec[7], rec[8] = code(tensor.dtype.name), len(shape), code(repr(shape))
        rec[9:9 + min(len(shape), SHOWN_DIMS)] = shape[:SHOWN_DIMS]
    return rec


def check(group: Any, kind: str, tensor: Any = None, op: Any = None, root: int = -1,
          count: int = 0, extra: str = "", describe_extra: str = "") -> None:
    """Exchanges the records of this collective; DistributedError (on every rank) where they
    differ."""
    mine = record(group.sequence, kind, tensor, op, root, count, extra)
    table = np.empty((group.size, FIELDS), np.int64)
    request = group.comm.Iallgather(mine, table)
    wait_for(group, f"{kind} (the check that every rank calls it alike)", request.Test,
             keep=(mine, table))
    group.sequence += 1
    if (table == mine).all():
        return
    mine_text = _describe(mine, tensor, op, describe_extra)
    lines = []
    for rank, rec in enumerate(table):
        text = mine_text if (rec == mine).all() else _describe(rec)
        lines.append(f"  rank {rank}: {text}")
    raise DistributedError(f"rank {group.rank}: the ranks called collectives that do not "
                           f"match (each must call the same ones, in the same order, on "
                           f"tensors of the same shape and dtype):\n" + "\n".join(lines))


def _describe(rec: np.ndarray, tensor: Any = None, op: Any = None, extra: str = "") -> str:
    """What a record says, in words (this rank's own from its arguments)."""
    kind = KINDS[int(rec[1])] if 0 <= rec[1] < len(KINDS) else f"collective #{rec[1]}"
    text = f"collective #{int(rec[0]) + 1}: {kind}"
    if op is not None or rec[2] != 0:
        text += f"({op.name if op is not None else _OP_NAMES.get(int(rec[2]), '?')})"
    if rec[3] >= 0:
        text += f" root {int(rec[3])}"
    if rec[4] > 0:
        text += f" of a list of {int(rec[4])}"
    if tensor is not None:
        text += f", a {tensor.dtype.name} tensor of shape {tuple(tensor.shape)}"
    elif rec[6] >= 0:
        ndim = int(rec[7])
        dims = tuple(int(d) for d in rec[9:9 + min(ndim, SHOWN_DIMS)])
        shape = repr(dims) if ndim <= SHOWN_DIMS else f"{ndim}-d, starting {dims}"
        text += f", a {_DTYPE_NAMES.get(int(rec[6]), 'other')} tensor of shape {shape}"
    if extra:
        text += f", {extra}"
    return text
