"""A tensor's elements on the host, where MPI can reach them, and back.

MPI moves host memory. A tensor of the host device already lives there: a contiguous one of
a dtype MPI has is handed to MPI as it is (a numpy view of its memory, no copy). Any other is
staged: its elements are read into a host array of the "wire" dtype, reduced there, and
written back. float16 and bfloat16, which MPI lacks, travel as float32 (a sum is rounded once,
at the end). A large tensor is staged in pieces, so that the copy of one piece between device
and host (on the device's transfer queue where it has one) runs while MPI moves another.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pykern as pk
from pykern.autograd.version import bump
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.elementwise.functions import assign

PIECE_BYTES = 8 << 20  # the staging pieces of a large tensor
WIDENED = {"f16": np.dtype(np.float32), "bf16": np.dtype(np.float32)}


def wire_dtype(dtype: DType) -> np.dtype:
    """The numpy dtype a `dtype` tensor's elements travel as."""
    return WIDENED.get(dtype.name, np.dtype(dtype.numpy))


def zero_copy(t: Any) -> bool:
    """Whether MPI can work on `t`'s own memory: contiguous, on the host device, of a dtype
    MPI has."""
    return (t.device.info.kind == "host" and t.is_contiguous and t.dtype.name not in WIDENED
            and t.size > 0)


def memory_of(t: Any) -> np.ndarray:
    """The 1-D numpy view of a `zero_copy` tensor's elements."""
    start = t.offset * t.dtype.itemsize
    raw = t.buffer.memory[start:start + t.nbytes]
    return raw.view(t.dtype.numpy)


def read(t: Any, out: np.ndarray, start: int = 0) -> None:
    """Fills `out` (1-D, the wire dtype) with elements `start:start + out.size` of the
    contiguous tensor `t`, after the work that writes `t`."""
    if out.size == 0:
        return
    offset = (t.offset + start) * t.dtype.itemsize
    if out.dtype == np.dtype(t.dtype.numpy):
        t.buffer.read_into(out, offset)
        return
    raw = np.empty(out.size, t.dtype.storage)
    t.buffer.read_into(raw, offset)
    out[...] = raw.view(t.dtype.numpy)


def write(t: Any, values: np.ndarray, start: int = 0) -> None:
    """Writes `values` (1-D, the wire dtype) into elements `start:` of the contiguous tensor
    `t`, converted (rounded once) to its dtype. Returns once `values` may change."""
    if values.size == 0:
        return
    offset = (t.offset + start) * t.dtype.itemsize
    if values.dtype != np.dtype(t.dtype.numpy):
        values = values.astype(t.dtype.numpy)
    if t.dtype == dt.bf16:
        values = values.view(t.dtype.storage)  # ml_dtypes' bfloat16 has no buffer format
    t.buffer.upload(values, offset, non_blocking=True)


def write_all(t: Any, values: np.ndarray) -> None:
    """`t`'s elements (row-major) replaced by `values` (1-D, wire dtype)."""
    if t.size == 0:
        return
    if zero_copy(t):
        np.copyto(memory_of(t), values.reshape(-1))
    elif t.is_contiguous:
        write(t, values.reshape(-1))
    else:
        with pk.no_grad():
            assign(t.detach(), pk.asarray(values.reshape(t.shape).astype(t.dtype.numpy),
                                          dtype=t.dtype))
        return  # assign counted the write
    bump(t)


class Staged:
    """The contiguous tensor `t` as one host array of its wire dtype (`host`), cut into
    `pieces` ((start, stop) element ranges) that `fetch` and `store` move one at a time."""

    def __init__(self, t: Any, piece_bytes: int = PIECE_BYTES) -> None:
        self.t = t
        self.direct = zero_copy(t)
        if self.direct:
            self.host = memory_of(t)
            self.pieces = [(0, t.size)]
        else:
            self.host = np.empty(t.size, wire_dtype(t.dtype))
            step = max(1, piece_bytes // self.host.itemsize)
            self.pieces = [(i, min(i + step, t.size)) for i in range(0, t.size, step)]

    def fetch(self, i: int) -> np.ndarray:
        """Piece `i` of `host`, read from the device (nothing to do for a direct tensor)."""
        start, stop = self.pieces[i]
        piece = self.host[start:stop]
        if not self.direct:
            read(self.t, piece, start)
        return piece

    def piece(self, i: int) -> np.ndarray:
        """Piece `i` of `host`, as it is (for a receiver, whose values MPI brings)."""
        start, stop = self.pieces[i]
        return self.host[start:stop]

    def store(self, i: int) -> None:
        """Writes piece `i` of `host` back into the tensor."""
        if not self.direct:
            start, stop = self.pieces[i]
            write(self.t, self.host[start:stop], start)

    def written(self) -> None:
        """Counts the write into the tensor (autograd's version counter), once all pieces
        are stored."""
        bump(self.t)
