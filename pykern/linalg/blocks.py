"""Blocks of stacks of matrices, for the blocked factorizations: views of a (B, rows, cols)
tensor's sub-matrices, and the trailing update `C -= A @ B` through `pk.matmul`.

Every blocked algorithm here steps through its matrices by panels of columns: the panel is
factored by a kernel that keeps one workgroup per matrix, the rest of the matrix is updated by
matrix products, which run on the device's fastest GEMM.
"""

import functools
from collections.abc import Callable

from pykern.runtime import get_device
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.gemm.matmul import matmul
from pykern.tensor.core.strided import view
from pykern.tensor.core.tensor import Tensor


def block(t: Tensor, r0: int, c0: int, rows: int, cols: int) -> Tensor:
    """The (B, rows, cols) view of `t`'s matrices starting at row r0, column c0."""
    s = t.element_strides
    return view(t, (t.shape[0], rows, cols), s, t.offset + r0 * s[1] + c0 * s[2])


def transposed(t: Tensor) -> Tensor:
    """The view of a (B, rows, cols) tensor with its matrices transposed."""
    s = t.element_strides
    return view(t, (t.shape[0], t.shape[2], t.shape[1]), (s[0], s[2], s[1]))


def subtract_product(c: Tensor, a: Tensor, b: Tensor) -> None:
    """c -= a @ b, in place (c a view that a and b do not overlap)."""
    if c.shape[1] == 0 or c.shape[2] == 0:
        return
    if a.shape[2] == 0:
        return
    c -= matmul(a, b)  # the tensor library's in-place subtraction, on the view


def in_chunks(key: tuple, operands: tuple[Tensor, ...], count: int,
              body: Callable[[int, int], None], chunk: int) -> None:
    """body(lo, hi) for the steps lo..hi of 0..count, `chunk` steps at a time: each range's
    launches recorded on its first call and replayed after (`dispatch`, keyed by `key` and
    the range; `body` uses only `operands` and what it makes), and submitted as soon as they
    are recorded (`flush`), so that the device works on one range while the host records the
    next."""
    device = get_device()
    for lo in range(0, count, chunk):
        hi = min(count, lo + chunk)
        dispatch(key + (lo, hi), operands,
                 functools.partial(_returning, operands[0], body, lo, hi))
        device.flush()


def _returning(result: Tensor, body: Callable[[int, int], None], lo: int, hi: int) -> Tensor:
    body(lo, hi)
    return result
