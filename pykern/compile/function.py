"""`pk.compile`: a function of tensors recorded on its first call for each argument signature
and replayed on later ones with the new arguments' tensors bound in place of the recorded
ones (docs/performance.md, "Compiled functions").

Each signature (the tensor arguments' dtypes, shapes, strides and device, the other arguments
by value, grad mode and autocast) has an `Entry`. Its first call is recorded, and where that
call left nothing behind that its Python decides on next time (`first_call.py`: no state made
or written outside its results and arguments, no `.grad`, no host data uploaded, no Python
values returned) the second call already replays: a forward pass, an elementwise function, a
loss. Otherwise (a training step: the optimizer makes its state, backward sets `.grad`; a
module fills a cache) the next call is recorded too, until two recordings in a row agree
(`fingerprint.py`) or one leaves nothing behind. From then on a call whose guards hold (its
modules in the same training mode, the same `.grad` state) replays; a call whose guards fail is
recorded again, as a variant. Three recordings in a row that each differ from the one before
mean the Python decides something per call that a replay cannot repeat: a `pk.GraphError`
names the launch and the line.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable
from typing import Any

from pykern.autograd.mode import is_grad_enabled
from pykern.compile.fingerprint import difference
from pykern.compile.record import record
from pykern.compile.recorded import Recorded
from pykern.compile.structure import Leaf, fill, flatten, tensor_key
from pykern.jit import compiling
from pykern.runtime import get_device
from pykern.runtime.errors import GraphError
from pykern.runtime.selection import running_on
from pykern.tensor.core.autocast import autocast_dtype
from pykern.tensor.core.tensor import Tensor

LOG = logging.getLogger("pykern.jit")
SIGNATURES_MAX = 8  # signatures recorded per function; past them, new ones run eagerly
UNSTABLE_MAX = 3  # recordings in a row that each differ from the one before: refused
PENDING_MAX = 4  # states of the guards with a recording waiting to be confirmed


class Entry:
    """The recordings of one signature: those confirmed, and per state of the guards (the
    modules' modes, the `.grad` a backward meets) the last one not confirmed yet."""

    def __init__(self) -> None:
        self.ready: list[Recorded] = []
        # guards -> (the last recording, how many in a row differed from the one before)
        self.pending: dict[tuple, tuple[Recorded, int]] = {}

    def find(self) -> Recorded | None:
        for recorded in self.ready:
            if recorded.holds():
                return recorded
        return None

    def add(self, new: Recorded, name: str) -> None:
        """Keeps `new`: ready at once where its call left nothing behind that the next call
        decides on (`new.first_call_state` None), else where it agrees with the last recording
        made with the same guards; a GraphError where UNSTABLE_MAX in a row each differed from
        the one before."""
        guards = _guards(new)
        old, unstable = self.pending.pop(guards, (None, 0))
        if old is not None and _agree(old, new):
            old.release()
            self._ready(new)
            return
        if old is not None:
            why = _disagreement(old, new)
            old.release()
            unstable += 1
            if unstable + 1 >= UNSTABLE_MAX:
                new.release()
                raise GraphError(f"pk.compile: {name} does something different on every "
                                 f"call, which a replay would not: {why}")
        if new.first_call_state is None:
            self._ready(new)
            return
        LOG.debug("pk.compile: %s recorded again on its next call: %s", name,
                  new.first_call_state)
        if len(self.pending) >= PENDING_MAX:  # the oldest state goes
            dropped, _ = self.pending.pop(next(iter(self.pending)))
            dropped.release()
        self.pending[guards] = (new, unstable)

    def _ready(self, new: Recorded) -> None:
        self.ready = [r for r in self.ready if not r.device.closed]
        self.ready.append(new)

    def release(self) -> None:
        for recorded in self.ready:
            recorded.release()
        for recorded, _ in self.pending.values():
            recorded.release()
        self.ready, self.pending = [], {}


def _guards(r: Recorded) -> tuple:
    return (tuple((id(m), t) for m, t in r.modules),
            tuple((id(g), s) for g, s in r.grads_met))


def _agree(a: Recorded, b: Recorded) -> bool:
    return _disagreement(a, b) is None


def _disagreement(a: Recorded, b: Recorded) -> str | None:
    """What differs between two recordings of one signature (None where nothing does)."""
    why = difference(a.fingerprint, b.fingerprint, a.graph.log, b.graph.log)
    if why is not None:
        return why
    if a.result_key != b.result_key:
        return ("what it returns besides tensors differs (a Python value that changes per "
                "call): return tensors, or values that stay the same")
    if [(id(m), t) for m, t in a.modules] != [(id(m), t) for m, t in b.modules]:
        return "it runs other modules, or modules in another mode (train/eval), per call"
    if [(id(g), s) for g, s in a.grads_met] != [(id(g), s) for g, s in b.grads_met]:
        return ("backward() finds other .grad tensors per call (gradients accumulated across "
                "calls): call zero_grad() inside, or keep the pattern fixed")
    return None


class CompiledFunction:
    """A function made fast by `pk.compile` (call it as the function)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__qualname__", repr(fn))
        self._entries: dict[tuple, Entry] = {}
        self._warned = False
        self.replays = 0  # calls replayed
        self.recorded_calls = 0  # calls recorded (the first one or few of each signature)
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        device = get_device()
        if compiling.active() is not None or device.graph_recording:
            return self.fn(*args, **kwargs)  # inside a recording: part of the outer one
        tensors: list[Tensor] = []
        key: list = []
        if not kwargs and all(type(a) is Tensor and not a.requires_grad for a in args) \
                and len({id(a) for a in args}) == len(args):
            tensors = list(args)  # the common call: distinct tensors only, keyed as flatten
            key = [tensor_key(a) for a in args]  # would key them (a shorter key, same cases)
            template = (tuple(Leaf(i) for i in range(len(args))), {})
        else:
            template = flatten((args, kwargs), tensors, key, f"an argument of {self.name}")
        devices = {id(t.device): t.device for t in tensors}
        if len(devices) == 1:
            (device,) = devices.values()
        full = (tuple(key), device, is_grad_enabled(), autocast_dtype())
        entry = self._entries.get(full)
        if entry is None:
            if len(self._entries) >= SIGNATURES_MAX:
                self._too_many()
                return self.fn(*args, **kwargs)
            entry = self._entries[full] = Entry()
        with running_on(device):
            recorded = entry.find()
            if recorded is not None:
                self.replays += 1
                return fill(recorded.result_template, recorded.replay(tensors))
            self.recorded_calls += 1
            result, new = record(self.fn, template, tensors, self.name)
            entry.add(new, self.name)
        return result

    def _too_many(self) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(f"pk.compile: {self.name} was called with {SIGNATURES_MAX} argument "
                          "signatures (dtypes, shapes, other arguments' values); calls with "
                          "new ones run eagerly", stacklevel=3)

    def clear(self) -> None:
        """Forgets every recording (and frees what they hold)."""
        for entry in self._entries.values():
            entry.release()
        self._entries.clear()

    @property
    def recordings(self) -> int:
        """How many recordings the function replays (one per signature and
        variant)."""
        return sum(len(e.ready) for e in self._entries.values())

    def __repr__(self) -> str:
        return (f"<pk.compile {self.name}: {self.recordings} recordings, "
                f"{self.recorded_calls} calls recorded, {self.replays} replayed>")


def compile(fn: Callable[..., Any]) -> CompiledFunction:  # noqa: A001 (PyTorch's name)
    """Makes `fn`, a function of tensors, fast: its launches are recorded on its first call
    for each argument signature and replayed on later calls with the new arguments' tensors
    bound in place of the recorded ones (one submit per call, no per-op Python). A call that
    leaves state behind (a training step: the optimizer's moments, `.grad`) is recorded once
    more, and replay starts when two recordings agree.

        @pk.compile
        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

    Results are new tensors on each call, as eager ones; parameters, gradients and the
    optimizer's state are updated in place, and the optimizer's step counts, bias corrections
    and learning rate (a scheduler's too) advance as eagerly. What a replay cannot repeat is
    refused with a `pk.GraphError` naming the line: reading a tensor on the host inside
    (`t.item()`, `float(t)`, `print(t)`, `if t:`), a Python value that changes per call baked
    into a launch, random numbers (see docs/performance.md)."""
    if not callable(fn):
        raise TypeError(f"pk.compile takes a function, not {type(fn).__name__}")
    return CompiledFunction(fn)
