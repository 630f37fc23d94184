"""Layers without parameters: the activations, Identity, and the Dropouts."""

from __future__ import annotations

from pykern.nn import functional as F
from pykern.nn.module import Module
from pykern.tensor.core.tensor import Tensor


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


class Dropout1d(Dropout):
    """Zeroes whole channels of (N, C, L) (or (C, L)) inputs with probability p in training
    mode, scaling the rest by 1/(1-p); the identity after `eval()`."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout1d(input, self.p, self.training)


class Dropout2d(Dropout):
    """Zeroes whole channels of (N, C, H, W) inputs with probability p in training mode,
    scaling the rest by 1/(1-p); the identity after `eval()`."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout2d(input, self.p, self.training)


class Identity(Module):
    """Returns its input (a placeholder, as PyTorch's; arguments are accepted and ignored)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.sigmoid(input)


def _legacy_dim(ndim: int) -> int:
    """PyTorch's choice when Softmax is given no dim: 0 for 0-, 1- and 3-d inputs, else 1."""
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    """softmax along `dim`."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(input, _legacy_dim(input.ndim) if self.dim is None else self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log_softmax along `dim`."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(input, _legacy_dim(input.ndim) if self.dim is None else self.dim)
