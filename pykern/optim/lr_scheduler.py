"""`pk.optim.lr_scheduler`: learning-rate schedules that set `group["lr"]` between steps.

    opt = pk.optim.AdamW(model.parameters(), lr=3e-4)
    warmup = pk.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 100))
    for xb, yb in batches:
        ...
        opt.step()
        warmup.step()

The optimizers read their groups' hyperparameters at every step (one row per parameter of the
fused kernel's table, computed on the host), so a schedule costs nothing on the device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pykern.optim.optimizer import Optimizer

Factor = Callable[[int], float]


class LambdaLR:
    """torch.optim.lr_scheduler.LambdaLR: the learning rate of group g at epoch e is
    `initial_lr * lr_lambda(e)` (one function for every group, or a list of one per group).

    Creating it stores each group's `lr` as `initial_lr` (kept there if `last_epoch` is given,
    to resume) and sets the rate of epoch `last_epoch + 1` (0 when new); each `step()` moves to
    the next epoch. Call `optimizer.step()` before `scheduler.step()`, as in PyTorch."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Factor | Sequence[Factor],
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"LambdaLR: optimizer must be a pk.optim optimizer, not a "
                            f"{type(optimizer).__name__}")
        groups = optimizer.param_groups
        factors = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else \
            [lr_lambda] * len(groups)
        if len(factors) != len(groups):
            raise ValueError(f"LambdaLR: {len(factors)} lr_lambdas for {len(groups)} "
                             "parameter groups")
        for k, f in enumerate(factors):
            if not callable(f):
                raise TypeError(f"LambdaLR: lr_lambda[{k}] is a {type(f).__name__}, not a "
                                "function")
        for k, group in enumerate(groups):
            if last_epoch == -1:
                group["initial_lr"] = group["lr"]
            elif "initial_lr" not in group:
                raise KeyError(f"LambdaLR: resuming at last_epoch={last_epoch} needs "
                               f"'initial_lr' in parameter group {k}")
        self.optimizer = optimizer
        self.lr_lambdas = factors
        self.base_lrs = [group["initial_lr"] for group in groups]
        self.last_epoch = last_epoch
        self._last_lr: list[float] = []
        self.step()

    def get_last_lr(self) -> list[float]:
        """The learning rate of each group, as last set."""
        return list(self._last_lr)

    def step(self) -> None:
        """Moves to the next epoch and sets every group's `lr` for it."""
        self.last_epoch += 1
        for group, base, factor in zip(self.optimizer.param_groups, self.base_lrs,
                                       self.lr_lambdas):
            group["lr"] = base * float(factor(self.last_epoch))
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The epoch and base rates (not the functions, which cannot be saved as data), as
        PyTorch's; savable with `pk.save`."""
        return {"base_lrs": list(self.base_lrs), "last_epoch": self.last_epoch,
                "_last_lr": list(self._last_lr)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores what `state_dict()` gave; the learning rates themselves are restored by the
        optimizer's own `load_state_dict`."""
        for key in ("base_lrs", "last_epoch"):
            if key not in state_dict:
                raise ValueError(f"LambdaLR.load_state_dict: the state dict has no {key!r}")
        self.base_lrs = list(state_dict["base_lrs"])
        self.last_epoch = int(state_dict["last_epoch"])
        self._last_lr = list(state_dict.get("_last_lr", []))
