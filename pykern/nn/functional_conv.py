"""The convolutions and poolings of `pk.nn.functional`, with PyTorch's names and arguments,
over the op library's `pk.conv2d`, `pk.conv_transpose2d` and `pykern.tensor.conv.pool`.

The 1-D forms are the 2-D ops on a unit height: (N, C, L) becomes (N, C, 1, L) and a
(O, C/groups, K) weight (O, C/groups, 1, K), so they share the 2-D kernels and backward.
Unbatched inputs ((C, H, W), (C, L)) are accepted as PyTorch accepts them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pykern as pk
from pykern.tensor.conv import pool
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor

PairArg = int | Sequence[int]


def conv2d(input: object, weight: object, bias: object = None,  # noqa: A002
           stride: PairArg = 1, padding: PairArg | str = 0, dilation: PairArg = 1,
           groups: int = 1) -> Tensor:
    """2-D cross-correlation: input (N, C, H, W) or (C, H, W), weight (O, C/groups, KH, KW),
    bias (O,); `padding` an int, a pair, "valid" or "same" (see `pk.conv2d`)."""
    x, batched = _batched(input, 4, "conv2d", "(N, C, H, W) or (C, H, W)")
    y = pk.conv2d(x, weight, bias, _pair(stride), _pair(padding), _pair(dilation), groups)
    return y if batched else y.squeeze(0)


def conv1d(input: object, weight: object, bias: object = None,  # noqa: A002
           stride: PairArg = 1, padding: PairArg | str = 0, dilation: PairArg = 1,
           groups: int = 1) -> Tensor:
    """1-D cross-correlation: input (N, C, L) or (C, L), weight (O, C/groups, K), bias (O,);
    the result is (N, O, (L + 2p - d·(K - 1) - 1) // s + 1)."""
    op = "conv1d"
    x, batched = _batched(input, 3, op, "(N, C, L) or (C, L)")
    w = _weight(weight, 3, op, "(O, C/groups, K)")
    pad = padding if isinstance(padding, str) else (0, _single(padding, op, "padding"))
    y = pk.conv2d(x.unsqueeze(2), w.unsqueeze(2), bias, (1, _single(stride, op, "stride")),
                  pad, (1, _single(dilation, op, "dilation")), groups).squeeze(2)
    return y if batched else y.squeeze(0)


def conv_transpose2d(input: object, weight: object, bias: object = None,  # noqa: A002
                     stride: PairArg = 1, padding: PairArg = 0, output_padding: PairArg = 0,
                     groups: int = 1, dilation: PairArg = 1) -> Tensor:
    """The transposed 2-D convolution (the gradient of conv2d with respect to its input):
    input (N, C, H, W) or (C, H, W), weight (C, O/groups, KH, KW), bias (O,)."""
    x, batched = _batched(input, 4, "conv_transpose2d", "(N, C, H, W) or (C, H, W)")
    y = pk.conv_transpose2d(x, weight, bias, _pair(stride), _pair(padding),
                            _pair(output_padding), groups, _pair(dilation))
    return y if batched else y.squeeze(0)


def conv_transpose1d(input: object, weight: object, bias: object = None,  # noqa: A002
                     stride: PairArg = 1, padding: PairArg = 0, output_padding: PairArg = 0,
                     groups: int = 1, dilation: PairArg = 1) -> Tensor:
    """The transposed 1-D convolution: input (N, C, L) or (C, L), weight (C, O/groups, K)."""
    op = "conv_transpose1d"
    x, batched = _batched(input, 3, op, "(N, C, L) or (C, L)")
    w = _weight(weight, 3, op, "(C, O/groups, K)")
    y = pk.conv_transpose2d(x.unsqueeze(2), w.unsqueeze(2), bias,
                            (1, _single(stride, op, "stride")),
                            (0, _single(padding, op, "padding")),
                            (0, _single(output_padding, op, "output_padding")), groups,
                            (1, _single(dilation, op, "dilation"))).squeeze(2)
    return y if batched else y.squeeze(0)


def max_pool2d(input: object, kernel_size: PairArg, stride: PairArg | None = None,  # noqa: A002
               padding: PairArg = 0, dilation: PairArg = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The largest element of each window (see `pykern.tensor.conv.pool.max_pool2d`); with
    `return_indices`, also each maximum's flat index in its input plane."""
    return pool.max_pool2d(input, _pair(kernel_size), _pair(stride), _pair(padding),
                           _pair(dilation), ceil_mode, return_indices)


def avg_pool2d(input: object, kernel_size: PairArg, stride: PairArg | None = None,  # noqa: A002
               padding: PairArg = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window (see `pykern.tensor.conv.pool.avg_pool2d`)."""
    return pool.avg_pool2d(input, _pair(kernel_size), _pair(stride), _pair(padding), ceil_mode,
                           count_include_pad, divisor_override)


def adaptive_avg_pool2d(input: object, output_size: object) -> Tensor:  # noqa: A002
    """The mean over windows that make the output (OH, OW) (see
    `pykern.tensor.conv.pool.adaptive_avg_pool2d`)."""
    return pool.adaptive_avg_pool2d(input, output_size)  # type: ignore[arg-type]


# ---------------------------------------------------------------- helpers


def _pair(v: object) -> object:
    """Lists as tuples (PyTorch takes either); everything else as it is, checked by the op."""
    return tuple(v) if isinstance(v, list) else v


def _single(v: object, op: str, what: str) -> int:
    """An int or a sequence of one int."""
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise ValueError(f"{op}: {what} must be an int or a sequence of one int, got {v!r}")
        v = v[0]
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op}: {what} must be an int, not {type(v).__name__}")
    return v


def _batched(input: object, ndim: int, op: str, shapes: str) -> tuple[Tensor, bool]:  # noqa: A002
    """The input with its batch dimension, and whether it had one."""
    x = as_tensor(input, f"{op}: input")
    if x.ndim == ndim:
        return x, True
    if x.ndim == ndim - 1:
        return x.unsqueeze(0), False
    raise ValueError(f"{op}: input must be {shapes}, got shape {x.shape}")


def _weight(weight: object, ndim: int, op: str, layout: str) -> Tensor:
    w = as_tensor(weight, f"{op}: weight")
    if w.ndim != ndim:
        raise ValueError(f"{op}: weight must be {ndim}-d {layout}, got shape {w.shape}")
    return w
