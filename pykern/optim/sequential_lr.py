"""`SequentialLR`: schedules one after the other, switching at milestones, with PyTorch's
semantics (a warmup then a decay, say)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from pykern.jit import compiling
from pykern.optim.optimizer import Optimizer
from pykern.optim.scheduler_base import LRScheduler


class SequentialLR(LRScheduler):
    """Runs `schedulers[0]` until epoch `milestones[0]`, then `schedulers[1]` (restarted at
    its epoch 0, from the groups' initial rates) until `milestones[1]`, and so on. The
    schedules must drive `optimizer`; each was created before (which set the rates once):
    creating SequentialLR puts the groups back at their initial rates, steps every schedule
    back one epoch and makes the first one's initial step again, as PyTorch.

        warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
        decay = CosineAnnealingLR(opt, T_max=95)
        schedule = SequentialLR(opt, [warmup, decay], milestones=[5])
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int], last_epoch: int = -1) -> None:
        if not schedulers:
            raise ValueError("SequentialLR: expects at least one scheduler")
        for k, s in enumerate(schedulers):
            if not isinstance(s, LRScheduler):
                raise TypeError(f"SequentialLR: schedulers[{k}] is a {type(s).__name__}, not "
                                "a pk.optim.lr_scheduler schedule")
            if s.optimizer is not optimizer:
                raise ValueError(f"SequentialLR: schedulers[{k}] ({type(s).__name__}) drives "
                                 "another optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: expects one milestone fewer than schedulers, got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self.optimizer = optimizer
        self._schedulers = list(schedulers)
        self._milestones = [int(m) for m in milestones]
        self.last_epoch = last_epoch + 1
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:
            _step_back(s)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self, epoch: int | None = None) -> None:
        """Moves to the next epoch: a schedule whose milestone this is starts at its epoch 0
        (its closed form), the others step."""
        if epoch is not None:
            raise TypeError("SequentialLR.step takes no epoch")
        with compiling.replayed(self.step):  # (see LRScheduler.step)
            self._step()

    def _step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """Its own attributes and each schedule's state dict (under "_schedulers")."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores what `state_dict()` gave, the schedules' states included."""
        inner = state_dict.get("_schedulers")
        if not isinstance(inner, list) or len(inner) != len(self._schedulers):
            raise ValueError("SequentialLR.load_state_dict: the state dict's '_schedulers' "
                             f"does not hold {len(self._schedulers)} state dicts")
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for s, saved in zip(self._schedulers, inner):
            s.load_state_dict(saved)


def _step_back(s: LRScheduler) -> None:
    """One epoch back for `s` (and for the schedules inside it, when it holds some)."""
    inner = getattr(s, "_schedulers", None)
    if inner is not None:
        for t in inner:
            _step_back(t)
    else:
        s.last_epoch -= 1
