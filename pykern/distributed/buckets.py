"""How DistributedDataParallel groups parameters into buckets.

Gradients are averaged a bucket at a time: one all-reduce per bucket of about `cap_bytes`
rather than one per parameter (fewer, larger messages) and not one for the whole model (the
first buckets travel while the rest of the backward pass still runs). Parameters go into
buckets in reverse order of registration, the order in which backward() usually produces
their gradients; the first bucket is small (`FIRST_CAP_BYTES`) so that communication starts
early. A bucket holds parameters of one wire dtype (staging.wire_dtype). Its host array has
the gradients, flat, then one flag per parameter: 1 where this rank's backward produced a
gradient for it. Summed with the gradients, the flags say which parameters got a gradient on
some rank; one that got none anywhere keeps `.grad` None, as in single-process training.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pykern.distributed.staging import wire_dtype

FIRST_CAP_BYTES = 1 << 20


@dataclass
class Bucket:
    """Parameters whose gradients are averaged by one all-reduce."""

    index: int
    params: list[Any]
    starts: list[int]  # each parameter's first element in `host`
    host: np.ndarray  # the gradients, flat, then one flag per parameter
    got: list[bool] = field(default_factory=list)  # which gradients arrived this pass
    ready: int = 0  # how many
    launched: bool = False  # handed to the communication thread this pass

    @property
    def total(self) -> int:
        """Elements of gradients (the flags follow)."""
        return self.host.size - len(self.params)

    def reset(self) -> None:
        """Before a backward pass."""
        self.got = [False] * len(self.params)
        self.ready, self.launched = 0, False


def make_buckets(params: list[Any], cap_bytes: int) -> list[Bucket]:
    """`params` in buckets of at most `cap_bytes` of gradients (a larger parameter gets one
    of its own), reverse order, one wire dtype each."""
    buckets: list[Bucket] = []
    members: list[Any] = []
    size, dtype, cap = 0, None, min(cap_bytes, FIRST_CAP_BYTES)

    def close() -> None:
        nonlocal members, size, cap
        if members:
            starts = list(np.cumsum([0] + [p.size for p in members[:-1]]))
            host = np.zeros(size + len(members), dtype)
            buckets.append(Bucket(len(buckets), members, [int(s) for s in starts], host))
            members, size, cap = [], 0, cap_bytes

    for p in reversed(params):
        wire = wire_dtype(p.dtype)
        if members and (wire != dtype or (size + p.size) * wire.itemsize > cap):
            close()
        dtype = wire
        members.append(p)
        size += p.size
    close()
    for b in buckets:
        b.reset()
    return buckets
