"""`DistributedDataParallel`: a module whose gradients are averaged across the process group.

    model = pk.nn.parallel.DistributedDataParallel(model)

At construction every rank checks that all ranks wrap the same parameters (names, shapes,
dtypes), and rank 0's parameter values are broadcast to the others, so every rank starts from
the same weights. Each forward pass through the wrapper (outside `no_sync()`, with grad mode
on) arms the next backward(): it averages the gradients of all ranks bucket by bucket while
the backward pass runs (reducer.py), and returns with the average in every `.grad`. An
optimizer step on each rank then makes the same update everywhere: the result is that of one
process training on the ranks' batches concatenated (the loss being a mean over samples).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from pykern.autograd.mode import is_grad_enabled
from pykern.distributed import signature
from pykern.distributed.buckets import make_buckets
from pykern.distributed.group import ProcessGroup, default_group
from pykern.distributed.reducer import Reducer
from pykern.distributed.staging import read, write_all
from pykern.distributed.waiting import wait_for
from pykern.nn.module import Module

DEFAULT_BUCKET_MB = 25


class DistributedDataParallel(Module):
    """Wraps `module` for data-parallel training (torch's name and main arguments):
    `bucket_cap_mb` sizes the buckets of gradients averaged together; `process_group` is the
    group (default: the one init_process_group made). `device_ids`, `output_device`,
    `broadcast_buffers`, `find_unused_parameters` and `gradient_as_bucket_view` are accepted
    for compatibility: pykern has one device per process, and parameters a pass does not
    reach are always handled (their gradient is the average over the ranks that produced
    one, as zeros elsewhere; None where no rank did)."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 broadcast_buffers: bool = True, process_group: ProcessGroup | None = None,
                 bucket_cap_mb: float = DEFAULT_BUCKET_MB, find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a pk.nn.Module, not "
                            f"{type(module).__name__}")
        if bucket_cap_mb <= 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.module = module
        group = process_group if process_group is not None else \
            default_group("DistributedDataParallel")
        group.check_usable()
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        signature.check(group, "DistributedDataParallel",
                        extra=";".join(f"{n}:{p.dtype.name}:{tuple(p.shape)}" for n, p in named),
                        describe_extra=f"{len(named)} parameters that require grad")
        params = [p for _, p in named]
        _broadcast_parameters(group, params, int(bucket_cap_mb * 2**20))
        object.__setattr__(self, "process_group", group)
        object.__setattr__(self, "_sync", True)
        object.__setattr__(self, "_reducer",
                           Reducer(group.split(), params, int(bucket_cap_mb * 2**20)))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped module's forward; arms gradient averaging for the next backward()."""
        if self._sync and is_grad_enabled():
            self._reducer.armed = True
        return self.module(*args, **kwargs)

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Forward passes inside do not average: their backward() only accumulates into
        `.grad` on this rank (gradient accumulation). The first backward() after a forward
        outside averages everything accumulated."""
        previous = self._sync
        object.__setattr__(self, "_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_sync", previous)

    def average_gradients(self) -> None:
        """Averages, now, the gradients the parameters hold across the ranks (every rank must
        call it): the explicit form of what backward() does after a forward through the
        wrapper. For steps whose backward runs without the wrapper's hooks, e.g. a forward
        and backward recorded as one replayable step: record them under `no_sync()` and
        call this between the replay and the optimizer step (communication cannot be
        recorded)."""
        self._reducer.average_now()

    def extra_repr(self) -> str:
        return f"world_size={self.process_group.size}"


def _broadcast_parameters(group: ProcessGroup, params: list[Any], cap_bytes: int) -> None:
    """Rank 0's values into every rank's parameters, bucket by bucket."""
    for bucket in make_buckets(params, cap_bytes):
        values = bucket.host[:bucket.total]
        if group.rank == 0:
            for p, start in zip(bucket.params, bucket.starts):
                source = p.detach() if p.is_contiguous else p.detach().contiguous()
                read(source, values[start:start + p.size])
        request = group.comm.Ibcast(values, root=0)
        wait_for(group, "DistributedDataParallel: the broadcast of rank 0's parameters",
                 request.Test, (values,))
        if group.rank != 0:
            for p, start in zip(bucket.params, bucket.starts):
                write_all(p.detach(), np.ascontiguousarray(values[start:start + p.size]))
