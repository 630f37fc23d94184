"""`OneCycleLR`: the 1cycle policy (Smith and Topor), with PyTorch's semantics: the rate
rises from max_lr/div_factor to max_lr and anneals to a far smaller minimum, while the
momentum (or Adam's beta1) moves the other way."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pykern.optim.optimizer import Optimizer
from pykern.optim.scheduler_base import LRScheduler

Number = float | Sequence[float]


class OneCycleLR(LRScheduler):
    """One cycle over `total_steps` steps (or `epochs * steps_per_epoch`), stepped after every
    batch: the rate goes from max_lr / div_factor up to `max_lr` over the first `pct_start`
    of the steps, then down to max_lr / div_factor / final_div_factor, by a cosine
    (`anneal_strategy="cos"`) or a line ("linear"). `three_phase` comes back to the initial
    rate before the final descent. With `cycle_momentum`, the groups' momentum (or beta1)
    goes from `max_momentum` down to `base_momentum` and back. `max_lr` and the momenta are a
    number or one per group. Stepping past total_steps raises ValueError.

        schedule = OneCycleLR(opt, max_lr=0.1, total_steps=len(batches) * epochs)
    """

    def __init__(self, optimizer: Optimizer, max_lr: Number, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: Number = 0.85,
                 max_momentum: Number = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"OneCycleLR: optimizer must be a pk.optim optimizer, not a "
                            f"{type(optimizer).__name__}")
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be a float in [0, 1], got "
                             f"{pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        self._phases = _phases(self.total_steps, pct_start, three_phase)
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group, top in zip(groups, _per_group("max_lr", optimizer, max_lr)):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"OneCycleLR: cycle_momentum needs an optimizer with momentum "
                                 f"or betas; {optimizer.name} has neither")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for group, high, low in zip(groups,
                                            _per_group("max_momentum", optimizer, max_momentum),
                                            _per_group("base_momentum", optimizer,
                                                       base_momentum)):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "linear":
            return (end - start) * pct + start
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; total_steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for k, (end, lr_keys, momentum_keys) in enumerate(self._phases):
                if step <= end or k == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr_keys[0]], group[lr_keys[1]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[momentum_keys[0]],
                                                               group[momentum_keys[1]], pct))
                    break
                start = end
        return lrs


def _total_steps(total_steps: int | None, epochs: int | None,
                 steps_per_epoch: int | None) -> int:
    if total_steps is not None:
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"OneCycleLR: total_steps must be a positive int, got "
                             f"{total_steps!r}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
    for name, v in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"OneCycleLR: {name} must be a positive int, got {v!r}")
    return epochs * steps_per_epoch


def _phases(total: int, pct_start: float, three_phase: bool
            ) -> list[tuple[float, tuple[str, str], tuple[str, str]]]:
    """(last step, (rate from, to), (momentum from, to)) of each phase, as group keys."""
    up = (float(pct_start * total) - 1, ("initial_lr", "max_lr"),
          ("max_momentum", "base_momentum"))
    if not three_phase:
        return [up, (total - 1, ("max_lr", "min_lr"), ("base_momentum", "max_momentum"))]
    return [up,
            (float(2 * pct_start * total) - 2, ("max_lr", "initial_lr"),
             ("base_momentum", "max_momentum")),
            (total - 1, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum"))]


def _per_group(name: str, optimizer: Optimizer, value: Number) -> list[float]:
    """`value` once per parameter group (a list or tuple must have one per group)."""
    groups = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != groups:
            raise ValueError(f"OneCycleLR: {name} has {len(value)} values for {groups} "
                             "parameter groups")
        return list(value)
    return [value] * groups
