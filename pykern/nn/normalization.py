"""`pk.nn.LayerNorm`."""

from __future__ import annotations

from collections.abc import Sequence

import pykern as pk
from pykern.nn import functional as F
from pykern.nn.module import Module
from pykern.nn.parameter import Parameter
from pykern.tensor.core.tensor import Tensor


class LayerNorm(Module):
    """Normalises the trailing `normalized_shape` dimensions; weight starts at ones and bias at
    zeros (both of shape `normalized_shape`) when `elementwise_affine`."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 dtype: object = pk.f32) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(s) for s in shape)
        self.eps, self.elementwise_affine = float(eps), bool(elementwise_affine)
        if self.elementwise_affine:
            self.weight = Parameter(pk.ones(self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(pk.zeros(self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
