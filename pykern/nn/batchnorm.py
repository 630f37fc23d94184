"""`pk.nn.BatchNorm1d` and `BatchNorm2d`: batch normalisation with PyTorch's parameters
(`weight` ones, `bias` zeros unless `bias=False`), buffers (`running_mean` zeros,
`running_var` ones, `num_batches_tracked` an i64 count) and `state_dict()` keys, in that
order.

In training mode the batch's statistics normalise and the running ones follow them
(momentum, or with `momentum=None` the cumulative average over the batches seen); after
`eval()` the running statistics normalise. Without `track_running_stats` there are no
buffers and the batch's statistics are used in both modes, as in PyTorch.
"""

from __future__ import annotations

import pykern as pk
from pykern.nn import functional as F
from pykern.nn.module import Module
from pykern.nn.parameter import Parameter
from pykern.tensor.core.tensor import Tensor


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share; they differ in the input shapes they take."""

    input_ndims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: object = pk.f32, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), momentum
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        if self.affine:
            self.weight = Parameter(pk.ones((self.num_features,), dtype))
            if bias:
                self.bias = Parameter(pk.zeros((self.num_features,), dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", pk.zeros((self.num_features,), dtype))
            self.register_buffer("running_var", pk.ones((self.num_features,), dtype))
            self.register_buffer("num_batches_tracked", pk.zeros((), pk.i64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        """Running mean 0, variance 1, no batches tracked."""
        if self.track_running_stats:
            with pk.no_grad():
                self.running_mean[...] = 0
                self.running_var[...] = 1
                self.num_batches_tracked[...] = 0

    def reset_parameters(self) -> None:
        """The running statistics reset, weight ones and bias zeros."""
        self.reset_running_stats()
        if self.affine:
            with pk.no_grad():
                self.weight[...] = 1
                if self.bias is not None:
                    self.bias[...] = 0

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim not in self.input_ndims:
            dims = " or ".join(f"{n}D" for n in self.input_ndims)
            raise ValueError(f"{type(self).__name__}: expected {dims} input (got "
                             f"{input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with pk.no_grad():
                self.num_batches_tracked += 1
            if self.momentum is None:  # the cumulative average: reads the count back
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_running else None,
                            self.running_var if keep_running else None, self.weight,
                            self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs, per channel C."""

    input_ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs, per channel C.

        bn = pk.nn.BatchNorm2d(32)
        y = bn(x)          # training: batch statistics; bn.eval(): running statistics
    """

    input_ndims = (4,)
