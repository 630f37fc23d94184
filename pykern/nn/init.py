"""The default initialisations of PyTorch's layers, as new tensors from `pk.random`.

PyTorch's `kaiming_uniform_(a=sqrt(5))` on a Linear weight, the layer's default, draws from
U(-1/sqrt(fan_in), 1/sqrt(fan_in)); its bias uses the same bound.
"""

from __future__ import annotations

import math

import pykern as pk
from pykern.tensor.tensor import Tensor


def fan_in(shape: tuple[int, ...]) -> int:
    """Inputs per output unit of a weight of `shape` (out, in, *kernel), as PyTorch computes
    it."""
    if len(shape) < 2:
        raise ValueError(f"fan_in needs a weight of 2 or more dimensions, got shape {shape}")
    return shape[1] * math.prod(shape[2:])


def kaiming_uniform(shape: tuple[int, ...], a: float = math.sqrt(5.0),
                    dtype: object = pk.f32) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + a²)) (leaky
    ReLU gain); a = sqrt(5) is the Linear default, giving bound = 1/sqrt(fan_in)."""
    gain = math.sqrt(2.0 / (1.0 + a * a))
    bound = gain * math.sqrt(3.0 / fan_in(shape)) if fan_in(shape) else 0.0
    return pk.random.uniform(-bound, bound, shape, dtype=dtype)


def uniform_bound(shape: tuple[int, ...], bound: float, dtype: object = pk.f32) -> Tensor:
    """U(-bound, bound)."""
    return pk.random.uniform(-bound, bound, shape, dtype=dtype)
