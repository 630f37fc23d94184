"""`pk.nn.Flatten` and `pk.nn.Unflatten`: reshapes as layers (views where the layout
allows, copies otherwise; the gradient flows through either)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pykern.nn.module import Module
from pykern.tensor.core.tensor import Tensor, normalize_axis


class Flatten(Module):
    """Merges dimensions start_dim..end_dim into one: (N, C, H, W) becomes (N, C·H·W) with
    the defaults (start_dim=1, end_dim=-1)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """x with dimensions start_dim..end_dim merged, as `torch.flatten`."""
    if x.ndim == 0:
        return x.reshape(1)
    start = normalize_axis(start_dim, x.ndim, "start_dim")
    end = normalize_axis(end_dim, x.ndim, "end_dim")
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for a "
                         f"{x.ndim}-d input")
    merged = math.prod(x.shape[start:end + 1])
    return x.reshape(x.shape[:start] + (merged,) + x.shape[end + 1:])


class Unflatten(Module):
    """Splits dimension `dim` into `unflattened_size` (whose product must be its size; one
    entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = int(dim), tuple(int(s) for s in unflattened_size)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        d = normalize_axis(self.dim, input.ndim, "dim")
        sizes = list(self.unflattened_size)
        if sizes.count(-1) == 1:
            known = math.prod(s for s in sizes if s != -1)
            sizes[sizes.index(-1)] = input.shape[d] // known if known else 0
        if math.prod(sizes) != input.shape[d]:
            raise ValueError(f"Unflatten: unflattened_size {self.unflattened_size} does not "
                             f"multiply to the size {input.shape[d]} of dimension {self.dim}")
        return input.reshape(input.shape[:d] + tuple(sizes) + input.shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
