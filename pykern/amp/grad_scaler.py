"""`pk.amp.GradScaler`: dynamic loss scaling with PyTorch's rules and defaults.

The loss is multiplied by the scale before `backward()`, so that small gradients of f16
operands stay representable; `step` divides the gradients by it again (on the device) and
runs the optimizer's step only if every gradient is finite, which costs one read of a single
flag from the device per step. `update` then halves the scale after a step that found inf or
NaN and doubles it after `growth_interval` steps in a row that did not.
"""

from typing import Any

import pykern as pk
from pykern.optim.grads import get_grad


class GradScaler:
    """As `torch.amp.GradScaler`: `scale(loss)`, `unscale_(optimizer)`, `step(optimizer)`,
    `update(new_scale=None)`, `get_scale()`, `is_enabled()`, `state_dict()` /
    `load_state_dict()`. `device` is accepted for PyTorch's signature and ignored. With
    `enabled=False` every method passes through (scale 1, steps always taken)."""

    def __init__(self, device: str | None = None, init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if growth_factor <= 1.0:
            raise ValueError(f"GradScaler: growth_factor must be above 1, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: backoff_factor must be in (0, 1), got "
                             f"{backoff_factor}")
        if int(growth_interval) <= 0:
            raise ValueError(f"GradScaler: growth_interval must be positive, got "
                             f"{growth_interval}")
        if not init_scale > 0.0:
            raise ValueError(f"GradScaler: init_scale must be positive, got {init_scale}")
        self._enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._found_inf: dict[int, bool] = {}  # optimizer id -> what unscale_ found this step

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor, or a list/tuple of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer: Any) -> None:
        """Divides the gradients of `optimizer`'s parameters by the scale, in place, and notes
        whether one is inf or NaN. At most once per step (before clipping them, say)."""
        if not self._enabled:
            return
        if id(optimizer) in self._found_inf:
            raise RuntimeError("GradScaler.unscale_() was already called on this optimizer "
                               "since the last update()")
        grads = [g for group in optimizer.param_groups for p in group["params"]
                 if (g := get_grad(p)) is not None]
        inverse = 1.0 / self._scale
        with pk.no_grad():
            flags = []
            for g in grads:
                g *= inverse
                flags.append(pk.any(pk.logical_not(pk.isfinite(g))).reshape(1))
            found = bool(pk.any(pk.concat(flags))) if flags else False
        self._found_inf[id(optimizer)] = found

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscales (unless `unscale_` did) and runs `optimizer.step(*args, **kwargs)` if every
        gradient is finite; returns what it returned, or None for a skipped step."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._found_inf:
            self.unscale_(optimizer)
        if self._found_inf[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        """The scale for the next step: `new_scale` if given, else backed off after a step that
        found inf or NaN, grown after `growth_interval` finite steps in a row."""
        if not self._enabled:
            return
        found = any(self._found_inf.values())
        self._found_inf = {}
        if new_scale is not None:
            self._scale = float(new_scale)
            self._growth_tracker = 0
            return
        if found:
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
            return
        self._growth_tracker += 1
        if self._growth_tracker == self._growth_interval:
            self._scale *= self._growth_factor
            self._growth_tracker = 0

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's keys; empty when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if not state:
            raise RuntimeError("GradScaler.load_state_dict: the state is empty (it was saved "
                               "from a disabled scaler)")
        self._scale = float(state["scale"])
        self._growth_factor = float(state["growth_factor"])
        self._backoff_factor = float(state["backoff_factor"])
        self._growth_interval = int(state["growth_interval"])
        self._growth_tracker = int(state["_growth_tracker"])
