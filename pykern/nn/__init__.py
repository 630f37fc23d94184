"""`pk.nn`: neural-network layers with PyTorch's names, shapes, initialisations and
`state_dict()` keys, built on pykern tensors and autograd; `pk.nn.functional` holds the
functional forms."""

from __future__ import annotations

from pykern.nn import functional

__all__ = ["functional"]
