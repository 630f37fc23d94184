"""`Reducer`: averages gradients across ranks during backward(), bucket by bucket.

Each parameter has a post-accumulate-grad hook (pykern/autograd/hooks.py). When the last
gradient of a bucket is in, the hook hands the bucket to the communication thread and
returns, so backward() goes on computing the earlier layers while the bucket travels. The
thread reads the bucket's gradients into its host array (waiting for the device's work where
there is any), starts a non-blocking MPI all-reduce on it and polls it; buckets are started in
index order on every rank (MPI requires the same order everywhere), whatever order the hooks
ran in. At the end of backward() (a callback queued by the first hook) the buckets whose
gradients did not all arrive (parameters this pass did not reach) are handed over too, the
main thread waits for the thread, and writes each averaged gradient back into `.grad`.

The thread works on a communicator of its own (`ProcessGroup.split`), so its collectives
never interleave with those the program makes meanwhile. Its waits have the group's
deadline, pushed back while it waits for this process's own backward pass to hand it the next
bucket: a rank that computes slowly is not a failure, a peer that does not answer is.
"""

from __future__ import annotations

import queue
import threading
import time
import weakref
from collections import deque
from typing import Any

import numpy as np

import pykern as pk
from pykern.autograd.hooks import current_pass, queue_callback
from pykern.distributed.buckets import Bucket, make_buckets
from pykern.distributed.staging import read, write_all
from pykern.distributed.waiting import raise_failure, wait_for
from pykern.errors import DistributedError



class Reducer:
    """The gradient averaging of one DistributedDataParallel module."""

    def __init__(self, group: Any, params: list[Any], cap_bytes: int) -> None:
        self.group = group
        self.buckets = make_buckets(params, cap_bytes)
        self.where = {id(p): (b, k) for b in self.buckets for k, p in enumerate(b.params)}
        self.armed = False  # the next backward() averages (set by a forward outside no_sync)
        self.passing = False  # a backward pass is under way
        self._pass = 0  # its number (hooks.current_pass)
        self._abandoned = False  # a pass ended on an exception before its end callback
        self._todo: queue.SimpleQueue[Bucket | None] = queue.SimpleQueue()
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        # the hooks hold the reducer weakly: registered hooks live in a global table, and
        # through them the reducer (and so the parameters) would never be freed
        self._handles = [p.register_post_accumulate_grad_hook(_weak_hook(self))
                         for p in params]

    # ---------------------------------------------------------------- the main thread

    def _on_gradient(self, p: Any) -> None:
        """The hook: `p.grad` is complete for this pass."""
        if not self.armed:
            return
        if self.passing and self._pass != current_pass():
            self._abandon()
        if not self.passing:
            self._begin_pass()
        bucket, k = self.where[id(p)]
        if not p.grad.is_contiguous:  # the thread reads it as flat memory
            p.grad = p.grad.contiguous()
        bucket.got[k] = True
        bucket.ready += 1
        if bucket.ready == len(bucket.params):
            self._launch(bucket)

    def _abandon(self) -> None:
        """The pass before this one raised inside backward(): its buckets may be half sent,
        and the other ranks waited for the rest in vain. The group cannot be trusted."""
        self._abandoned = True
        self.passing = False
        raise self.group.fail("a backward() through DistributedDataParallel raised before "
                              "its gradients were averaged; the ranks are out of step",
                              tuple(b.host for b in self.buckets))

    def _begin_pass(self, in_backward: bool = True) -> None:
        self.group.check_usable()
        self.passing = True
        self._pass = current_pass()
        self._done.clear()
        self._error = None
        for b in self.buckets:
            b.reset()
        if self._thread is None:  # it holds the reducer weakly: both go with the model
            self._thread = threading.Thread(target=_serve, args=(weakref.ref(self), self._todo),
                                            name="pykern-ddp-comm", daemon=True)
            self._thread.start()
        if in_backward:
            queue_callback(self._finish)

    def average_now(self) -> None:
        """Averages the gradients the parameters hold now, outside backward() (after
        backward passes run under no_sync, or a step whose backward could not call hooks)."""
        if self.passing:
            raise RuntimeError("average_gradients() inside backward()")
        self._begin_pass(in_backward=False)
        for b in self.buckets:
            b.got = [p.grad is not None for p in b.params]
            b.ready = sum(b.got)
            for p in b.params:
                if p.grad is not None and not p.grad.is_contiguous:
                    p.grad = p.grad.contiguous()
        self._finish()

    def _launch(self, bucket: Bucket) -> None:
        bucket.launched = True
        self._todo.put(bucket)

    def _finish(self) -> None:
        """End of backward(): every bucket handed over, averaged, written back."""
        try:
            for b in self.buckets:
                if not b.launched:
                    self._launch(b)
            self._wait()
            for b in self.buckets:
                _write_back(b)
        finally:
            self.passing = False
            self.armed = False

    def _wait(self) -> None:
        """Until the thread is done with this pass (its own deadline fires first; this one is
        a backstop for a thread stuck outside MPI)."""
        deadline = time.monotonic() + 2 * self.group.timeout + 5
        while not self._done.wait(0.05):
            if time.monotonic() > deadline:
                raise self.group.fail("gradient averaging: the communication thread did "
                                      "not finish", tuple(b.host for b in self.buckets))
        if self._error is not None:
            raise_failure(self._error)

    # ---------------------------------------------------------------- the thread

    def _communicate(self, first: Bucket) -> None:
        """One pass: start the buckets in index order as they arrive, poll them, average."""
        group, count = self.group, len(self.buckets)
        arrived = {first.index: first}
        in_flight: deque[tuple[Bucket, Any]] = deque()
        state = {"next": 0, "finished": 0}

        def progress() -> bool:
            if self._abandoned:
                raise DistributedError("gradient averaging abandoned")
            while True:
                try:
                    b = self._todo.get_nowait()
                except queue.Empty:
                    break
                if b is not None:
                    arrived[b.index] = b
            while state["next"] in arrived:
                b = arrived.pop(state["next"])
                _gather(b)
                in_flight.append((b, group.comm.Iallreduce(group.MPI.IN_PLACE, b.host,
                                                           group.MPI.SUM)))
                state["next"] += 1
            while in_flight and in_flight[0][1].Test():
                b, _ = in_flight.popleft()
                np.divide(b.host, group.size, out=b.host)
                state["finished"] += 1
            return state["finished"] == count

        def waiting_for_this_rank() -> bool:
            return state["next"] < count and state["next"] not in arrived

        wait_for(group, "gradient averaging (DistributedDataParallel)", progress,
                 tuple(b.host for b in self.buckets), busy=waiting_for_this_rank)

    def close(self) -> None:
        """Removes the hooks and ends the thread."""
        for h in self._handles:
            h.remove()
        if self._thread is not None:
            self._todo.put(None)
            self._thread = None

    def __del__(self) -> None:
        self._todo.put(None)  # the thread ends


