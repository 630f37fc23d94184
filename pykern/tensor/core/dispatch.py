"""Op dispatch by replayed plans: the fast path of the op library.

An op's Python — promotion, broadcasting, choosing and collapsing a launch grid, finding the
kernel variant, packing its argument block — depends only on its operands' dtypes, shapes,
strides and offsets and on the op's own parameters, never on the operands' values. So the first
call of an op with a given *signature* (those facts, as a key the op builds) runs that Python
while `pykern.jit.capture` notes the launches it makes; the notes become a `Plan`, and later
calls with the same signature replay it: fresh buffers for the results, then the same
programs, grids and argument blocks on the new call's buffers. What a replay costs is a dict
lookup, the buffers, and the device's own launch.

A plan maps each buffer a launch bound to where the new call finds its counterpart: an
operand's buffer (by position; which operands share one buffer is part of the signature), a
buffer the op made (`pk.empty`: the results and any temporaries), or one that outlives the op
(a cached constant or stand-in, kept by the plan). A capture that did anything a replay would
not repeat (a debug or interpreted launch, an upload, a result that is a view) gives no plan,
and after a few such captures the key is remembered as one whose Python runs each time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from pykern.jit import capture as cap
from pykern.runtime import get_device
from pykern.tensor.core.tensor import Tensor

LOG = logging.getLogger("pykern.tensor")  # DEBUG: each plan made, each signature given up
PLANS_MAX = 4096  # signatures kept (the oldest beyond)
# captures tried per signature before its Python runs uncaptured for good: a first call may do
# what later ones do not (make a cached stand-in, say), so one failure does not decide
ATTEMPTS = 3


class Plan:
    """The launches of one op signature, ready to be made again on new operands."""

    __slots__ = ("sizes", "kept", "launches", "results", "single")

    def __init__(self, sizes: list[int], kept: list[Any],
                 launches: list[tuple[Any, tuple[int, int, int], Any, tuple[int, ...], Any]],
                 results: list[tuple[int, tuple[int, ...], Any, tuple[int, ...], int]],
                 single: bool) -> None:
        self.sizes = sizes  # bytes of each buffer the op makes, in order
        self.kept = kept  # buffers that outlive the op, bound as they were
        # (program, grid, block, where each buffer comes from, the watch to call after it)
        self.launches = launches
        # per result: (buffer index, shape, dtype, strides, offset) of a view of a buffer the
        # op made, or (operand index, None, ...) for an operand the op returns (`out=`)
        self.results = results
        self.single = single  # the op returns one tensor, not a tuple

    def run(self, device: Any, operands: Sequence[Tensor]) -> Any:
        # the buffers a launch may bind: the operands', the fresh ones, the kept ones
        pool = [t.buffer for t in operands]
        create = device.create_buffer
        for n in self.sizes:
            pool.append(create(n))
        if self.kept:
            pool += self.kept
        launch = device.launch
        for program, grid, block, sources, watch in self.launches:
            # a Vulkan block is bytes; the host device's is a list it fills in: a copy each
            launch(program, grid, [pool[s] for s in sources],
                   block if type(block) is bytes else block[:])
            if watch is not None:
                watch()  # the variant's loops report cuts: read them once the launch has run
        if self.single:
            i, shape, dtype, strides, offset = self.results[0]
            if shape is None:
                return operands[i]
            return Tensor(pool[i], shape, dtype, strides, offset)
        return tuple(operands[i] if shape is None else
                     Tensor(pool[i], shape, dtype, strides, offset)
                     for i, shape, dtype, strides, offset in self.results)


_PLANS: dict[tuple, Plan | int] = {}  # a plan, or how many captures failed


def signature(key: tuple, device: Any, operands: Sequence[Tensor]) -> tuple:
    """The full key of a plan: the op's `key`, the device, each operand's dtype, shape, strides
    and offset, and which operands share a buffer (written out for one and two operands, the
    common cases: every op asks)."""
    if len(operands) == 1:
        x = operands[0]
        return (key, device, x.dtype, x.shape, x._strides, x.offset)
    if len(operands) == 2:
        a, b = operands
        return (key, device, a.dtype, a.shape, a._strides, a.offset, b.dtype, b.shape,
                b._strides, b.offset, a.buffer is b.buffer)
    buffers = [t.buffer for t in operands]
    return (key, device, *[(t.dtype, t.shape, t._strides, t.offset) for t in operands],
            tuple([buffers.index(b) for b in buffers]))


def dispatch(key: tuple, operands: Sequence[Tensor], run: Callable[[], Any]) -> Any:
    """`run()` (the op's own Python over `operands`), through the plan of `key`: replayed when
    one exists, captured when the key is new. `key` must hold everything the launches depend
    on besides the operands' signatures and sharing, which are added here."""
    if cap.ACTIVE[0] is not None:
        # inside another op's capture: what this op launches must go through the kernels,
        # where the capture sees it (a replay launches on the device directly)
        return run()
    device = get_device()
    full = signature(key, device, operands)
    plan = _PLANS.get(full, 0)
    if type(plan) is Plan:
        return plan.run(device, operands)
    if plan >= ATTEMPTS:
        return run()  # known to need its Python each time
    capture = cap.Capture()
    cap.ACTIVE[0] = capture
    try:
        result = run()
    finally:
        cap.ACTIVE[0] = None
    made = _plan(capture, operands, result)
    _PLANS[full] = made or plan + 1
    if LOG.isEnabledFor(logging.DEBUG):
        _log_capture(key, operands, made, plan + 1)
    if len(_PLANS) > PLANS_MAX:
        del _PLANS[next(iter(_PLANS))]
    return result


def _plan(capture: cap.Capture, operands: Sequence[Tensor], result: Any) -> Plan | None:
    """The plan that repeats `capture`, or None where a replay could not."""
    if capture.unrepeatable:
        return None
    single = isinstance(result, Tensor)
    results = [result] if single else list(result) if isinstance(result, tuple) else None
    if not results or not all(type(r) is Tensor and not r.requires_grad for r in results):
        return None
    where: dict[int, int] = {}  # id(buffer) -> pool index
    for i, t in enumerate(operands):
        where.setdefault(id(t.buffer), i)
    sizes: list[int] = []
    for buffer in capture.created.values():
        if id(buffer) not in where:
            where[id(buffer)] = len(operands) + len(sizes)
            sizes.append(buffer.nbytes)
    kept: list[Any] = []
    launches = []
    for program, grid, block, buffers, watch in capture.launches:
        sources = []
        for b in buffers:
            if b is None:
                return None  # a slot the binder leaves empty: not a plain launch
            if id(b) not in where:
                where[id(b)] = -1 - len(kept)
                kept.append(b)
            sources.append(where[id(b)])
        launches.append((program, grid, list(block) if isinstance(block, list) else bytes(block),
                         sources, watch))
    base = len(operands) + len(sizes)
    for launch in launches:
        launch[3][:] = [s if s >= 0 else base - 1 - s for s in launch[3]]
    specs = []
    for r in results:
        operand = next((k for k, t in enumerate(operands) if r is t), None)
        if operand is not None:
            specs.append((operand, None, None, None, None))
            continue
        i = where.get(id(r.buffer))
        if i is None or not len(operands) <= i < base:
            return None  # a view of an operand, or made otherwise than by pk.empty
        # (a view of a buffer the op made: its base is the op's own, which nobody else sees)
        specs.append((i, r.shape, r.dtype, r._strides, r.offset))
    frozen = [(p, g, blk, tuple(s), w) for p, g, blk, s, w in launches]
    return Plan(sizes, kept, frozen, specs, single)


def _log_capture(key: tuple, operands: Sequence[Tensor], made: Plan | None,
                 attempts: int) -> None:
    what = f"{key!r} on " + ", ".join(f"{t.dtype.name}{list(t.shape)}" for t in operands)
    if made is not None:
        LOG.debug("op plan made: %s, %d launches, replayed from the next call", what,
                  len(made.launches))
    elif attempts >= ATTEMPTS:
        LOG.debug("op plan given up after %d captures: %s runs its Python each call",
                  attempts, what)


def clear() -> None:
    """Forgets every plan (their programs and kept buffers go with them)."""
    _PLANS.clear()
