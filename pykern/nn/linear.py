"""`pk.nn.Linear`: y = x @ weightᵀ + bias, with PyTorch's initialisation."""

from __future__ import annotations

import math

import pykern as pk
from pykern.nn import functional as F
from pykern.nn import init
from pykern.nn.module import Module
from pykern.nn.parameter import Parameter
from pykern.tensor.core.tensor import Tensor


class Linear(Module):
    """weight (out_features, in_features) from U(-1/sqrt(in), 1/sqrt(in)) (PyTorch's
    kaiming_uniform(a=sqrt(5))), bias (out_features,) from the same bound."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: object = pk.f32) -> None:
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        add_weight_and_bias(self, (self.out_features, self.in_features),
                            self.out_features if bias else None, dtype)

    def reset_parameters(self) -> None:
        """Draws the weight and bias again (PyTorch's default initialisation)."""
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def add_weight_and_bias(module: Module, shape: tuple[int, ...], bias_size: int | None,
                        dtype: object) -> None:
    """Gives `module` its parameters `weight` (of `shape`) and `bias` (of `bias_size`
    elements; None: no bias, registered as None as PyTorch's layers do), drawn by its
    `reset_parameters`."""
    module.weight = Parameter(pk.empty(shape, dtype))
    if bias_size is not None:
        module.bias = Parameter(pk.empty((bias_size,), dtype))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


def reset_weight_and_bias(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's default for Linear and the convolutions: kaiming_uniform_(a=sqrt(5)) on the
    weight, i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias."""
    init.kaiming_uniform_(weight, a=math.sqrt(5.0))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(bias, -bound, bound)
