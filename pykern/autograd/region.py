"""`Region`: where a view lies in the memory of its base, to move gradients between the two
(the backward of writes into part of a tensor, and of views regenerated after such writes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.library import TENSORS


def zeros_like(g: Any) -> Any:
    """Zeros of `g`'s shape and dtype."""
    return TENSORS.zeros(g.shape, g.dtype)


class Region:
    """Where a view lies in its base's memory, to move gradients between the two: a gradient
    of the base is laid out in a new buffer exactly as the base is in its own, so the view's
    strides and offset select the view's elements there too."""

    def __init__(self, base: Any, view: Any) -> None:
        lo, hi = base._extent() if base.size else (base.offset, base.offset - 1)
        self.extent = hi - lo + 1
        self.base = (tuple(base.shape), base.element_strides, base.offset - lo)
        self.view = (tuple(view.shape), view.element_strides, view.offset - lo)

    def _laid_out(self, dtype: Any) -> tuple[Any, Any]:
        """A new buffer as (the base's layout, the view's layout) over it, zero-filled."""
        flat = TENSORS.zeros((self.extent,), dtype)
        shape, strides, offset = self.base
        vshape, vstrides, voffset = self.view
        return (TENSORS.tensor(flat.buffer, shape, dtype, strides, offset),
                TENSORS.tensor(flat.buffer, vshape, dtype, vstrides, voffset))

    def backward(self, to_base: bool) -> Callable[[Any], tuple[Any, Any]]:
        """The write's backward: (the base's gradient, zero in the region, when `to_base`;
        the value's, the region of the gradient)."""
        def split(g: Any) -> tuple[Any, Any]:
            whole, part = self._laid_out(g.dtype)
            TENSORS.assign(whole, g)
            taken = part.copy()
            if not to_base:
                return None, taken
            TENSORS.assign(part, 0)
            return whole, taken

        return split

    def scatter(self, g: Any) -> Any:
        """The base's gradient from the view's: `g` in the region, zeros elsewhere."""
        whole, part = self._laid_out(g.dtype)
        TENSORS.assign(part, g)
        return whole

