"""`pk.optim.SGD`: stochastic gradient descent with momentum and weight decay, PyTorch's rule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from pykern.optim import kernels as ks
from pykern.optim.flat import FlatStore
from pykern.optim.optimizer import Optimizer, check_number
from pykern.tensor.tensor import Tensor

MOMENTUM = "momentum_buffer"


class SGD(Optimizer):
    """torch.optim.SGD (dampening 0, no Nesterov): for each parameter p with a gradient g,

        d = g + weight_decay * p
        b = d (first step) or momentum * b + d;  d = b      (only when momentum != 0)
        p = p - lr * d

        opt = pk.optim.SGD(params, lr=0.1, momentum=0.9)
        opt.zero_grad(); loss.backward(); opt.step()

    `params` is an iterable of tensors or of dicts (parameter groups, each with its own
    hyperparameters). One step is one kernel launch per parameter dtype.
    """

    name = "SGD"

    def __init__(self, params: Iterable[Any], lr: float, momentum: float = 0.0,
                 weight_decay: float = 0.0) -> None:
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay})
        self._has_buffer = [False] * len(self._params)

    def _check_group(self, group: dict[str, Any]) -> None:
        for key in ("lr", "momentum", "weight_decay"):
            check_number(key, group[key], self.name)

    def _row(self, index: int, active: bool) -> np.ndarray:
        g = self._group(index)
        row = np.zeros(ks.SGD_COLUMNS)
        row[ks.SGD_ACTIVE] = active
        row[ks.SGD_LR] = g["lr"]
        row[ks.SGD_WEIGHT_DECAY] = g["weight_decay"]
        row[ks.SGD_MOMENTUM] = g["momentum"]
        row[ks.SGD_FIRST] = not self._has_buffer[index]
        return row

    def _launch(self, store: FlatStore, hyper: Tensor) -> None:
        uses_momentum = any(self._group(i)["momentum"] != 0 for i in store.indices)
        buffer = store.state(MOMENTUM) if uses_momentum else store.unused
        ks.sgd_kernel(store.lane_dtype)[store.lanes](
            store.lane_values, store.lane_grads, store.master_or_unused(), buffer,
            store.chunk_segment, store.segment_end, hyper)

    def _after_step(self, indices: list[int], active: list[bool]) -> None:
        for i, on in zip(indices, active):
            if on and self._group(i)["momentum"] != 0:
                self._has_buffer[i] = True

    def _param_state(self, index: int) -> dict[str, Any]:
        if not self._has_buffer[index]:
            return {}
        store, k = self._where(index)
        state: dict[str, Any] = {MOMENTUM: store.segment(store.state(MOMENTUM), k)}
        if store.master is not None:
            state["master_param"] = store.segment(store.master, k)
        return state

    def _clear_state(self) -> None:
        super()._clear_state()
        self._has_buffer = [False] * len(self._params)

    def _load_param_state(self, index: int, entry: dict[str, Any]) -> None:
        store, _ = self._where(index)
        if entry.get(MOMENTUM) is not None:
            self._load_tensor(index, store.state(MOMENTUM), entry[MOMENTUM], MOMENTUM)
            self._has_buffer[index] = True
        if store.master is not None and "master_param" in entry:
            self._load_tensor(index, store.master, entry["master_param"], "master_param")
