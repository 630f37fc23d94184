"""`pk.nn.Conv1d`, `Conv2d`, `ConvTranspose1d`, `ConvTranspose2d`: PyTorch's convolution
layers, their arguments, weight layouts, initialisation, `state_dict()` keys (`weight`,
`bias`) and printed form."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

import pykern as pk
from pykern.nn import functional as F
from pykern.nn.linear import add_weight_and_bias, reset_weight_and_bias
from pykern.nn.module import Module
from pykern.tensor.core.tensor import Tensor

SizeArg = int | Sequence[int]


def _tuple(v: SizeArg, n: int, what: str, layer: str) -> tuple[int, ...]:
    """An int repeated n times, or a sequence of n ints."""
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise ValueError(f"{layer}: {what} must be an int or {n} ints, got {v!r}")
        return tuple(int(e) for e in v)
    return (int(v),) * n


class _ConvNd(Module):
    """What the convolution layers share: arguments, parameters and repr."""

    dims = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: SizeArg,
                 stride: SizeArg, padding: SizeArg | str, dilation: SizeArg,
                 output_padding: SizeArg, groups: int, bias: bool, padding_mode: str,
                 dtype: object) -> None:
        super().__init__()
        layer = type(self).__name__
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{layer}: groups={groups} must be positive and divide "
                             f"in_channels={in_channels} and out_channels={out_channels}")
        if padding_mode != "zeros":
            raise NotImplementedError(f"{layer}: padding_mode={padding_mode!r} is not "
                                      "supported; only 'zeros'")
        n = self.dims
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = _tuple(kernel_size, n, "kernel_size", layer)
        self.stride = _tuple(stride, n, "stride", layer)
        self.dilation = _tuple(dilation, n, "dilation", layer)
        self.output_padding = _tuple(output_padding, n, "output_padding", layer)
        self.groups, self.padding_mode = int(groups), padding_mode
        if isinstance(padding, str):
            if self.transposed or padding not in ("same", "valid"):
                raise ValueError(f"{layer}: padding {padding!r} is not supported (an int, "
                                 "ints, or 'same' / 'valid' for Conv layers)")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{layer}: padding='same' needs stride 1, got {self.stride}")
            self.padding: tuple[int, ...] | str = padding
        else:
            self.padding = _tuple(padding, n, "padding", layer)
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        add_weight_and_bias(self, shape, self.out_channels if bias else None, dtype)

    def reset_parameters(self) -> None:
        """Draws the weight and bias again: PyTorch's kaiming_uniform_(a=sqrt(5)) and a bias
        from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in from the weight's layout."""
        reset_weight_and_bias(self.weight, self.bias)

    def extra_repr(self) -> str:
        n = self.dims
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * n:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class _Conv(_ConvNd):
    """Conv1d and Conv2d: PyTorch's arguments in its order; `function` is the functional
    form the layer runs."""

    function: ClassVar[Callable[..., Tensor]]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: SizeArg,
                 stride: SizeArg = 1, padding: SizeArg | str = 0, dilation: SizeArg = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 dtype: object = pk.f32) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 0,
                         groups, bias, padding_mode, dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self.function(input, self.weight, self.bias, self.stride, self.padding,
                             self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) (or (C_in, L)): weight (out, in/groups, K), bias
    (out,)."""

    dims = 1
    function = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) (or (C_in, H, W)): weight
    (out, in/groups, KH, KW), bias (out,).

        conv = pk.nn.Conv2d(1, 32, 3)          # 3x3, stride 1, no padding
    """

    function = staticmethod(F.conv2d)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def _output_padding(self, x: Tensor, output_size: Sequence[int] | None) -> tuple[int, ...]:
        """output_padding, or the one that gives `output_size` (its last dims, as
        PyTorch's)."""
        if output_size is None:
            return self.output_padding
        n = self.dims
        want = tuple(output_size)[-n:]
        if len(want) != n:
            raise ValueError(f"{type(self).__name__}: output_size must have {n} or more "
                             f"entries, got {output_size!r}")
        result = []
        for i in range(n):
            smallest = ((x.shape[x.ndim - n + i] - 1) * self.stride[i] - 2 * self.padding[i]
                        + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            if not smallest <= want[i] < smallest + self.stride[i]:
                raise ValueError(f"{type(self).__name__}: requested an output size of {want}, "
                                 f"but valid sizes range from {smallest} to "
                                 f"{smallest + self.stride[i] - 1} in dimension {i}")
            result.append(want[i] - smallest)
        return tuple(result)


class _ConvTranspose(_ConvTransposeNd):
    """ConvTranspose1d and ConvTranspose2d: PyTorch's arguments in its order; `function` is
    the functional form the layer runs."""

    function: ClassVar[Callable[..., Tensor]]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: SizeArg,
                 stride: SizeArg = 1, padding: SizeArg = 0, output_padding: SizeArg = 0,
                 groups: int = 1, bias: bool = True, dilation: SizeArg = 1,
                 padding_mode: str = "zeros", dtype: object = pk.f32) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, groups, bias, padding_mode, dtype)

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None  # noqa: A002
                ) -> Tensor:
        return self.function(input, self.weight, self.bias, self.stride, self.padding,
                             self._output_padding(input, output_size), self.groups,
                             self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-D convolution: weight (in, out/groups, K), bias (out,)."""

    dims = 1
    function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-D convolution (the gradient of Conv2d with respect to its input, an
    "upsampling" convolution): weight (in, out/groups, KH, KW), bias (out,).
    `forward(input, output_size=None)`: `output_size` picks the output_padding."""

    function = staticmethod(F.conv_transpose2d)
