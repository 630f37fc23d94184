"""Shared pieces of the conv kernels: where a kernel tap reads (conv2d gathers, its transpose
takes the one input index that reaches the output, if any), and the bias argument."""

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.core.stand_in import stand_in
from pykern.tensor.core.tensor import Tensor


@pk.func
def forward_source(o, tap, s, p, d, size):
    """The input index conv2d reads for output index o at kernel tap `tap`, or -1 where that
    falls into the zero padding."""
    i = o * s - p + tap * d
    if i < 0 or i >= size:
        i = -1
    return i


@pk.func
def transposed_source(o, tap, s, p, d, size):
    """The input index i that conv_transpose2d takes to output index o through kernel tap
    `tap` (i·s - p + tap·d == o), or -1 where no input index does."""
    t = o + p - tap * d
    i = -1
    if t >= 0:
        q = t // s
        if q * s == t and q < size:
            i = q
    return i


def bias_or_zero(bias: Tensor | None, dtype: DType) -> Tensor:
    """The bias, or a one-element stand-in bound where there is none (the kernels then do not
    read it)."""
    return bias if bias is not None else stand_in(dtype)


