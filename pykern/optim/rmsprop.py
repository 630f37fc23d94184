"""`pk.optim.RMSprop`: PyTorch's rule, with momentum and the centered variant."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


from pykern.optim import rules
from pykern.optim.optimizer import Optimizer
from pykern.optim.params import check_flag, check_number, implementation_options

SQUARE_AVG, MOMENTUM, GRAD_AVG = "square_avg", "momentum_buffer", "grad_avg"


class RMSprop(Optimizer):
    """torch.optim.RMSprop: for each parameter p with a gradient g (-g when maximizing),

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v) + eps    (centered: a = a + (1 - alpha) * (g - a), avg = sqrt(v - a²) + eps)
        momentum > 0: b = momentum * b + g / avg, p = p - lr * b;  else p = p - lr * g / avg

        opt = pk.optim.RMSprop(model.parameters(), lr=0.01)

    The state ("step", square_avg, and momentum_buffer / grad_avg when used) starts at zeros
    on a parameter's first step.
    """

    name = "RMSprop"
    rule = staticmethod(rules.rmsprop_rule)
    state_names = (SQUARE_AVG, MOMENTUM, GRAD_AVG)
    row_columns = rules.RMS_COLUMNS
    _copied = {rules.RMS_LR: "lr", rules.RMS_ALPHA: "alpha", rules.RMS_EPS: "eps",
               rules.RMS_MOMENTUM: "momentum", rules.RMS_CENTERED: "centered"}
    _complements = {rules.RMS_WEIGHT: "alpha"}

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "maximize": maximize,
            **implementation_options(self.name, capturable=capturable, foreach=foreach,
                                     differentiable=differentiable)})

    def _check_group(self, group: dict[str, Any]) -> None:
        for key in ("lr", "alpha", "eps", "weight_decay", "momentum"):
            check_number(key, group[key], self.name)
        check_flag("centered", group["centered"], self.name)
        check_flag("maximize", group["maximize"], self.name)


    def _uses(self, name: str, index: int) -> bool:
        g = self._group(index)
        return (name == SQUARE_AVG or (name == MOMENTUM and g["momentum"] > 0)
                or (name == GRAD_AVG and g["centered"]))
