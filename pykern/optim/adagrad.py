"""`pk.optim.Adagrad`: PyTorch's rule, with learning-rate decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from pykern.optim import rules
from pykern.optim.no_grad import no_grad
from pykern.optim.optimizer import Optimizer
from pykern.optim.params import check_flag, check_number, implementation_options

SUM = "sum"


class Adagrad(Optimizer):
    """torch.optim.Adagrad: at step t of a parameter p with gradient g (-g when maximizing),

        g = g + weight_decay * p
        sum = sum + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)

        opt = pk.optim.Adagrad(model.parameters(), lr=0.01)

    As in PyTorch, every parameter has its state from the start: "step" 0 and `sum` filled
    with `initial_accumulator_value` (for a complex parameter, the value's real part only).
    """

    name = "Adagrad"
    rule = staticmethod(rules.adagrad_rule)
    state_names = (SUM,)
    row_columns = rules.ADAGRAD_COLUMNS

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "maximize": maximize,
            **implementation_options(self.name, foreach=foreach,
                                     differentiable=differentiable, fused=fused)})
        self._fill_sums()

    def _check_group(self, group: dict[str, Any]) -> None:
        for key in ("lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value"):
            check_number(key, group[key], self.name)
        check_flag("maximize", group["maximize"], self.name)

    def _row(self, index: int, row: np.ndarray) -> None:
        g = self._group(index)
        row[rules.ADAGRAD_CLR] = g["lr"] / (1 + (self._steps[index] - 1) * g["lr_decay"])
        row[rules.ADAGRAD_EPS] = g["eps"]

    def _has_state(self, index: int) -> bool:
        return True

    def _clear_state(self) -> None:
        super()._clear_state()
        self._fill_sums()

    def _fill_sums(self) -> None:
        """Each parameter's `sum` set to its group's initial_accumulator_value."""
        with no_grad():
            for i, p in enumerate(self._params):
                store, k = self._where(i)
                if p.size:
                    store.segment(store.state(SUM), k)[...] = \
                        self._group(i)["initial_accumulator_value"]
