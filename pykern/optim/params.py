"""Parameter groups and the checks of an optimizer's arguments: what `params` may be (tensors
or dicts of groups), each group's defaults filled in, and hyperparameters that must be
numbers in a range."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

from pykern.tensor.core.tensor import Tensor


def check_number(name: str, value: object, optimizer: str, *, low: float = 0.0,
                 below: float | None = None) -> None:
    """ValueError/TypeError naming `name` unless `value` is a real number >= low (and < below
    when given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{optimizer}: {name} must be a number, not {type(value).__name__}")
    if not value >= low or (below is not None and not value < below):  # NaN fails both
        where = f"in [{low}, {below})" if below is not None else f">= {low}"
        raise ValueError(f"{optimizer}: {name} must be {where}, got {value}")


def groups_of(params: Iterable[Any], defaults: dict[str, Any], name: str
              ) -> list[dict[str, Any]]:
    """The parameter groups: one of all `params`, or the dicts given, with defaults filled."""
    if isinstance(params, (Tensor, dict)) or not isinstance(params, Iterable):
        raise TypeError(f"{name}: params must be an iterable of pk.Tensors or of dicts, not a "
                        f"{type(params).__name__}")
    items = list(params)
    if not items:
        raise ValueError(f"{name}: params is an empty list of parameters")
    as_dicts = isinstance(items[0], dict)
    if not as_dicts:
        items = [{"params": items}]
    groups = []
    for gi, g in enumerate(items):
        if not isinstance(g, dict):
            raise TypeError(f"{name}: params[{gi}] is a {type(g).__name__}; give all "
                            "parameters as tensors or all as dicts")
        where = f"params[{gi}]['params']" if as_dicts else "params"
        if "params" not in g:
            raise ValueError(f"{name}: the parameter group params[{gi}] has no 'params'")
        tensors = g["params"]
        tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
        for k, p in enumerate(tensors):
            _check_param(p, f"{where}[{k}]", name)
        groups.append({**defaults, **{k: v for k, v in g.items() if k != "params"},
                       "params": tensors})
    return groups


def _check_param(p: object, where: str, name: str) -> None:
    if not isinstance(p, Tensor):
        raise TypeError(f"{name}: {where} is a {type(p).__name__}, not a pk.Tensor")
    if not (p.dtype.is_float or p.dtype.is_complex):
        raise TypeError(f"{name}: {where} has dtype {p.dtype.name}; only floating-point and "
                        "complex parameters can be optimized")


def check_distinct(params: list[Tensor], name: str) -> None:
    seen: set[int] = set()
    for p in params:
        if id(p) in seen:
            raise ValueError(f"{name}: a parameter of shape {p.shape} appears more than once "
                             "in params")
        seen.add(id(p))


def check_flag(name: str, value: object, optimizer: str) -> None:
    """TypeError unless `value` is a bool (nesterov, amsgrad, maximize, centered...)."""
    if not isinstance(value, bool):
        raise TypeError(f"{optimizer}: {name} must be True or False, not {value!r}")


def check_betas(group: dict[str, Any], optimizer: str) -> None:
    """group["betas"] as a pair of numbers in [0, 1) (a list, as JSON gives it, too)."""
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(f"{optimizer}: betas must be a pair of numbers, got {betas!r}")
    check_number("betas[0]", betas[0], optimizer, below=1.0)
    check_number("betas[1]", betas[1], optimizer, below=1.0)
    group["betas"] = (betas[0], betas[1])


# the arguments PyTorch's optimizers take for their implementation choices; pykern accepts
# and keeps them (so that code and state dicts carry over) and always runs its fused kernel
IMPLEMENTATION_KEYS = ("foreach", "capturable", "differentiable", "fused")


def implementation_options(optimizer: str, **options: Any) -> dict[str, Any]:
    """The implementation choices as group entries; `differentiable=True` (a step recorded
    by autograd) is refused."""
    if options.get("differentiable"):
        raise NotImplementedError(f"{optimizer}: differentiable=True is not supported (the "
                                  "step is not recorded by autograd)")
    return options
