"""PyTorch's Tensor methods that numpy's ndarray lacks, with PyTorch's meaning (a base class
of pk.Tensor), so that code written for torch.Tensor runs on pk.Tensor:

- shapes and views: `dim()`, `view(*shape)` (numpy's `view(dtype)` too), `view_as`,
  `reshape_as`, `expand_as`, `t()`, `split`, `chunk`, `unbind`;
- values: `masked_fill`, `masked_select`, `softmax(dim)`, `log_softmax(dim)`, `topk`,
  `clamp`, `type_as`; the conversions (`long()`, `float()`, ...), comparisons and math
  methods (`eq`, `exp`, ...) are in `pykern.tensor.api.torch_elementwise`;
- new tensors like this one: `new_empty`, `new_zeros`, `new_ones`, `new_full`, `new_tensor`;
- in place (each returns the tensor): `zero_`, `fill_`, `copy_`, `add_`, `sub_`, `mul_`,
  `div_`, `clamp_`, `masked_fill_`; `cpu()` moves to the host device.

Where the two libraries give one name two meanings, pk.Tensor keeps numpy's (`transpose`,
`repeat`, `axis=`/`keepdims=` in the reductions; docs/coming_from.md lists them); the methods
here take PyTorch's `dim=`, as they are PyTorch's alone. Each runs pykern's ops on the
tensor's device and is differentiable where its ops are.
"""

from __future__ import annotations

import functools
import types

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from pykern.autograd.graph import needs_grad
from pykern.lang import dtypes as dt
from pykern.tensor.api.torch_elementwise import TorchElementwiseMethods


def _ops() -> Any:
    """The op library's modules these methods run: the op library imports
    pykern.tensor.core.tensor, whose Tensor derives from this class, so they are looked up on
    first use (the modules are loaded by then)."""
    return _library()


@functools.cache
def _library() -> Any:
    import importlib
    modules = {"elementwise": "pykern.tensor.elementwise.functions",
               "nn": "pykern.tensor.nnops.nn_ops", "sort": "pykern.tensor.reduce.sort",
               "tensor": "pykern.tensor.core.tensor", "strided": "pykern.tensor.core.strided",
               "torch_functions": "pykern.tensor.api.torch_functions"}
    return types.SimpleNamespace(**{k: importlib.import_module(v) for k, v in modules.items()})


class TopK(NamedTuple):
    """`topk`'s result: the values and their (i64) indices, as PyTorch's."""

    values: Any
    indices: Any


def _is_shape_item(value: object) -> bool:
    """An int (or anything with `__index__`) but a bool, and not a type (`np.int32`)."""
    return not isinstance(value, (bool, np.bool_, type)) and hasattr(value, "__index__")


def _shape_arg(op: str, args: tuple) -> tuple[int, ...]:
    """A shape given as several ints or as one sequence of ints (PyTorch takes both)."""
    if len(args) == 1 and not _is_shape_item(args[0]):
        args = tuple(args[0])  # type: ignore[arg-type]
    if not all(_is_shape_item(a) for a in args):
        raise TypeError(f"{op}: a shape is ints or one sequence of ints, got {args!r}")
    return tuple(operator.index(a) for a in args)  # type: ignore[arg-type]


def _dim(t: Any, dim: object, op: str) -> int:
    return _ops().tensor.normalize_axis(dim, t.ndim, "dim", op=op)


def _along(t: Any, dim: int, key: object) -> Any:
    """`t[..., key, ...]` with `key` at dimension `dim` (a view)."""
    return t[(slice(None),) * dim + (key,)]


def to_arguments(args: tuple, device: object, dtype: object) -> tuple[object, object]:
    """The (device, dtype) of a `Tensor.to` call: each positional argument is a dtype, a
    tensor (its device and dtype) or else a device, as PyTorch's `to` tells them apart."""
    for arg in args:
        if hasattr(arg, "dtype") and hasattr(arg, "buffer"):  # a pk.Tensor
            device, dtype = arg.device, arg.dtype  # type: ignore[attr-defined]
        elif _names_dtype(arg):
            dtype = arg
        else:
            device = arg
    return device, dtype


def _names_dtype(value: object) -> bool:
    if isinstance(value, int):
        return False  # a device index
    try:
        dt.as_dtype(value)
    except (TypeError, KeyError, ValueError):
        return False
    return True


def _source(t: Any) -> Any:
    """What an in-place method computes its new values from: `t`, or a copy of it where
    autograd records (the op's backward may keep its input, which the write then replaces)."""
    return t.clone() if needs_grad(t) else t


