"""PyTorch's functions that numpy lacks, with PyTorch's meaning and argument names: `pk.cat`
(numpy's `concatenate`, pykern's `concat`, under PyTorch's name and `dim=`), `pk.flatten`,
and the helpers of the PyTorch-style Tensor methods (`pykern.tensor.api.torch_style`).
(`pk.multinomial` is in `pykern.tensor.create.multinomial`.)
"""

from __future__ import annotations

from collections.abc import Sequence

from pykern.lang import dtypes as dt
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.index.indexing import concat
from pykern.tensor.core.strided import prod
from pykern.tensor.core.tensor import Tensor, normalize_axis


def cat(tensors: Sequence[object], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """PyTorch's `torch.cat`: the tensors joined along dimension `dim` (`pk.concat`, numpy's
    `concatenate`; `axis=` is accepted too, as PyTorch accepts it).

        pk.cat((idx, idx_next), dim=1)
    """
    if axis is not None:
        if dim != 0:
            raise TypeError("cat: give dim= or axis=, not both")
        dim = axis
    return concat(tensors, dim)


def flatten(x: object, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """PyTorch's `torch.flatten`: dimensions `start_dim` to `end_dim` (both included) merged
    into one; a view where the strides allow, else a copy. A 0-d tensor gives a 1-D one.

        pk.flatten(x, 1)    # (N, C, H, W) -> (N, C * H * W)
    """
    t = ew.as_tensor(x, "flatten: x")
    if t.ndim == 0:
        return t.reshape(1)
    start = normalize_axis(start_dim, t.ndim, "start_dim", op="flatten")
    end = normalize_axis(end_dim, t.ndim, "end_dim", op="flatten")
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"for a tensor of {t.ndim} dimensions")
    shape = t.shape[:start] + (prod(t.shape[start:end + 1]),) + t.shape[end + 1:]
    return t.reshape(shape)


def bool_mask(mask: object, op: str) -> Tensor:
    """`mask` as a bool tensor: PyTorch's masked ops take bool masks only (a TypeError names
    another dtype, rather than reading its values as truth values)."""
    m = ew.as_tensor(mask, f"{op}: mask")
    if m.dtype != dt.bool_:
        raise TypeError(f"{op}: mask must be a bool tensor, not {m.dtype.name} (make one with "
                        "a comparison, e.g. mask != 0)")
    return m


def masked_fill(x: Tensor, mask: object, value: object) -> Tensor:
    """`x` with `value` where the bool `mask` is True (broadcast together), in x's dtype:
    `pk.where(mask, value, x)`, differentiable in `x` and in a 0-d tensor `value`."""
    m = bool_mask(mask, "masked_fill")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise ValueError(f"masked_fill: value must be a number or a 0-d tensor, got one of "
                         f"shape {value.shape}")
    out = ew.where(m, value, x)
    return out if out.dtype == x.dtype else ew.astype(out, x.dtype)


def view_as_dtype(x: Tensor, dtype: object) -> Tensor:
    """numpy's `a.view(dtype)`: the same memory read as `dtype`, which must have x's item
    size (complex tensors: `pk.view_as_real`)."""
    d = dt.as_dtype(dtype)
    if d.itemsize != x.dtype.itemsize:
        raise ValueError(f"view: {x.dtype.name} and {d.name} have different item sizes "
                         f"({x.dtype.itemsize} and {d.itemsize} bytes); pykern views the "
                         "same bytes as another dtype of the same size only")
    if d.is_complex or x.dtype.is_complex:
        raise TypeError("view: complex tensors are viewed as pairs of reals with "
                        "pk.view_as_real, and back with pk.view_as_complex")
    if x.requires_grad:
        raise RuntimeError("view(dtype) of a tensor that requires grad has no gradient: "
                           "view its detach() instead")
    out = Tensor(x.buffer, x.shape, d, x.element_strides, x.offset)
    out._base = x if x._base is None else x._base
    return out
