"""`pk.optim.lr_scheduler`: learning-rate schedules that set `group["lr"]` between steps,
with PyTorch's names, arguments and semantics (`last_epoch`, `get_last_lr()`, the step
after `optimizer.step()`).

    opt = pk.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    schedule = pk.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(90):
        train_one_epoch(model, opt)      # opt.step() for each batch
        schedule.step()

The optimizers read their groups' hyperparameters at every step (one row per parameter of the
fused kernel's table, computed on the host), so a schedule costs nothing on the device.
"""

from __future__ import annotations

from pykern.optim.one_cycle import OneCycleLR
from pykern.optim.scheduler_base import LRScheduler
from pykern.optim.schedules import (ConstantLR, CosineAnnealingLR, ExponentialLR, LambdaLR,
                                    LinearLR, MultiStepLR, StepLR)
from pykern.optim.sequential_lr import SequentialLR

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "CosineAnnealingLR", "OneCycleLR", "SequentialLR"]
