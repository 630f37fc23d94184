"""`pk.optim.Adadelta`: PyTorch's rule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


from pykern.optim import rules
from pykern.optim.optimizer import Optimizer
from pykern.optim.params import check_flag, check_number, implementation_options

SQUARE_AVG, ACC_DELTA = "square_avg", "acc_delta"


class Adadelta(Optimizer):
    """torch.optim.Adadelta: for each parameter p with a gradient g (-g when maximizing),

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

        opt = pk.optim.Adadelta(model.parameters(), lr=1.0)

    The state ("step", square_avg, acc_delta) starts at zeros on a parameter's first step.
    """

    name = "Adadelta"
    rule = staticmethod(rules.adadelta_rule)
    state_names = (SQUARE_AVG, ACC_DELTA)
    row_columns = rules.ADADELTA_COLUMNS
    _copied = {rules.ADADELTA_LR: "lr", rules.ADADELTA_RHO: "rho", rules.ADADELTA_EPS: "eps"}
    _complements = {rules.ADADELTA_WEIGHT: "rho"}

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize,
            **implementation_options(self.name, foreach=foreach, capturable=capturable,
                                     differentiable=differentiable)})

    def _check_group(self, group: dict[str, Any]) -> None:
        for key in ("lr", "eps", "weight_decay"):
            check_number(key, group[key], self.name)
        check_number("rho", group["rho"], self.name)
        if group["rho"] > 1:
            raise ValueError(f"{self.name}: rho must be in [0, 1], got {group['rho']}")
        check_flag("maximize", group["maximize"], self.name)

