"""`pk.nn.MaxPool2d`, `AvgPool2d`, `AdaptiveAvgPool2d`: the pooling layers (no parameters),
with PyTorch's arguments and printed form."""

from __future__ import annotations

from collections.abc import Sequence

from pykern.nn import functional as F
from pykern.nn.module import Module
from pykern.tensor.core.tensor import Tensor

SizeArg = int | Sequence[int]


class MaxPool2d(Module):
    """The largest element of each window (see `F.max_pool2d`); `stride` defaults to
    `kernel_size`. With `return_indices`, forward returns (output, indices)."""

    def __init__(self, kernel_size: SizeArg, stride: SizeArg | None = None,
                 padding: SizeArg = 0, dilation: SizeArg = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.padding, self.dilation = kernel_size, padding, dilation
        self.stride = stride if stride is not None else kernel_size
        self.return_indices, self.ceil_mode = bool(return_indices), bool(ceil_mode)

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """The mean of each window (see `F.avg_pool2d`); `stride` defaults to `kernel_size`."""

    def __init__(self, kernel_size: SizeArg, stride: SizeArg | None = None,
                 padding: SizeArg = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = stride if stride is not None else kernel_size
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """The mean over windows sized so that the output is `output_size` (an int, or (OH, OW)
    with None keeping the input's size); `AdaptiveAvgPool2d(1)` is global average pooling."""

    def __init__(self, output_size: int | None | Sequence[int | None]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
