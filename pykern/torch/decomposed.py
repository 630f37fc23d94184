"""Operators run as PyTorch's own decompositions (`torch._decomp`): Python functions that
express an operator through other ATen operators, which then run on pykern one by one. Used
for the long tail of operators that have no pykern op of their own; each use is an entry of
the table, so what is decomposed is listed, not implied."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch._decomp

_TABLE = torch._decomp.decomposition_table


def decomposed(overload: torch._ops.OpOverload) -> Callable[..., object]:
    """`overload` run by its decomposition."""
    fn = _TABLE[overload]

    def impl(*args: object, **kwargs: object) -> object:
        return _done(fn(*args, **kwargs), overload)
    impl.__name__ = f"decomposed_{overload.__name__}"
    return impl


def decomposed_out(functional: torch._ops.OpOverload) -> Callable[..., object]:
    """The `.out` overload of `functional`: its decomposition's result copied into out (and
    into every out tensor of a multi-output operator)."""
    fn = _TABLE[functional]

    def impl(*args: object, **kwargs: object) -> object:
        outs = {k: kwargs.pop(k) for k in list(kwargs) if isinstance(kwargs[k], torch.Tensor)
                and k not in _argument_names(functional)}
        result = _done(fn(*args, **kwargs), functional)
        results = result if isinstance(result, tuple) else (result,)
        targets = list(outs.values())
        for target, value in zip(targets, results):
            if target.shape != value.shape:
                target.resize_(value.shape)
            target.copy_(value)
        return targets[0] if len(targets) == 1 else tuple(targets)
    impl.__name__ = f"decomposed_out_{functional.__name__}"
    return impl


def _done(result: object, overload: torch._ops.OpOverload) -> object:
    """A decomposition's result; NotImplemented (a case it does not cover) as the error of an
    unsupported operator."""
    if result is NotImplemented:
        raise NotImplementedError(f"the pykern device has no implementation of "
                                  f"aten::{overload._schema.name.split('::')[-1]} for these "
                                  "arguments (PyTorch's decomposition does not cover them)")
    return result


def _argument_names(overload: torch._ops.OpOverload) -> set[str]:
    return {a.name for a in overload._schema.arguments}


def decomposed_inplace(functional: torch._ops.OpOverload) -> Callable[..., object]:
    """The in-place overload of `functional`: its decomposition's result copied into self."""
    fn = _TABLE[functional]

    def impl(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        return self.copy_(fn(self, *args, **kwargs))
    impl.__name__ = f"decomposed_inplace_{functional.__name__}"
    return impl


def has(overload: torch._ops.OpOverload) -> bool:
    """Whether PyTorch has a decomposition of `overload`."""
    return overload in _TABLE
