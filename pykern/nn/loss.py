"""`pk.nn.CrossEntropyLoss`, `NLLLoss`, `MSELoss`: the loss functions of
`pk.nn.functional` as modules, with PyTorch's arguments. A per-class `weight` is a buffer
(in `state_dict()` under "weight", as PyTorch keeps it)."""

from __future__ import annotations

from pykern.nn import functional as F
from pykern.nn.functional_loss import REDUCTIONS, legacy_reduction
from pykern.nn.module import Module
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor


class _Loss(Module):
    def __init__(self, size_average: bool | None, reduce: bool | None, reduction: str) -> None:
        super().__init__()
        reduction = legacy_reduction(size_average, reduce, reduction)
        if reduction not in REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of {REDUCTIONS}, "
                             f"got {reduction!r}")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: object, size_average: bool | None, reduce: bool | None,
                 reduction: str) -> None:
        super().__init__(size_average, reduce, reduction)
        w = None if weight is None else as_tensor(weight, f"{type(self).__name__}: weight")
        self.register_buffer("weight", w)


class NLLLoss(_WeightedLoss):
    """F.nll_loss as a module: `NLLLoss()(log_probs, target)`."""

    def __init__(self, weight: object = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = int(ignore_index)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """F.cross_entropy as a module: `CrossEntropyLoss()(logits, target)`."""

    def __init__(self, weight: object = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = int(ignore_index), float(label_smoothing)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class MSELoss(_Loss):
    """F.mse_loss as a module: `MSELoss()(input, target)`."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)
