"""Layers without parameters: the activations and Dropout."""

from __future__ import annotations

from pykern.nn import functional as F
from pykern.nn.module import Module
from pykern.tensor.tensor import Tensor


class ReLU(Module):
    """max(x, 0)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(input)


class GELU(Module):
    """GELU, exact or `approximate="tanh"`."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.silu(input)


class Dropout(Module):
    """Zeroes elements with probability p in training mode (scaling the rest by 1/(1-p)); the
    identity after `eval()`."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = float(p)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace=False"