class TorchStyleMethods(TorchElementwiseMethods):
    """PyTorch's methods on pk.Tensor (see the module's docstring)."""

    __slots__ = ()

    # ------------------------------------------------------------ shapes and views

    def dim(self) -> int:
        """The number of dimensions (`ndim`), PyTorch's name."""
        return len(self.shape)  # type: ignore[attr-defined]

    def view(self, *shape: Any) -> Any:
        """PyTorch's `view(*shape)`: the same memory in `shape` (one entry may be -1); a
        RuntimeError where the strides allow no view (`reshape` copies there). With a dtype
        (`view(pk.i32)`, numpy's meaning) the same bytes read as another dtype of the same
        item size, and with no argument a new view of the whole tensor."""
        if not shape:
            return self[...]  # type: ignore[index]
        if len(shape) == 1 and not _is_shape_item(shape[0]) and \
                not isinstance(shape[0], (tuple, list)):
            return _ops().torch_functions.view_as_dtype(self, shape[0])
        t: Any = self
        tensor_module = _ops().tensor
        new = tensor_module._reshape_shape(t.shape, t.size, shape)
        if not t.is_contiguous and \
                tensor_module._nocopy_strides(t.shape, t.element_strides, new) is None:
            raise RuntimeError(f"view: a tensor of shape {t.shape} and strides {t.strides} "
                               f"cannot be viewed as {new} without a copy; use reshape(...) "
                               "(which copies where it must)")
        return t.reshape(new)

    def view_as(self, other: Any) -> Any:
        """`view(other.shape)`."""
        return self.view(other.shape)

    def reshape_as(self, other: Any) -> Any:
        """`reshape(other.shape)`."""
        return self.reshape(other.shape)  # type: ignore[attr-defined]

    def expand_as(self, other: Any) -> Any:
        """`expand(other.shape)`: a broadcast view."""
        return self.expand(other.shape)  # type: ignore[attr-defined]

    def t(self) -> Any:
        """The transpose of a tensor of at most 2 dimensions (a view), as PyTorch's `t()`."""
        if self.ndim > 2:  # type: ignore[attr-defined]
            raise ValueError(f"t() takes a tensor of at most 2 dimensions, got shape "
                             f"{self.shape}; swap two axes with swapaxes(a, b)")  # type: ignore
        return self.permute(*reversed(range(self.ndim)))  # type: ignore[attr-defined]

    def split(self, split_size_or_sections: int | Sequence[int], dim: int = 0
              ) -> tuple[Any, ...]:
        """Views of consecutive pieces along `dim`, as PyTorch's `split`: pieces of
        `split_size` elements (the last one smaller where the length is not a multiple), or
        of the given section lengths, which must add up to the length. (numpy's `np.split`
        takes a number of pieces instead; `chunk` does that.)"""
        d = _dim(self, dim, "split")
        n = self.shape[d]  # type: ignore[attr-defined]
        if _is_shape_item(split_size_or_sections):
            size = operator.index(split_size_or_sections)  # type: ignore[arg-type]
            if size <= 0 and n:
                raise ValueError(f"split: split_size must be positive, got {size}")
            sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
        else:
            sizes = [operator.index(s) for s in split_size_or_sections]  # type: ignore
            if sum(sizes) != n or any(s < 0 for s in sizes):
                raise ValueError(f"split: sections {sizes} do not add up to the length {n} "
                                 f"of dimension {d}")
        starts = np.cumsum([0, *sizes]).tolist()
        return tuple(_along(self, d, slice(a, b)) for a, b in zip(starts, starts[1:]))

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Any, ...]:
        """At most `chunks` views along `dim`, of ceil(length / chunks) elements each (the
        last one smaller), as PyTorch's `chunk`."""
        chunks = operator.index(chunks)
        if chunks <= 0:
            raise ValueError(f"chunk: chunks must be positive, got {chunks}")
        n = self.shape[_dim(self, dim, "chunk")]  # type: ignore[attr-defined]
        return self.split(max(-(-n // chunks), 1), dim)

    def unbind(self, dim: int = 0) -> tuple[Any, ...]:
        """The slices along `dim`, each without that dimension (views)."""
        d = _dim(self, dim, "unbind")
        return tuple(_along(self, d, i) for i in range(self.shape[d]))  # type: ignore

    # ------------------------------------------------------------ values

    def masked_fill(self, mask: Any, value: Any) -> Any:
        """A copy with `value` (a number or a 0-d tensor) where the bool tensor `mask`
        (broadcast with this one) is True, in this tensor's dtype."""
        return _ops().torch_functions.masked_fill(self, mask, value)

    def masked_select(self, mask: Any) -> Any:
        """The elements where the bool `mask` (broadcast with this tensor) is True, 1-D."""
        ops = _ops()
        m = ops.torch_functions.bool_mask(mask, "masked_select")
        shape = ops.strided.broadcast_shapes(self.shape, m.shape)  # type: ignore[attr-defined]
        return self.broadcast_to(shape)[m.broadcast_to(shape)]  # type: ignore[attr-defined]

    def softmax(self, dim: int, dtype: object = None) -> Any:
        """`pk.softmax` along `dim` (in `dtype` when given)."""
        x = self if dtype is None else self.astype(dtype, copy=False)  # type: ignore
        return _ops().nn.softmax(x, dim)

    def log_softmax(self, dim: int, dtype: object = None) -> Any:
        """`pk.log_softmax` along `dim` (in `dtype` when given)."""
        x = self if dtype is None else self.astype(dtype, copy=False)  # type: ignore
        return _ops().nn.log_softmax(x, dim)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True  # noqa: A002
             ) -> TopK:
        """The `k` largest (or smallest) elements along `dim` and their indices, as a
        `(values, indices)` named tuple (`pk.topk`; always sorted)."""
        return _ops().sort.topk(self, k, dim=dim, largest=largest)

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """The values limited to [min, max] (numpy's `clip`; one of the two may be None)."""
        if min is None and max is None:
            raise ValueError("clamp: give min, max or both")
        return _ops().elementwise.clip(self, min, max)

    def type_as(self, other: Any) -> Any:
        """This tensor in `other`'s dtype (itself when it has it already)."""
        return self.astype(other.dtype, copy=False)  # type: ignore[attr-defined]

    # ------------------------------------------------------------ new tensors like this one

    def new_empty(self, *size: Any, dtype: object = None, requires_grad: bool = False) -> Any:
        """An uninitialised tensor of `size`, this tensor's dtype (or `dtype`) and device."""
        return self._new("new_empty", size, dtype, requires_grad, None)

    def new_zeros(self, *size: Any, dtype: object = None, requires_grad: bool = False) -> Any:
        """Zeros of `size`, this tensor's dtype (or `dtype`) and device."""
        return self._new("new_zeros", size, dtype, requires_grad, 0)

    def new_ones(self, *size: Any, dtype: object = None, requires_grad: bool = False) -> Any:
        """Ones of `size`, this tensor's dtype (or `dtype`) and device."""
        return self._new("new_ones", size, dtype, requires_grad, 1)

    def new_full(self, size: Any, fill_value: Any, *, dtype: object = None,
                 requires_grad: bool = False) -> Any:
        """`fill_value` everywhere in `size`, this tensor's dtype (or `dtype`) and device."""
        return self._new("new_full", (size,), dtype, requires_grad, fill_value)

    def new_tensor(self, data: Any, *, dtype: object = None, requires_grad: bool = False
                   ) -> Any:
        """A copy of `data` (nested lists, an array, a tensor) in this tensor's dtype (or
        `dtype`), on its device."""
        ops = _ops()
        out = ops.tensor.asarray(data, self.dtype if dtype is None else dtype,  # type: ignore
                                 copy=True)
        out = out.detach() if out.requires_grad else out
        return out.requires_grad_() if requires_grad else out

    def _new(self, op: str, size: tuple, dtype: object, requires_grad: bool,
             value: Any) -> Any:
        out = _ops().tensor.empty(_shape_arg(op, size),
                                  self.dtype if dtype is None else dtype)  # type: ignore
        if value is not None:
            out.fill(value)
        return out.requires_grad_() if requires_grad else out

    # ------------------------------------------------------------ in place

    def zero_(self) -> Any:
        """Sets every element to 0 and returns this tensor."""
        self[...] = 0  # type: ignore[index]
        return self

    def fill_(self, value: Any) -> Any:
        """Sets every element to `value` (a number or a 0-d tensor) and returns this tensor."""
        self[...] = value  # type: ignore[index]
        return self

    def copy_(self, src: Any) -> Any:
        """Writes `src` (broadcast to this tensor's shape, converted to its dtype) into this
        tensor and returns it."""
        self[...] = src  # type: ignore[index]
        return self

    def add_(self, other: Any, *, alpha: Any = 1) -> Any:
        """`self += alpha * other`; returns this tensor."""
        self += other if alpha == 1 else other * alpha  # type: ignore[operator]
        return self

    def sub_(self, other: Any, *, alpha: Any = 1) -> Any:
        """`self -= alpha * other`; returns this tensor."""
        self -= other if alpha == 1 else other * alpha  # type: ignore[operator]
        return self

    def mul_(self, other: Any) -> Any:
        """`self *= other`; returns this tensor."""
        self *= other  # type: ignore[operator]
        return self

    def div_(self, other: Any) -> Any:
        """`self /= other`; returns this tensor."""
        self /= other  # type: ignore[operator]
        return self

    def clamp_(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """`clamp` in place; returns this tensor."""
        self[...] = _source(self).clamp(min, max)  # type: ignore[index]
        return self

    def masked_fill_(self, mask: Any, value: Any) -> Any:
        """`masked_fill` in place (`mask` broadcasts to this tensor's shape); returns it."""
        filled = _source(self).masked_fill(mask, value)
        if filled.shape != self.shape:  # type: ignore[attr-defined]
            raise ValueError(f"masked_fill_: a mask of shape {tuple(mask.shape)} does not "
                             f"broadcast to the tensor's shape {self.shape}")  # type: ignore
        self[...] = filled  # type: ignore[index]
        return self

    def cpu(self) -> Any:
        """This tensor on the host device (itself when it is there): `t.cpu().numpy()`."""
        return self.to("host")  # type: ignore[attr-defined]
