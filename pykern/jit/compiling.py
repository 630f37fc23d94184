"""What a `pk.compile` recording collects from the layers its function runs through.

A compiled function's later calls replay the launches recorded from one call, not its Python.
Python that must still happen on every call registers here while the recording runs, and the
replay repeats it (`pykern.compile`):

- `on_replay(hook)`: host-side work to repeat before each replay, in the order registered. An
  optimizer counts its step and writes the new hyperparameters (learning rate, bias
  corrections) into the small tensor its kernel reads; a learning-rate scheduler moves on.
- `write_unrecorded(buffer, data)`: such a write, made now without entering the recording
  (the replay's hook makes it again with new values).
- `note_module(m)`: a module whose `training` flag the recorded launches depend on; a replay
  with another flag records again.
- `note_grad_set(t)`, `note_accumulate(t)`: how `.grad` of leaf tensors changed, so that a
  replay finds the same state the recording found, and leaves the same one.
- `note_bump(buffer)`: a version-counter bump (autograd) to repeat.
- `note_kept(buffer)`: a buffer made while recording that outlives the call as the
  recording's own, not as state the function's Python decides on next time: a cached
  constant (a scalar operand; a replay writes the same bytes into it again), the small tensor
  a replay hook writes (the random generator's position).

Everything is per thread and costs a global lookup when no recording runs. This module knows
no tensor: what it holds is opaque.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from pykern.runtime.errors import GraphError


class Recording:
    """What one recording of a compiled function collected (see the module docstring)."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.thread = threading.get_ident()
        self.hooks: list[Callable[[], None]] = []
        self.modules: dict[int, tuple[Any, bool]] = {}  # id -> (module, its training flag)
        # leaves whose .grad the function set (zero_grad) before any gradient reached them
        self.grads_set: set[int] = set()
        # leaves whose .grad a backward met first, with what it met (None or the tensor)
        self.grads_met: dict[int, tuple[Any, Any]] = {}
        self.leaves: dict[int, Any] = {}  # every leaf whose .grad changed, by id
        self.bumped: list[Any] = []  # buffers whose version was bumped, in order
        self.backwards = 0  # backward passes run
        self.kept: set[int] = set()  # ids of buffers made meanwhile and kept (note_kept)
        self.quiet = 0  # inside `replayed`: hooks of the body are the outer hook's part


# the recording in progress (one at a time; another thread's work is not part of it)
ACTIVE: list[Recording | None] = [None]
# weak references to the tensors made while a recording runs (None while none does): the
# recording checks which of them outlive its call (pykern/compile/first_call.py)
MADE: list[list | None] = [None]


def active() -> Recording | None:
    """The recording in progress on this thread, or None."""
    rec = ACTIVE[0]
    if rec is None or rec.thread != threading.get_ident():
        return None
    return rec


def on_replay(hook: Callable[[], None]) -> None:
    """Runs `hook` before each replay of the recording in progress (nothing without one)."""
    rec = active()
    if rec is not None and not rec.quiet:
        rec.hooks.append(hook)


@contextlib.contextmanager
def replayed(hook: Callable[[], None]) -> Iterator[None]:
    """`with replayed(hook): body`: `hook` (which does what the body does on the host) runs
    before each replay of the recording in progress, and what the body itself registers does
    not (a learning-rate scheduler that steps another one)."""
    rec = active()
    if rec is None or rec.quiet:
        yield
        return
    rec.hooks.append(hook)
    rec.quiet += 1
    try:
        yield
    finally:
        rec.quiet -= 1


def write_unrecorded(buffer: Any, data: Any) -> None:
    """Writes `data` into `buffer` in queue order (`upload_queued`), outside the recording in
    progress: a value that the recording's replay hook writes anew before each replay."""
    rec = active()
    device = buffer.device
    graph = device.pause_graph() if rec is not None else None
    try:
        buffer.upload_queued(data)
    finally:
        if graph is not None:
            device.resume_graph(graph)


def note_module(module: Any) -> None:
    """A module ran (its `training` flag decides what it launches)."""
    rec = active()
    if rec is not None and id(module) not in rec.modules:
        rec.modules[id(module)] = (module, module.training)


def note_grad_set(leaf: Any) -> None:
    """`leaf.grad` is being set (`zero_grad`): what follows does not depend on its old value."""
    rec = active()
    if rec is not None:
        if id(leaf) not in rec.grads_met:
            rec.grads_set.add(id(leaf))
        rec.leaves[id(leaf)] = leaf


def note_accumulate(leaf: Any) -> None:
    """A backward pass is about to add a gradient into `leaf.grad` (None, or a tensor it adds
    to in place or replaces): where the function did not set `.grad` itself before, a replay
    must find the same state."""
    rec = active()
    if rec is not None:
        key = id(leaf)
        if key not in rec.grads_set and key not in rec.grads_met:
            rec.grads_met[key] = (leaf, leaf.grad)
        rec.leaves[key] = leaf


def note_backward() -> None:
    """A backward pass ran."""
    rec = active()
    if rec is not None:
        rec.backwards += 1


def note_bump(buffer: Any) -> None:
    """The version counter of `buffer` was bumped (a write through the tensor API)."""
    rec = active()
    if rec is not None:
        rec.bumped.append(buffer)


def note_kept(buffer: Any) -> None:
    """`buffer`, made while recording, outlives the call as the recording's own (see the
    module docstring)."""
    rec = active()
    if rec is not None:
        rec.kept.add(id(buffer))


def refuse(what: str) -> None:
    """Raises GraphError where a recording is in progress: `what` cannot be replayed."""
    if active() is not None:
        raise GraphError(f"{what} inside a pk.compile'd function cannot be replayed")
