"""`pk.nn.Linear`: y = x @ weightᵀ + bias, with PyTorch's initialisation."""

from __future__ import annotations

import math

import pykern as pk
from pykern.nn import functional as F
from pykern.nn import init
from pykern.nn.module import Module
from pykern.nn.parameter import Parameter
from pykern.tensor.tensor import Tensor


class Linear(Module):
    """weight (out_features, in_features) from U(-1/sqrt(in), 1/sqrt(in)) (PyTorch's
    kaiming_uniform(a=sqrt(5))), bias (out_features,) from the same bound."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: object = pk.f32) -> None:
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = Parameter(init.kaiming_uniform((self.out_features, self.in_features),
                                                     dtype=dtype))
        if bias:
            bound = 1.0 / math.sqrt(self.in_features) if self.in_features else 0.0
            self.bias = Parameter(init.uniform_bound((self.out_features,), bound, dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
