"""`pk.nn.Parameter`: a tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor


class Parameter(Tensor):
    """A Tensor that requires grad and that a `Module` attribute registers as a parameter:
    `self.weight = pk.nn.Parameter(pk.zeros((3, 4)))`. It shares `data`'s memory (no copy)
    and starts outside any graph, as a leaf."""

    __slots__ = ()

    def __init__(self, data: object, requires_grad: bool = True) -> None:
        t = as_tensor(data, "Parameter: data")
        super().__init__(t.buffer, t.shape, t.dtype, t.element_strides, t.offset)
        if requires_grad:
            self.requires_grad_()

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
