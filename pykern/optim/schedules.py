"""The learning-rate schedules of `pk.optim.lr_scheduler` that follow a formula of the epoch:
LambdaLR, StepLR, MultiStepLR, ConstantLR, LinearLR, ExponentialLR, CosineAnnealingLR.

Each computes the next rate as PyTorch's does, from the groups' current rates (so the floats
are PyTorch's, and schedules on one optimizer compose), with the closed form for
`step(epoch)`."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence

from pykern.optim.optimizer import Optimizer
from pykern.optim.scheduler_base import LRScheduler

Factor = Callable[[int], float]


class LambdaLR(LRScheduler):
    """The rate of group g at epoch e is `initial_lr * lr_lambda(e)` (one function for every
    group, or a list of one per group). Its state dict leaves the functions out: to resume,
    create it again with the same functions and `last_epoch`, then load the state."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Factor | Sequence[Factor],
                 last_epoch: int = -1) -> None:
        groups = getattr(optimizer, "param_groups", [])
        factors = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else \
            [lr_lambda] * len(groups)
        if len(factors) != len(groups):
            raise ValueError(f"LambdaLR: {len(factors)} lr_lambdas for {len(groups)} "
                             "parameter groups")
        for k, f in enumerate(factors):
            if not callable(f):
                raise TypeError(f"LambdaLR: lr_lambda[{k}] is a {type(f).__name__}, not a "
                                "function")
        self.lr_lambdas = factors
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * float(f(self.last_epoch)) for f, base in zip(self.lr_lambdas,
                                                                    self.base_lrs)]


class StepLR(LRScheduler):
    """The rate times `gamma` every `step_size` epochs: initial_lr · gamma^(epoch // step_size).

        scheduler = pk.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """The rate times `gamma` at each epoch of `milestones` (a milestone given twice
    multiplies by gamma² there)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = sorted(int(m) for m in milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        times = self.milestones.count(self.last_epoch)
        if not times:
            return self._group_lrs()
        return [lr * self.gamma ** times for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** bisect_right(self.milestones, self.last_epoch)
                for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """The rate times `factor` until epoch `total_iters`, then the rate itself."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._group_lrs()]
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return [lr * (1.0 / self.factor) for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The rate's factor goes linearly from `start_factor` to `end_factor` over `total_iters`
    epochs, then stays: a warmup with the defaults (1/3 to 1 over 5 epochs)."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._group_lrs()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        delta = self.end_factor - self.start_factor
        ratio = 1.0 + delta / (self.total_iters * self.start_factor
                               + (self.last_epoch - 1) * delta)
        return [lr * ratio for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """The rate times `gamma` every epoch: initial_lr · gamma^epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial rate to `eta_min` over `T_max` epochs:
    eta_min + (initial_lr - eta_min)·(1 + cos(π·epoch/T_max))/2, computed step by step from
    the current rate as PyTorch does (past T_max it rises again, a cosine's next half)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, t, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._group_lrs()
        if self._step_count == 1 and e > 0:
            return [low + (base - low) * (1 + math.cos(e * math.pi / t)) / 2
                    for base in self.base_lrs]
        if (e - 1 - t) % (2 * t) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / t)) / 2
                    for base, lr in zip(self.base_lrs, self._group_lrs())]
        return [(1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
                * (lr - low) + low for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]
