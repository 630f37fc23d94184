"""Hooks into `backward()`: a leaf's post-accumulate-grad hooks, and end-of-backward callbacks.

- `register_post_accumulate_grad_hook(t, hook)` (also `t.register_post_accumulate_grad_hook`,
  PyTorch's name): `hook(t)` runs during a `backward()` as soon as every gradient that pass
  sends to the leaf `t` has been added into `t.grad`, while the rest of the graph is still
  being differentiated. Data-parallel training starts averaging a parameter's gradient there,
  so that communication overlaps the rest of the backward pass. It does not run for
  `pk.autograd.grad` (no `.grad` is written), nor for a leaf the pass sends nothing to.
- `queue_callback(fn)`: called from inside a backward pass (from such a hook), runs `fn()`
  once that pass has finished, after the last gradient was accumulated. Data-parallel
  training waits there for the averaging it started, so that `backward()` returns with the
  averaged gradients in `.grad`.

Both run with grad mode off, as the rest of `backward()` does; an exception raised by either
ends the `backward()` call with it.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Hook = Callable[[Any], None]

# id(leaf) -> its hooks, in registration order; an entry goes with its tensor
_hooks: dict[int, list[Hook]] = {}
_refs: dict[int, weakref.ref] = {}
_state = threading.local()  # .callbacks: a stack of lists, one per backward() running here
_pass_ids = itertools.count(1)  # each backward pass's number (current_pass)


class RemovableHandle:
    """What registering a hook returns: `remove()` unregisters it (a second call does
    nothing)."""

    def __init__(self, key: int, hook: Hook) -> None:
        self._key, self._hook = key, hook

    def remove(self) -> None:
        """Unregisters the hook."""
        hooks = _hooks.get(self._key)
        if hooks is not None and self._hook in hooks:
            hooks.remove(self._hook)
            if not hooks:
                _forget(self._key)


def register_post_accumulate_grad_hook(t: Any, hook: Hook) -> RemovableHandle:
    """Runs `hook(t)` in each `backward()` once the gradients that pass sends to the leaf `t`
    have all been accumulated into `t.grad` (see the module's docstring). `t` must be a leaf
    that requires grad, as in PyTorch."""
    if not callable(hook):
        raise TypeError(f"a hook must be callable, not {type(hook).__name__}")
    if not getattr(t, "requires_grad", False):
        raise RuntimeError("register_post_accumulate_grad_hook: the tensor does not require "
                           "grad, so backward() never accumulates a gradient into it")
    if getattr(t, "grad_fn", None) is not None:
        raise RuntimeError("register_post_accumulate_grad_hook: post-accumulate-grad hooks "
                           "go on leaf tensors (parameters); this one was made by an op")
    key = id(t)
    if key not in _hooks:
        _hooks[key] = []
        # the dicts bound now: at interpreter exit the module's globals may be gone first
        _refs[key] = weakref.ref(t, lambda _ref, key=key, hooks=_hooks, refs=_refs: (
            hooks.pop(key, None), refs.pop(key, None)))
    _hooks[key].append(hook)
    return RemovableHandle(key, hook)


def _forget(key: int) -> None:
    _hooks.pop(key, None)
    _refs.pop(key, None)


def hooks_of(leaf: Any) -> list[Hook] | None:
    """The post-accumulate-grad hooks of `leaf` (None when it has none)."""
    return _hooks.get(id(leaf)) if _hooks else None


def any_registered() -> bool:
    """Whether some tensor has a post-accumulate-grad hook (else backward() keeps no count)."""
    return bool(_hooks)


def queue_callback(callback: Callable[[], None]) -> None:
    """Runs `callback()` when the `backward()` running now (in this thread) has finished. A
    RuntimeError outside a backward pass."""
    stack = getattr(_state, "callbacks", None)
    if not stack:
        raise RuntimeError("queue_callback: no backward() is running (call it from a hook "
                           "that backward() runs, such as a post-accumulate-grad hook)")
    stack[-1].append(callback)


def current_pass() -> int:
    """A number for the backward pass running now in this thread (0 outside one): a hook
    that keeps state across the hooks of one pass tells a new pass from it (after a pass
    that ended on an exception, whose queued callbacks never ran)."""
    ids = getattr(_state, "ids", None)
    return ids[-1] if ids else 0


@contextmanager
def backward_pass() -> Iterator[None]:
    """Around one backward pass: the callbacks queued during it run at its end (not after an
    exception)."""
    stack = getattr(_state, "callbacks", None)
    if stack is None:
        stack = _state.callbacks = []
        _state.ids = []
    queued: list[Callable[[], None]] = []
    stack.append(queued)
    _state.ids.append(next(_pass_ids))
    try:
        yield
        while queued:  # a callback may queue another
            queued.pop(0)()
    finally:
        stack.pop()
        _state.ids.pop()


class AccumulationCount:
    """Which hooked leaves of one backward pass are complete: a leaf is once every node of
    the pass with an edge to it has run (or been skipped, having received no gradient), and
    it has received something. `order` is the pass's nodes, in the order they run."""

    def __init__(self, order: list[Any]) -> None:
        self.remaining: dict[int, int] = {}
        for node in order:
            for edge in node.edges:
                if edge is not None and edge.leaf is not None and id(edge.leaf) in _hooks:
                    key = id(edge.leaf)
                    self.remaining[key] = self.remaining.get(key, 0) + 1
        self.received: dict[int, Any] = {}

    def accumulated(self, leaf: Any) -> None:
        """`leaf.grad` received a gradient of this pass (from a root or a node)."""
        if id(leaf) in _hooks:
            self.received[id(leaf)] = leaf

    def roots_delivered(self) -> None:
        """The roots' own gradients are in: a root leaf no node sends to is complete."""
        for key, leaf in list(self.received.items()):
            if self.remaining.get(key, 0) == 0:
                self._fire(key, leaf)

    def node_done(self, node: Any) -> None:
        """`node` ran (or was skipped): its leaves may be complete now."""
        for edge in node.edges:
            if edge is None or edge.leaf is None:
                continue
            key = id(edge.leaf)
            left = self.remaining.get(key)
            if left is None:
                continue
            self.remaining[key] = left - 1
            if left == 1 and key in self.received:
                self._fire(key, self.received[key])

    def _fire(self, key: int, leaf: Any) -> None:
        del self.received[key]
        for hook in list(_hooks.get(key, ())):
            hook(leaf)
