"""`pk.optim.SGD`: stochastic gradient descent with momentum, dampening, Nesterov momentum and
weight decay, PyTorch's rule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from pykern.optim import rules
from pykern.optim.optimizer import Optimizer
from pykern.optim.params import check_flag, check_number, implementation_options

MOMENTUM = "momentum_buffer"


class SGD(Optimizer):
    """torch.optim.SGD: for each parameter p with a gradient g (-g when maximizing),

        g = g + weight_decay * p
        b = g (first step) or momentum * b + (1 - dampening) * g    (when momentum != 0)
        d = g + momentum * b (nesterov) or b;  p = p - lr * d

        opt = pk.optim.SGD(params, lr=0.1, momentum=0.9)
        opt.zero_grad(); loss.backward(); opt.step()

    `params` is an iterable of tensors or of dicts (parameter groups, each with its own
    hyperparameters). One step is one kernel launch per parameter dtype. `foreach` and
    `fused` are accepted and kept in the groups, as PyTorch's.
    """

    name = "SGD"
    rule = staticmethod(rules.sgd_rule)
    state_names = (MOMENTUM,)
    counts_steps = False
    row_columns = rules.SGD_COLUMNS
    _copied = {rules.SGD_LR: "lr", rules.SGD_MOMENTUM: "momentum",
               rules.SGD_NESTEROV: "nesterov"}
    _complements = {rules.SGD_DAMPENED: "dampening"}

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        self._has_buffer: list[bool] = []
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    **implementation_options(self.name, foreach=foreach,
                                             differentiable=differentiable, fused=fused)}
        super().__init__(params, defaults)
        self._has_buffer = [False] * len(self._params)

    def _check_group(self, group: dict[str, Any]) -> None:
        for key in ("lr", "momentum", "dampening", "weight_decay"):
            check_number(key, group[key], self.name)
        check_flag("nesterov", group["nesterov"], self.name)
        check_flag("maximize", group["maximize"], self.name)
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"{self.name}: nesterov momentum needs a momentum > 0 and "
                             f"dampening 0, got momentum={group['momentum']}, "
                             f"dampening={group['dampening']}")

    def _row(self, index: int, row: np.ndarray) -> None:
        row[rules.SGD_FIRST] = not self._has_buffer[index]

    def _row_key(self, index: int, active: bool) -> tuple:
        return (*super()._row_key(index, active), self._has_buffer[index])

    def _uses(self, name: str, index: int) -> bool:
        # a buffer once made stays in the state, as PyTorch keeps it
        return self._group(index)["momentum"] != 0 or self._has_buffer[index]

    def _has_state(self, index: int) -> bool:
        return self._has_buffer[index]

    def _after_step(self, indices: list[int], active: list[bool]) -> None:
        for i, on in zip(indices, active):
            if on and self._group(i)["momentum"] != 0:
                self._has_buffer[i] = True

    def _clear_state(self) -> None:
        super()._clear_state()
        self._has_buffer = [False] * len(self._params)

    def _load_param_state(self, index: int, entry: dict[str, Any]) -> None:
        super()._load_param_state(index, entry)
        self._has_buffer[index] = entry.get(MOMENTUM) is not None
