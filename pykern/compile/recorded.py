"""`Recorded`: one recording of a compiled function, and its replay on a new call's tensors.

A recording ran the function once on *slots*, tensors of its own that hold copies of the
call's tensor arguments (a tensor that requires gradients, a parameter, is passed as it is:
the recording updates it in place). A replay

1. copies the new call's tensors into the slots (copies queued like launches),
2. runs the hooks the layers below registered (an optimizer's step count and hyperparameter
   rows, a scheduler's step: host values the kernels read, written in queue order),
3. executes the recorded launches,
4. copies each result that the recording made into a new buffer (so the results of earlier
   calls stay as they were) and each slot the launches wrote back into its argument,
5. leaves `.grad` and the version counters as the recording left them,

and on a Vulkan device all of it goes to the device in one submit.
"""

from __future__ import annotations

from typing import Any

from pykern.autograd.version import bump_buffer
from pykern.jit.graph import Graph
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.elementwise.functions import copy_into

# a result of the recording: ("arg", leaf index) the call's own tensor; ("held", tensor) one
# that outlives the call (a parameter), returned as it is; ("new", group, shape, dtype,
# strides, offset) a view of the copy of group `group`
ResultSpec = tuple


class Recorded:
    """What replaying one recording needs (made by `pykern.compile.record.record`)."""

    def __init__(self, graph: Graph, slots: list[Tensor | None], written: list[int],
                 groups: list[tuple[Any, int, int]], results: list[ResultSpec],
                 result_template: Any, hooks: list, modules: list[tuple[Any, bool]],
                 grads_met: list[tuple[Any, Any]], final_grads: list[tuple[Any, Any]],
                 bumped: list[Any], fingerprint: list, result_key: list) -> None:
        self.graph = graph
        self.device = graph.device
        self.slots = slots
        self.written = written  # slots the launches write: copied back to the arguments
        self.groups = groups  # (buffer, first byte, bytes) of each result buffer to copy
        self.results = results
        self.result_template = result_template
        self.hooks = hooks
        self.modules = modules
        self.grads_met = grads_met
        self.final_grads = final_grads
        self.bumped = bumped
        self.fingerprint = fingerprint  # what two recordings must share (fingerprint.py)
        self.result_key = result_key
        # why this recording may not be replayed before another one confirms it (None: it
        # may), set by `record` (first_call.py)
        self.first_call_state: str | None = None
        # how each argument is copied into its slot: (index, slot buffer, bytes, itemsize) for
        # a contiguous one (a plain buffer copy; contiguity is part of the signature)
        self._copies: list[tuple[int, Any, int, int]] | None = None

    # ---------------------------------------------------------------- replaying

    def holds(self) -> bool:
        """Whether a replay now does what the function would: its modules are in the same
        mode and the gradients it adds to are where they were."""
        for module, training in self.modules:
            if module.training is not training:
                return False
        for leaf, state in self.grads_met:
            if grad_state(leaf.grad) != state:
                return False
        return not self.device.closed

    def replay(self, tensors: list[Tensor]) -> list[Any]:
        """The result tensors of one call on `tensors` (the flattened arguments)."""
        device = self.device
        copies = self._copies
        if copies is None:
            copies = self._copies = self._copy_plan(tensors)
        copy = device.copy_buffer
        for i, buffer, nbytes, size in copies:
            if buffer is None:
                copy_into(self.slots[i], tensors[i])  # type: ignore[arg-type]
            else:
                t = tensors[i]
                copy(t.buffer, t.offset * size, buffer, 0, nbytes)
        for hook in self.hooks:
            hook()
        self.graph.replay_queued()
        out = self.finish(tensors)
        device.flush()
        return out

    def _copy_plan(self, tensors: list[Tensor]) -> list[tuple[int, Any, int, int]]:
        """How `replay` copies each argument into its slot (see __init__)."""
        plan = []
        for i, slot in enumerate(self.slots):
            if slot is None:
                continue
            plain = tensors[i].is_contiguous
            plan.append((i, slot.buffer if plain else None, slot.nbytes, slot.dtype.itemsize))
        return plan

    def finish(self, tensors: list[Tensor]) -> list[Any]:
        """Steps 4 and 5 of the module docstring (also after the recording itself)."""
        copies = [copy_out(buffer, first, nbytes) for buffer, first, nbytes in self.groups]
        out: list[Any] = []
        for spec in self.results:
            if spec[0] == "arg":
                out.append(tensors[spec[1]])
            elif spec[0] == "held":
                out.append(spec[1])
            else:
                _, group, shape, dtype, strides, offset = spec
                out.append(Tensor(copies[group], shape, dtype, strides, offset))
        for i in self.written:
            copy_into(tensors[i], self.slots[i])  # type: ignore[arg-type]
        for leaf, grad in self.final_grads:
            leaf.grad = grad
        for buffer in self.bumped:
            bump_buffer(buffer)
        return out

    def release(self) -> None:
        """Lets go of the graph and what it holds."""
        self.graph.release()
        self.hooks = []


def grad_state(grad: Any) -> Any:
    """What a backward pass decides on about a leaf's `.grad`: None, or where it lives."""
    if grad is None:
        return None
    return (grad.buffer, grad.offset, grad.shape, grad._strides, grad.dtype)


def copy_out(buffer: Any, first: int, nbytes: int) -> Any:
    """A new buffer holding `nbytes` bytes of `buffer` from byte `first`."""
    device = buffer.device
    out = device.create_buffer(nbytes)
    device.copy_buffer(buffer, first, out, 0, nbytes)
    return out
