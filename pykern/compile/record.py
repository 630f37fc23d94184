"""Recording a compiled function: one real call, its launches recorded (`pykern.compile`).

The call runs eagerly, as without `pk.compile`, on slots holding copies of its tensor
arguments, inside a strict `pk.graph()` (every host read refused, a log of the launches kept
with the line of the user's code that made each) while `pykern.jit.compiling` collects what
the layers below must repeat on a replay. What it returns is then sorted out (results the call
made are copied out on every call; the call's own tensors and tensors that outlive it are
returned as they are), and the log becomes the recording's fingerprint. Last, `first_call.py`
says whether the call left state behind that makes the next call's Python launch something else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.compile.fingerprint import fingerprint
from pykern.compile.first_call import first_call_state
from pykern.compile.locate import describe, raised_at, user_line
from pykern.compile.recorded import Recorded, grad_state
from pykern.compile.structure import fill, flatten_result
from pykern.jit import compiling
from pykern.jit.graph import Graph
from pykern.runtime.errors import GraphError
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.elementwise.functions import copy_into


def record(fn: Callable[..., Any], template: Any, tensors: list[Tensor], name: str
           ) -> tuple[Any, Recorded]:
    """Calls `fn` with the arguments `template` (`(args, kwargs)` with the flattened
    `tensors` left out) while recording; returns its result (results copied out, as every
    call returns them) and the recording."""
    slots = [None if t.requires_grad else _slot(t) for t in tensors]
    given = [t if s is None else s for t, s in zip(tensors, slots)]
    args, kwargs = fill(template, given)
    graph = Graph(strict=True, locate=user_line)
    rec = compiling.Recording(None)
    if compiling.ACTIVE[0] is not None:
        raise GraphError(f"pk.compile: {name} called while another recording runs on another "
                         "thread")
    compiling.ACTIVE[0] = rec
    made: list = []
    compiling.MADE[0] = made
    try:
        with graph:
            result = fn(*args, **kwargs)
    except GraphError as e:
        raise GraphError(f"pk.compile: {name}: {e} (at {describe(raised_at(e.__traceback__))})"
                         ) from None
    finally:
        compiling.ACTIVE[0] = compiling.MADE[0] = None
    try:
        recorded = _recorded(graph, rec, slots, tensors, result, name)
    except BaseException:
        graph.release()
        raise
    out = fill(recorded.result_template, recorded.finish(tensors))
    del result, args, kwargs, given  # the call's own objects: what outlives them is state
    slot_ids = {id(s.buffer) for s in slots if s is not None}
    recorded.first_call_state = first_call_state(graph, rec, made, slot_ids,
                                                 recorded.result_key)
    return out, recorded


def _slot(t: Tensor) -> Tensor:
    """A tensor of the recording's own, contiguous, holding a copy of `t`."""
    device = t.buffer.device  # type: ignore[attr-defined]
    slot = Tensor(device.create_buffer(t.nbytes), t.shape, t.dtype)
    copy_into(slot, t)
    return slot


def _recorded(graph: Graph, rec: compiling.Recording, slots: list[Tensor | None],
              tensors: list[Tensor], result: Any, name: str) -> Recorded:
    log, created = graph.log, graph.created
    slot_of = {id(s.buffer): i for i, s in enumerate(slots) if s is not None}
    written = _written_slots(log, slot_of)
    _check_aliasing(written, tensors, name)
    results: list[Tensor] = []
    template, key = flatten_result(result, results)
    groups: list[tuple[Any, int, int]] = []
    specs = _result_specs(results, slots, slot_of, created, groups, rec, name)
    own = {id(s.buffer) for s in slots if s is not None} | created
    bumped = list({id(b): b for b in rec.bumped if id(b) not in own}.values())
    return Recorded(
        graph, slots, written, groups, specs, template, rec.hooks,
        list(rec.modules.values()),
        [(leaf, grad_state(grad)) for leaf, grad in rec.grads_met.values()],
        [(leaf, leaf.grad) for leaf in rec.leaves.values()],
        bumped, fingerprint(log, slot_of, created), key)


def _written_slots(log: list[tuple], slot_of: dict[int, int]) -> list[int]:
    """The slots that a recorded launch, upload or copy writes."""
    written: set[int] = set()
    for program, _, buffers, _, _ in log:
        if program == "upload":
            mask: tuple = (True,)
        elif program == "copy":
            mask = (False, True)
        else:
            mask = getattr(program, "writes_mask", ())
        for i, buf in enumerate(buffers):
            if buf is not None and id(buf) in slot_of and (i >= len(mask) or mask[i]):
                written.add(slot_of[id(buf)])
    return sorted(written)


def _check_aliasing(written: list[int], tensors: list[Tensor], name: str) -> None:
    """Refuses a function that writes into an argument sharing memory with another: each
    argument is copied in on its own, so the other would not see the write."""
    for i in written:
        for j, t in enumerate(tensors):
            if j != i and t.buffer is tensors[i].buffer:
                raise GraphError(f"pk.compile: {name} writes into argument tensor {i + 1}, "
                                 f"which shares memory with argument tensor {j + 1}: pass "
                                 "tensors that do not overlap")


def _result_specs(results: list[Tensor], slots: list[Tensor | None], slot_of: dict[int, int],
                  created: set[int], groups: list[tuple[Any, int, int]],
                  rec: compiling.Recording, name: str) -> list[tuple]:
    """How each result is given on a call (see `recorded.ResultSpec`). Results the call made
    are copied out, views of one buffer from one copy of the bytes they span."""
    specs: list[tuple | None] = []
    spans: dict[int, list] = {}  # id(buffer) -> [buffer, first byte, end byte, itemsizes]
    for r in results:
        arg = next((i for i, s in enumerate(slots) if r is s), None)
        if arg is not None:
            specs.append(("arg", arg))
        elif id(r.buffer) not in created and id(r.buffer) not in slot_of:
            specs.append(("held", r))  # outlives the call (a parameter): as eager gives it
        else:
            if r.requires_grad and not rec.backwards:
                raise GraphError(
                    f"pk.compile: {name} returns a tensor that requires grad, and no "
                    "backward() ran inside: the autograd graph of a replay is not recorded. "
                    "Call backward() inside the compiled function (a whole training step), "
                    "or run it under pk.no_grad()")
            size = r.dtype.itemsize
            lo, hi = r._extent() if r.size else (r.offset, r.offset - 1)
            span = spans.setdefault(id(r.buffer), [r.buffer, lo * size, (hi + 1) * size, set()])
            span[1], span[2] = min(span[1], lo * size), max(span[2], (hi + 1) * size)
            span[3].add(size)
            specs.append(None)
    index: dict[int, int] = {}
    for key, (buffer, first, end, sizes) in spans.items():
        if any(first % s for s in sizes):
            first = 0  # views of several dtypes: copy from the start
        index[key] = len(groups)
        groups.append((buffer, first, max(end - first, 0)))
    out = []
    for r, spec in zip(results, specs):
        if spec is None:
            group = index[id(r.buffer)]
            first = groups[group][1] // r.dtype.itemsize
            spec = ("new", group, r.shape, r.dtype, r._strides, r.offset - first)
        out.append(spec)
    return out
