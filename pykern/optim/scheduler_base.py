"""`LRScheduler`: what PyTorch's learning-rate schedules share, with PyTorch's semantics.

Creating a schedule stores each group's `lr` as `initial_lr` (unless a schedule made before
already did; with `last_epoch` given, to resume, it must be there), takes those as
`base_lrs`, and makes the initial step: epoch `last_epoch + 1` (0 when new) and its rate.
Each `step()` then moves to the next epoch and sets every group's `lr`. Most schedules
compute the next rate from the current `group["lr"]` (PyTorch's "chainable" form), so two
schedules on one optimizer multiply their effects, as in PyTorch; `step(epoch)` jumps to
`epoch` with the closed form where the schedule has one.

Call `optimizer.step()` before `scheduler.step()`, as in PyTorch. Schedules change numbers
on the host only: the optimizer reads its groups' hyperparameters at every step.
"""

from __future__ import annotations

from typing import Any

from pykern.jit import compiling
from pykern.optim.optimizer import Optimizer

# what a state dict leaves out: the optimizer, and what cannot be saved as data
_NOT_SAVED = ("optimizer", "lr_lambdas")


class LRScheduler:
    """The base of the schedules: subclasses give `get_lr()` (the rates of the epoch
    `last_epoch` just moved to) and, where there is one, `_get_closed_form_lr()`."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        name = type(self).__name__
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{name}: optimizer must be a pk.optim optimizer, not a "
                            f"{type(optimizer).__name__}")
        self.optimizer = optimizer
        for k, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"{name}: resuming at last_epoch={last_epoch} needs "
                               f"'initial_lr' in parameter group {k} (load the optimizer's "
                               "state dict first)")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._is_initial = False
        self._initial_step()

    def _initial_step(self) -> None:
        """The step made at creation (or when SequentialLR starts this schedule)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The rates of epoch `last_epoch` (called by `step`; read the current rates with
        `get_last_lr()`)."""
        raise NotImplementedError(f"{type(self).__name__} defines no get_lr()")

    def get_last_lr(self) -> list[float]:
        """The learning rate of each group, as last set."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Moves to the next epoch (or to `epoch`, with the closed form where the schedule has
        one: a deprecated form in PyTorch) and sets every group's `lr` for it."""
        # a pk.compile replay repeats the step (the rate is host data the optimizer reads)
        with compiling.replayed(lambda: self.step(epoch)):
            self._step_count += 1
            self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        groups = self.optimizer.param_groups
        for group, lr in zip(groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in groups]

    def _group_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (and functions), as PyTorch's: data that
        `pk.save` can write."""
        return {k: v for k, v in self.__dict__.items() if k not in _NOT_SAVED}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores what `state_dict()` gave; the learning rates themselves are restored by the
        optimizer's own `load_state_dict`."""
        for key in ("base_lrs", "last_epoch"):
            if key not in state_dict:
                raise ValueError(f"{type(self).__name__}.load_state_dict: the state dict has "
                                 f"no {key!r}")
        self.__dict__.update({k: v for k, v in state_dict.items() if k not in _NOT_SAVED})
        self.base_lrs = list(self.base_lrs)
        self.last_epoch = int(self.last_epoch)
