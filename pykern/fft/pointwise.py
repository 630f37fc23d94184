"""The elementwise kernel of the transforms: out = conj?(conj?(x) · table) · scale along the
transformed axis, zero past the first `valid` elements (padding and cropping on the way). It
builds Bluestein's chirped input, multiplies by its kernel's spectrum and unchirps the result.
"""

from __future__ import annotations

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.core.tensor import Tensor


@functools.lru_cache(maxsize=None)
def pointwise_kernel(real: DType) -> pk.Kernel:
    F = real  # noqa: N806

    @pk.kernel
    def fft_pointwise(x: F[:, :, :], table: F[:], out: F[:, :, :], valid: int, scale: F,
                      ci: F, co: F):
        j = pk.global_id(0)
        b = pk.global_id(1)
        re = F(0.0)
        im = F(0.0)
        if j < valid:
            xr = x[b, j, 0]
            xi = ci * x[b, j, 1]
            wr = table[2 * j]
            wi = table[2 * j + 1]
            re = (xr * wr - xi * wi) * scale
            im = co * (xr * wi + xi * wr) * scale
        out[b, j, 0] = re
        out[b, j, 1] = im

    return fft_pointwise


def multiply(x: Tensor, table: Tensor, out: Tensor, valid: int, scale: float = 1.0,
             conj_in: bool = False, conj_out: bool = False) -> None:
    """out[b, j] = conj_out?(conj_in?(x[b, j]) · table[j]) · scale for j < valid, else 0.
    x and out are (B, length, 2) views; valid ≤ x's length and table's."""
    rows, length = out.shape[0], out.shape[1]
    if rows and length:
        pointwise_kernel(out.dtype)[length, rows](x, table, out, valid, scale,
                                                  -1.0 if conj_in else 1.0,
                                                  -1.0 if conj_out else 1.0)
