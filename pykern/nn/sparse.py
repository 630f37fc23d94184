"""`pk.nn.Embedding`: a lookup table of learnable rows."""

from __future__ import annotations

import pykern as pk
from pykern.nn import functional as F
from pykern.nn.module import Module
from pykern.nn.parameter import Parameter
from pykern.tensor.core.tensor import Tensor


class Embedding(Module):
    """weight (num_embeddings, embedding_dim) from N(0, 1), as PyTorch; row `padding_idx` (if
    given) starts at zero and gets no gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 dtype: object = pk.f32) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None:
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} is outside "
                                 f"[-{self.num_embeddings}, {self.num_embeddings})")
            padding_idx %= self.num_embeddings
        self.padding_idx = padding_idx
        w = pk.random.normal(0.0, 1.0, (self.num_embeddings, self.embedding_dim), dtype=dtype)
        if padding_idx is not None:
            w[padding_idx] = 0.0
        self.weight = Parameter(w)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        pad = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"