def _weak_hook(reducer: Reducer) -> Any:
    ref = weakref.ref(reducer)

    def on_gradient(p: Any) -> None:
        live = ref()
        if live is not None:
            live._on_gradient(p)
    return on_gradient


def _serve(reducer_ref: weakref.ref, todo: queue.SimpleQueue) -> None:
    """The communication thread: one backward pass per first bucket it is handed."""
    while True:
        first = todo.get()
        reducer = reducer_ref() if first is not None else None
        if reducer is None:
            return
        try:
            reducer._communicate(first)
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            reducer._error = error
        reducer._done.set()
        del reducer


def _gather(b: Bucket) -> None:
    """The bucket's gradients into its host array (zeros and flag 0 where none arrived)."""
    for k, (p, start) in enumerate(zip(b.params, b.starts)):
        piece = b.host[start:start + p.size]
        if b.got[k]:
            read(p.grad, piece)
            b.host[b.total + k] = 1
        else:
            piece[...] = 0
            b.host[b.total + k] = 0


def _write_back(b: Bucket) -> None:
    """Each averaged gradient into `.grad`; a parameter no rank produced a gradient for
    keeps None."""
    for k, (p, start) in enumerate(zip(b.params, b.starts)):
        if b.host[b.total + k] == 0:
            continue
        values = b.host[start:start + p.size]
        if p.grad is not None and p.grad.dtype == p.dtype and p.grad.shape == p.shape:
            write_all(p.grad, values)
        else:
            p.grad = pk.asarray(values.reshape(p.shape).astype(p.dtype.numpy), dtype=p.dtype)
