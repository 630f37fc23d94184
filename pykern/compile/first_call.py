"""Whether a compiled function's first recording may be replayed as it is, from the second call.

A recording is what the function's Python did on one call. A later call runs the same Python on
new argument tensors, so the same launches, unless the call changed something the Python
decides on next time. What a call can change that way, and this module looks for:

- state it made and kept: tensors made during the call that are alive after it, besides its
  results (an optimizer's first step makes its moments, a module fills a cache); the next call
  finds them and launches something else (no initialisation, another tensor read);
- state it wrote: a launch, copy or upload into a tensor that outlives the call and is not an
  argument (parameters, running statistics, a buffer filled once); the Python may have decided
  on it (a lazily initialised buffer), so it is not trusted on one recording;
- `.grad` (a backward pass, `zero_grad`): whether a gradient is None or a tensor decides what
  the next backward launches;
- host data uploaded inside (`pk.asarray(numpy_batch)`), which may be another batch next time;
- Python values among the results, which a replay gives as the recording returned them.

A recording with none of these is replayed from the second call. One with any is recorded
again on the next call, and replayed once two recordings in a row agree (`function.Entry`), or
a later one has none of them. Buffers the layers below made and noted as the recording's own
(`compiling.note_kept`) are not state: the caches of constants that scalar operands use
(`x * 2.0`: read only, a replay writes the same bytes into them again), the position a random
draw's replay hook writes.
"""

from __future__ import annotations

import gc

from pykern.jit import compiling
from pykern.jit.graph import Graph


def first_call_state(graph: Graph, rec: compiling.Recording, made: list, slot_ids: set[int],
                     result_key: list) -> str | None:
    """Why the recording in `graph` may not be replayed from the next call (None where it may);
    `made` holds weak references to the tensors made during the call (`compiling.MADE`). Call
    it once the call's own objects (its result, its arguments' copies) are let go."""
    if rec.backwards or rec.leaves or rec.grads_met:
        return "it runs backward() or sets .grad"
    if any(part[0] in ("value", "id") and part[-1] is not None for part in result_key):
        return "it returns Python values besides tensors"
    created = graph.created
    why = _writes_outside(graph.log, created | slot_ids, rec.kept)
    if why is not None:
        return why
    if rec.bumped:
        return "it writes into tensors that outlive it"
    kept = created - rec.kept - slot_ids
    if kept and _alive(made, kept):
        gc.collect()  # garbage of reference cycles is not state: try once more without it
        if _alive(made, kept):
            return "it made tensors that outlive it (state such as an optimizer's or a cache)"
    return None


def _writes_outside(log: list[tuple], own: set[int], kept: set[int]) -> str | None:
    """Whether a recorded step writes into a buffer the call did not make (state), or uploads
    host data into one it does not keep as its own (a cached constant)."""
    for program, _, buffers, _, _ in log:
        if program == "upload":
            if id(buffers[0]) not in kept:
                return "it uploads host data (pk.asarray of a numpy array inside)"
            continue
        mask = (False, True) if program == "copy" else getattr(program, "writes_mask", ())
        for i, buf in enumerate(buffers):
            if buf is not None and (i >= len(mask) or mask[i]) and id(buf) not in own:
                return "it writes into tensors that outlive it"
    return None


def _alive(made: list, buffer_ids: set[int]) -> bool:
    """Whether a tensor made during the call (weak references) is still alive and views one of
    the buffers made during it (by id)."""
    for ref in made:
        t = ref()
        if t is not None and id(t.buffer) in buffer_ids:
            return True
    return False
