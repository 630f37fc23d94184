"""`pk.optim.AdamW`: Adam with decoupled weight decay, PyTorch's rule."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

import pykern as pk

from pykern.optim import kernels as ks
from pykern.optim.flat import FlatStore
from pykern.optim.optimizer import Optimizer, check_number
from pykern.tensor.tensor import Tensor

EXP_AVG, EXP_AVG_SQ = "exp_avg", "exp_avg_sq"


class AdamW(Optimizer):
    """torch.optim.AdamW (no amsgrad): at step t of a parameter p with gradient g,

        p = p * (1 - lr * weight_decay)
        m = m + (1 - beta1) * (g - m);   v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

        opt = pk.optim.AdamW(model.parameters(), lr=1e-3)

    Each parameter counts its own steps (one skipped for lack of a gradient does not count).
    `params` is an iterable of tensors or of dicts (parameter groups). One step is one kernel
    launch per parameter dtype.
    """

    name = "AdamW"

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def _check_group(self, group: dict[str, Any]) -> None:
        check_number("lr", group["lr"], self.name)
        check_number("eps", group["eps"], self.name)
        check_number("weight_decay", group["weight_decay"], self.name)
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"{self.name}: betas must be a pair of numbers, got {betas!r}")
        check_number("betas[0]", betas[0], self.name, below=1.0)
        check_number("betas[1]", betas[1], self.name, below=1.0)
        group["betas"] = (betas[0], betas[1])

    def _row(self, index: int, active: bool) -> np.ndarray:
        g = self._group(index)
        beta1, beta2 = g["betas"]
        t = max(self._steps[index], 1)
        row = np.zeros(ks.ADAM_COLUMNS)
        row[ks.ADAM_ACTIVE] = active
        row[ks.ADAM_DECAY] = 1 - g["lr"] * g["weight_decay"]
        row[ks.ADAM_WEIGHT1] = 1 - beta1
        row[ks.ADAM_BETA2] = beta2
        row[ks.ADAM_WEIGHT2] = 1 - beta2
        row[ks.ADAM_EPS] = g["eps"]
        row[ks.ADAM_STEP_SIZE] = g["lr"] / (1 - beta1 ** t)
        row[ks.ADAM_BC2_SQRT] = math.sqrt(1 - beta2 ** t)
        return row

    def _launch(self, store: FlatStore, hyper: Tensor) -> None:
        ks.adamw_kernel(store.lane_dtype)[store.lanes](
            store.lane_values, store.lane_grads, store.master_or_unused(), store.state(EXP_AVG),
            store.state(EXP_AVG_SQ), store.chunk_segment, store.segment_end, hyper)

    def _param_state(self, index: int) -> dict[str, Any]:
        if not self._steps[index]:
            return {}
        store, k = self._where(index)
        state: dict[str, Any] = {
            "step": pk.asarray(np.float32(self._steps[index])),
            EXP_AVG: store.segment(store.state(EXP_AVG), k),
            EXP_AVG_SQ: store.segment(store.state(EXP_AVG_SQ), k),
        }
        if store.master is not None:
            state["master_param"] = store.segment(store.master, k)
        return state

    def _clear_state(self) -> None:
        super()._clear_state()
        for store in self._stores:
            for name in (EXP_AVG, EXP_AVG_SQ):
                if store.has_state(name):
                    store.state(name)[...] = 0

    def _load_param_state(self, index: int, entry: dict[str, Any]) -> None:
        store, _ = self._where(index)
        step = entry.get("step", 0)
        self._steps[index] = int(float(step.item() if isinstance(step, Tensor) else step))
        for name in (EXP_AVG, EXP_AVG_SQ):
            if name in entry:
                self._load_tensor(index, store.state(name), entry[name], name)
        if store.master is not None and "master_param" in entry:
            self._load_tensor(index, store.master, entry["master_param"], "master_param")
