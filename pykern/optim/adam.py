"""`pk.optim.Adam` and `pk.optim.AdamW`: Adam with L2 or decoupled weight decay, and the
amsgrad variant, PyTorch's rules."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from pykern.optim import rules
from pykern.optim.optimizer import Optimizer
from pykern.optim.params import (check_betas, check_flag, check_number,
                                 implementation_options)

EXP_AVG, EXP_AVG_SQ, MAX_EXP_AVG_SQ = "exp_avg", "exp_avg_sq", "max_exp_avg_sq"


class Adam(Optimizer):
    """torch.optim.Adam: at step t of a parameter p with gradient g (-g when maximizing),

        g = g + weight_decay * p      (AdamW, decoupled_weight_decay: p = p * (1 - lr * wd))
        m = m + (1 - beta1) * (g - m);   v = beta2 * v + (1 - beta2) * g * g
        (amsgrad: v_max = max(v_max, v), used below in place of v)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

        opt = pk.optim.Adam(model.parameters(), lr=1e-3)

    Each parameter counts its own steps (one skipped for lack of a gradient does not count).
    `params` is an iterable of tensors or of dicts (parameter groups). One step is one kernel
    launch per parameter dtype. `foreach`, `capturable` and `fused` are accepted and kept in
    the groups, as PyTorch's.
    """

    name = "Adam"
    rule = staticmethod(rules.adam_rule)
    state_names = (EXP_AVG, EXP_AVG_SQ, MAX_EXP_AVG_SQ)
    row_columns = rules.ADAM_COLUMNS

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        super().__init__(params, {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize,
            **implementation_options(self.name, foreach=foreach, capturable=capturable,
                                     differentiable=differentiable, fused=fused),
            "decoupled_weight_decay": decoupled_weight_decay})

    def _check_group(self, group: dict[str, Any]) -> None:
        check_number("lr", group["lr"], self.name)
        check_number("eps", group["eps"], self.name)
        check_number("weight_decay", group["weight_decay"], self.name)
        check_betas(group, self.name)
        for flag in ("amsgrad", "maximize", "decoupled_weight_decay"):
            check_flag(flag, group[flag], self.name)

    def _l2_weight_decay(self, group: dict[str, Any]) -> float:
        return 0.0 if group["decoupled_weight_decay"] else group["weight_decay"]

    def _row(self, index: int, row: np.ndarray) -> None:
        g = self._group(index)
        beta1, beta2 = g["betas"]
        t = max(self._steps[index], 1)
        decoupled = g["decoupled_weight_decay"]
        row[rules.ADAM_DECAY] = 1 - g["lr"] * g["weight_decay"] if decoupled else 1.0
        row[rules.ADAM_WEIGHT1] = 1 - beta1
        row[rules.ADAM_BETA2] = beta2
        row[rules.ADAM_WEIGHT2] = 1 - beta2
        row[rules.ADAM_EPS] = g["eps"]
        row[rules.ADAM_STEP_SIZE] = g["lr"] / (1 - beta1 ** t)
        row[rules.ADAM_BC2_SQRT] = math.sqrt(1 - beta2 ** t)
        row[rules.ADAM_AMSGRAD] = g["amsgrad"]

    def _uses(self, name: str, index: int) -> bool:
        return name != MAX_EXP_AVG_SQ or self._group(index)["amsgrad"]


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay (p = p * (1 - lr * weight_decay)
    before the update), weight_decay 0.01 by default.

        opt = pk.optim.AdamW(model.parameters(), lr=1e-3)
    """

    name = "AdamW"

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
