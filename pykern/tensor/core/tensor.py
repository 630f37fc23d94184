"""`pk.Tensor`: an n-d array living in a device buffer, its views, and the functions that
create one from host data.

A tensor is a view: a buffer plus shape, strides and offset (both in elements), so transposes,
slices and broadcasts share memory. Launches that write it are queued; `numpy()` waits for
them. Operators and methods hand the work to the op library (`pykern.tensor`), whose every op is
a `@pk.kernel`; it is imported lazily, as it imports this module.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from pykern.autograd import hooks
from pykern.autograd import engine as _engine
from pykern.autograd import inplace
from pykern.autograd.graph import refuse_grad
from pykern.autograd.keyword import accepts_requires_grad
from pykern.autograd.mode import is_grad_enabled
from pykern.autograd.records import record_view
from pykern.autograd.version import version_of
from pykern.jit import capture
from pykern.jit.compiling import MADE as _MADE
from pykern.jit.arrays import register_array_type
from pykern.lang import dtypes as dt
from pykern.lang.bf16_rounding import bf16_words
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.runtime.selection import device_for, running_on
from pykern.tensor.elementwise import binary_ops as bo
from pykern.tensor.core import operand_device
from pykern.tensor.api import ndarray_methods
from pykern.tensor.api.ndarray_methods import NdarrayMethods
from pykern.tensor.core.transfer_guard import implicit_copy
from pykern.tensor.core.size import Size, size_of
from pykern.tensor.api.torch_style import TorchStyleMethods, to_arguments

DLPACK_CPU = 1  # DLDeviceType kDLCPU


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(shape, Tensor):
        raise TypeError("a shape must be an int or a sequence of ints, not a pk.Tensor")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"a shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def shape_args(shape: object, dims: tuple, dtype: object) -> tuple[object, object]:
    """The shape and dtype of a creation call that takes a shape as one argument or, as
    PyTorch does, as several ints (`pk.zeros(2, 3)`), and its dtype by keyword or as the
    argument after a one-argument shape (`pk.zeros((2, 3), pk.i32)`)."""
    if not dims:
        return shape, dtype
    if len(dims) == 1 and (isinstance(dims[0], type) or not hasattr(dims[0], "__index__")):
        if dtype is not None:
            raise TypeError("the dtype is given twice (by position and by keyword)")
        return shape, dims[0]
    if not hasattr(shape, "__index__"):
        raise TypeError(f"a shape is one sequence of ints or several ints, not {shape!r} "
                        f"followed by {dims!r}")
    return (shape, *dims), dtype


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements."""
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


def _scatter_into_zeros(x: Tensor, key: object, g: Tensor) -> Tensor:
    """The gradient of `x` from that of `x[key]`: `g` in the indexed region, zeros elsewhere."""
    z = _creation.zeros(x.shape, g.dtype)
    z[key] = g
    return z


def normalize_axis(axis: object, ndim: int, what: str = "axis", *, op: str = "") -> int:
    """`axis` in 0..ndim-1 (negative counts from the end): TypeError for a non-integer (bools
    included), ValueError naming it when out of range; `op` prefixes the messages."""
    prefix = f"{op}: " if op else ""
    try:
        if isinstance(axis, (bool, np.bool_)):
            raise TypeError
        a = operator.index(axis)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{prefix}{what} must be an int, not {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"{prefix}{what} {axis} is out of range for a tensor of {ndim} "
                         "dimension(s)")
    return a % ndim


def _swap_last_two(g: Tensor) -> Tensor:
    """The gradient of `t.mT`: g.mT."""
    return g.mT


class Tensor(TorchStyleMethods, NdarrayMethods):
    """An array on the device. Create one with `pk.asarray`, `pk.empty`, `pk.zeros`, ...

    Attributes: `shape`, `dtype` (a pk dtype), `ndim`, `size`, `strides` (bytes, as numpy),
    `device`. `t.numpy()` or `np.asarray(t)` copies it back to the host. Indexing, `reshape`,
    `transpose`, `.T`, `expand`, `squeeze`, `unsqueeze` give views sharing the buffer; operators
    and functions run kernels and return new tensors.
    """

    __slots__ = ("buffer", "shape", "dtype", "_strides", "offset", "requires_grad", "grad",
                 "grad_fn", "_base", "__weakref__")
    # numpy hands its operators and ufuncs to __array_ufunc__ below
    __array_priority__ = 1000

    def __init__(self, buffer: object, shape: tuple[int, ...], dtype: DType,
                 strides: tuple[int, ...] | None = None, offset: int = 0):
        self.buffer = buffer
        self.shape = shape
        self.dtype = dtype
        self._strides = contiguous_strides(shape) if strides is None else strides
        self.offset = offset
        # autograd (pykern.autograd): whether gradients flow to this tensor, the gradient a
        # backward() accumulated (leaves), the recorded op that made it (None for leaves)
        self.requires_grad = False
        self.grad: Tensor | None = None
        self.grad_fn: Any = None
        # the tensor whose memory this view shares (None: not a view), where autograd
        # records a write into the view (pykern.autograd.inplace)
        self._base: Tensor | None = None
        made = _MADE[0]
        if made is not None:  # a pk.compile recording runs: it checks what outlives its call
            made.append(weakref.ref(self))

    # ------------------------------------------------------------ attributes

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> Size:
        """The number of elements, an int as numpy's; called, PyTorch's method: `t.size()`
        is the shape and `t.size(d)` one dimension's length (`pykern.tensor.core.size`)."""
        return size_of(self.shape)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (size * itemsize)."""
        return self.size * self.dtype.itemsize

    @property
    def element_strides(self) -> tuple[int, ...]:
        """Strides in elements (what kernels use)."""
        return self._strides

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in bytes, as numpy reports them."""
        return tuple(s * self.dtype.itemsize for s in self._strides)

    @property
    def device(self) -> object:
        """The `pk` device (a runtime Device) holding the buffer."""
        return self.buffer.device  # type: ignore[attr-defined]

    @property
    def is_contiguous(self) -> bool:
        """Row-major with no gaps (strides of size-1 dimensions do not matter)."""
        if self.size == 0:
            return True
        step = 1
        for s, st in zip(reversed(self.shape), reversed(self._strides)):
            if s != 1:
                if st != step:
                    return False
                step *= s
        return True

    @property
    def T(self) -> Tensor:  # noqa: N802
        """The dimensions reversed (a view), as numpy's `.T`."""
        if self.ndim == 2 and (not self.requires_grad or not is_grad_enabled()):
            return self._view(self.shape[::-1], self._strides[::-1])  # nothing to check
        return self.transpose()

    @property
    def mT(self) -> Tensor:  # noqa: N802
        """The last two dimensions swapped (a view): a stack of transposed matrices."""
        if self.ndim < 2:
            raise ValueError(f"mT needs at least 2 dimensions, the tensor has {self.ndim}")
        shape, strides = self.shape, self._strides
        out = self._view((*shape[:-2], shape[-1], shape[-2]),
                         (*strides[:-2], strides[-1], strides[-2]))
        if not self.requires_grad or not is_grad_enabled():
            return out
        return record_view("permute", out, self, _swap_last_two)

    @property
    def real(self) -> Tensor:
        """The real part: a view for a complex tensor (writes reach it, as numpy), this tensor
        for a real one."""
        return _complex_elementwise.real(self)

    @property
    def imag(self) -> Tensor:
        """The imaginary part: a view for a complex tensor, a new zero tensor for a real one."""
        return _complex_elementwise.imag(self)

    def conj(self) -> Tensor:
        """The complex conjugate (a new tensor; a copy of a real tensor)."""
        return _complex_elementwise.conj(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(self.shape[0]):
            yield self[i]

    __hash__ = None  # type: ignore[assignment]  # == is elementwise

    def __contains__(self, value: object) -> bool:
        """`value in t`: whether any element equals `value` (as numpy)."""
        return bool((self == value).any())

    # ------------------------------------------------------------ to the host

    def _extent(self) -> tuple[int, int]:
        """The lowest and highest element offsets the view touches (size > 0)."""
        lo = hi = self.offset
        for s, st in zip(self.shape, self._strides):
            if st < 0:
                lo += (s - 1) * st
            else:
                hi += (s - 1) * st
        return lo, hi

    def numpy(self) -> np.ndarray:
        """A numpy copy of the tensor; waits for the launches that write it."""
        capture.mark_unrepeatable()  # an op that reads values decides on them: no plan
        out = np.empty(self.shape, self.dtype.numpy)
        if self.size == 0:
            return out
        itemsize = self.dtype.itemsize
        if self.is_contiguous:
            self.buffer.read_into(out, self.offset * itemsize)  # type: ignore[attr-defined]
            return out
        lo, hi = self._extent()
        if hi - lo + 1 > 2 * self.size + 4096:  # a sparse view: gather on the device first
            return self.contiguous().numpy()
        flat = np.empty(hi - lo + 1, self.dtype.numpy)
        self.buffer.read_into(flat, lo * itemsize)  # type: ignore[attr-defined]
        view = np.lib.stride_tricks.as_strided(flat[self.offset - lo:], self.shape, self.strides)
        return view.copy()

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        """numpy's conversion (`np.asarray(t)`, `np.array(t)`): a host copy, an implicit one
        that `pk.transfer_guard` can log or forbid."""
        if copy is False:
            raise ValueError("a pk.Tensor lives in device memory: np.asarray(t) always copies "
                             "(copy=False is impossible)")
        implicit_copy("np.asarray(t)", self)
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def tolist(self) -> Any:
        """The elements as nested Python lists of Python numbers (a host copy)."""
        return self.numpy().tolist()

    def numel(self) -> int:
        """The number of elements, `size`, under PyTorch's name (`sum(p.numel() for p in
        model.parameters())` counts a model's parameters as it does there)."""
        return self.size

    def item(self) -> bool | int | float:
        """The value of a one-element tensor as a Python scalar."""
        if self.size != 1:
            raise ValueError(f"item() needs a tensor of one element, this one has {self.size}")
        return self.numpy().reshape(()).item()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"the truth value of a tensor of {self.size} elements is ambiguous; "
                             "use .any() or .all()")
        return bool(self.item())

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if not self.dtype.is_int:
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype.name}")
        return int(self._scalar("index"))

    def _scalar(self, what: str) -> bool | int | float:
        if self.size != 1:
            raise TypeError(f"only tensors of one element can be converted to {what}, this one "
                            f"has {self.size}")
        return self.item()

    def __dlpack_device__(self) -> tuple[int, int]:
        """DLPack export is of host memory (see `__dlpack__`), so the device is the CPU."""
        return (DLPACK_CPU, 0)

    def __dlpack__(self, *, stream: object = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """A DLPack capsule: `np.from_dlpack(t)`, `torch.from_dlpack(t)` work and receive CPU
        memory. On the host device that is the tensor's own memory unless `copy=True` (writes
        to the result reach the tensor); on a Vulkan device it is a host copy, as Vulkan memory
        cannot be handed to other frameworks (`copy=False` raises BufferError there)."""
        if dl_device is not None and tuple(dl_device) != (DLPACK_CPU, 0):
            raise BufferError(f"DLPack export to device {dl_device} is not supported; pykern "
                              "exports host memory (kDLCPU)")
        host = _interchange.export(self, copy)
        if max_version is None:
            return host.__dlpack__()
        return host.__dlpack__(max_version=max_version)

    def __reduce__(self) -> tuple[Any, tuple]:
        """pickle: a host copy of the values, dtype, shape and `requires_grad`; loading puts
        it on the device current then."""
        return _interchange.reduce_tensor(self)

    def __copy__(self) -> Tensor:
        """`copy.copy(t)`: a copy in a new device buffer (as `copy.deepcopy`)."""
        return _interchange.device_copy(self)

    def __deepcopy__(self, memo: dict) -> Tensor:
        """`copy.deepcopy(t)`: a copy in a new device buffer, with `requires_grad`."""
        memo[id(self)] = result = _interchange.device_copy(self)
        return result

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="pk.Tensor(")
        return f"pk.Tensor({body}, dtype={self.dtype!r})"

    def __str__(self) -> str:
        return str(self.numpy())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(str(self), spec)

    # ------------------------------------------------------------ autograd

    @property
    def is_leaf(self) -> bool:
        """Made by the user (or under no_grad), not recorded from an op."""
        return self.grad_fn is None

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Sets `requires_grad` in place (float and complex tensors only: integers have no
        gradient) and returns this tensor."""
        if requires_grad and not (self.dtype.is_float or self.dtype.is_complex):
            raise RuntimeError(f"only float and complex tensors can require grad, not "
                               f"{self.dtype.name}")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("requires_grad_(False) of a tensor an op made: use detach()")
        self.requires_grad = bool(requires_grad)
        return self

    def backward(self, gradient: object = None, retain_graph: bool = False) -> None:
        """Accumulates the gradient of this tensor (times `gradient`, which a result of more
        than one element needs) into the `.grad` of every leaf it depends on."""
        _engine.backward(self, gradient, retain_graph)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> Any:
        """Runs `hook(self)` during each `backward()`, as soon as every gradient of that pass
        for this leaf has been accumulated into `self.grad` (PyTorch's name; see
        pykern.autograd.hooks). Returns a handle whose `remove()` unregisters it."""
        return hooks.register_post_accumulate_grad_hook(self, hook)

    def detach(self) -> Tensor:
        """The same memory, cut from the graph: no grad_fn, requires_grad False. It shares
        the version counter too: writing into it is seen by the backward of ops that saved
        this tensor."""
        return Tensor(self.buffer, self.shape, self.dtype, self._strides, self.offset)

    @property
    def _version(self) -> int:
        """How many times this tensor's memory was written through the tensor API (in-place
        operators, out=, t[key] = v, optimizer steps), as PyTorch's `_version`."""
        return version_of(self.buffer)

    # ------------------------------------------------------------ views

    def _view(self, shape: tuple[int, ...], strides: tuple[int, ...],
              offset: int | None = None) -> Tensor:
        view = Tensor(self.buffer, tuple(shape), self.dtype, tuple(strides),
                      self.offset if offset is None else offset)
        view._base = self if self._base is None else self._base
        return view

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """The same elements in `shape` (one entry may be -1): a view when the strides allow
        it, else a contiguous copy."""
        new = _reshape_shape(self.shape, self.size, shape)
        if self.is_contiguous:
            out = self._view(new, contiguous_strides(new))
        else:
            strides = _nocopy_strides(self.shape, self._strides, new)
            if strides is None:
                return self.contiguous().reshape(new)
            out = self._view(new, strides)
        return self._viewed("reshape", out, lambda g: g.reshape(self.shape))

    def flatten(self, start_dim: int | None = None, end_dim: int = -1) -> Tensor:
        """A 1-D copy (numpy's `flatten()` always copies); with dimensions, PyTorch's
        `flatten(start_dim, end_dim)`: those dimensions merged, a view where possible."""
        if start_dim is not None or end_dim != -1:
            return _torch_functions.flatten(self, start_dim or 0, end_dim)
        return self.reshape(-1).copy() if self.is_contiguous else self.reshape(-1)

    def ravel(self) -> Tensor:
        """A 1-D view when possible, else a copy."""
        return self.reshape(-1)

    def transpose(self, *axes: int | Sequence[int]) -> Tensor:
        """Dimensions permuted (a view): no argument reverses them, as numpy."""
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0])  # type: ignore[arg-type]
        if not axes:
            axes = tuple(range(self.ndim))[::-1]
        elif len(axes) == 2 and self.ndim != 2:  # PyTorch's transpose(dim0, dim1)
            raise ValueError(f"transpose{axes}: pk.Tensor.transpose is numpy's, a permutation "
                             f"of all {self.ndim} axes; swap two axes (PyTorch's transpose) "
                             f"with swapaxes{axes}")
        return self.permute(*axes)  # type: ignore[arg-type]

    def permute(self, *dims: int | Sequence[int]) -> Tensor:
        """The dimensions in the order `dims` (a view)."""
        if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)):
            dims = tuple(dims[0])  # type: ignore[arg-type]
        if len(dims) != self.ndim:
            raise ValueError(f"permute needs {self.ndim} axes for a tensor of shape "
                             f"{self.shape}, got {dims}")
        n = self.ndim
        order = [d if type(d) is int and 0 <= d < n else normalize_axis(d, n)  # type: ignore
                 for d in dims]
        if len(set(order)) != n:
            raise ValueError(f"axes {dims} are not a permutation of 0..{n - 1}")
        shape, strides = self.shape, self._strides
        out = self._view(tuple([shape[d] for d in order]), tuple([strides[d] for d in order]))
        if not self.requires_grad:
            return out
        inverse = [order.index(i) for i in range(n)]
        return self._viewed("permute", out, lambda g: g.permute(*inverse))

    def swapaxes(self, a: int, b: int) -> Tensor:
        """Two dimensions exchanged (a view)."""
        order = list(range(self.ndim))
        a, b = normalize_axis(a, self.ndim), normalize_axis(b, self.ndim)
        order[a], order[b] = order[b], order[a]
        return self.permute(*order)

    def broadcast_to(self, shape: int | Sequence[int]) -> Tensor:
        """A view of `shape` repeating this tensor along new or size-1 dimensions (stride 0)."""
        shape = _shape(shape)
        if len(shape) < self.ndim:
            raise ValueError(f"cannot broadcast a tensor of shape {self.shape} to {shape}: "
                             "fewer dimensions")
        lead = len(shape) - self.ndim
        strides = [0] * lead
        for s, st, target in zip(self.shape, self._strides, shape[lead:]):
            if s == target:
                strides.append(st)
            elif s == 1:
                strides.append(0)
            else:
                raise ValueError(f"cannot broadcast a tensor of shape {self.shape} to {shape}")
        # the engine sums the gradient over the broadcast dimensions
        return self._viewed("broadcast_to", self._view(shape, tuple(strides)), lambda g: g)

    def expand(self, *sizes: int | Sequence[int]) -> Tensor:
        """PyTorch's `expand`: `broadcast_to` where -1 keeps a dimension's size."""
        if len(sizes) == 1 and not isinstance(sizes[0], (int, np.integer)):
            sizes = tuple(sizes[0])  # type: ignore[arg-type]
        lead = len(sizes) - self.ndim
        if lead < 0:
            raise ValueError(f"expand: {sizes} has fewer dimensions than the tensor {self.shape}")
        shape = tuple(self.shape[i - lead] if s == -1 and i >= lead else s
                      for i, s in enumerate(sizes))  # type: ignore[misc]
        return self.broadcast_to(shape)

    def squeeze(self, axis: int | Sequence[int] | None = None) -> Tensor:
        """Size-1 dimensions removed (a view): all of them, or those in `axis` (which must have
        size 1)."""
        if axis is None:
            keep = [i for i, s in enumerate(self.shape) if s != 1]
        else:
            axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            drop = {normalize_axis(a, self.ndim) for a in axes}
            for a in drop:
                if self.shape[a] != 1:
                    raise ValueError(f"cannot squeeze axis {a} of size {self.shape[a]} (shape "
                                     f"{self.shape})")
            keep = [i for i in range(self.ndim) if i not in drop]
        out = self._view(tuple(self.shape[i] for i in keep),
                         tuple(self._strides[i] for i in keep))
        return self._viewed("squeeze", out, lambda g: g.reshape(self.shape))

    def unsqueeze(self, dim: int) -> Tensor:
        """A size-1 dimension inserted at `dim` (a view; -1 appends)."""
        dim = normalize_axis(dim, self.ndim + 1, "dim")
        shape = list(self.shape)
        strides = list(self._strides)
        shape.insert(dim, 1)
        strides.insert(dim, 0)
        out = self._view(tuple(shape), tuple(strides))
        return self._viewed("unsqueeze", out, lambda g: g.reshape(self.shape))

    def flip(self, axis: int | Sequence[int] | None = None) -> Tensor:
        """The order of elements reversed along `axis` (all axes when None): a view with
        negative strides."""
        axes = range(self.ndim) if axis is None else \
            [axis] if isinstance(axis, (int, np.integer)) else list(axis)
        key: list[slice] = [slice(None)] * self.ndim
        for a in axes:
            key[normalize_axis(a, self.ndim)] = slice(None, None, -1)
        return self[tuple(key)]

    def __getitem__(self, key: object) -> Tensor:
        """Basic indexing (a view): ints (negative too) drop a dimension, slices with any step,
        `None` adds a dimension, `...` stands for the rest. Keys with integer arrays or
        boolean masks (numpy's advanced indexing) give a copy (`advanced_index`)."""
        if _advanced_key.is_advanced(key):
            return _advanced_index.getitem(self, key)
        shape, strides, offset = _index(self, key)
        return self._viewed("getitem", self._view(shape, strides, offset),
                            lambda g: _scatter_into_zeros(self, key, g))

    def _viewed(self, name: str, out: Tensor, back: Callable[[Tensor], Tensor]) -> Tensor:
        """`out`, a view of this tensor, with its backward recorded where this requires grad
        (`back(g)` gives this tensor's gradient)."""
        if not self.requires_grad:
            return out
        return record_view(name, out, self, back)

    # ------------------------------------------------------------ copies

    def contiguous(self) -> Tensor:
        """This tensor if it is row-major already, else a row-major copy."""
        return self if self.is_contiguous else self.copy()

    def copy(self) -> Tensor:
        """A row-major copy in a new buffer."""
        device = self.buffer.device
        if (capture.ACTIVE[0] is None and device is get_device() and self.is_contiguous
                and not (self.requires_grad and is_grad_enabled())):
            # the bytes as they are, by the device's buffer copy (queued like a launch):
            # nothing to record, and not inside an op's capture, whose plan replays launches.
            # (`copy_into` would check both layouts again: 1.6 us more on every first .grad)
            nbytes = self.nbytes
            out = Tensor(device.create_buffer(nbytes), self.shape, self.dtype)
            size = self.dtype.itemsize
            device.copy_buffer(self.buffer, self.offset * size, out.buffer, 0, nbytes)
            return out
        return _elementwise.astype(self, self.dtype, copy=True)

    def clone(self) -> Tensor:
        """A row-major copy (as `copy()`; PyTorch's name)."""
        return self.copy()

    def astype(self, dtype: object, copy: bool = True) -> Tensor:
        """The values converted to `dtype` (a new tensor; with copy=False, this one when the
        dtype is already right). Float to int truncates toward zero; to bool is `!= 0`."""
        return _elementwise.astype(self, dtype, copy=copy)

    def to(self, *args: object, device: object = None, dtype: object = None,
           non_blocking: bool = False, copy: bool = False) -> Tensor:
        """This tensor on `device` and/or in `dtype`, as PyTorch's `to` (`t.to("host")`,
        `t.to(pk.f64)`, `t.to(1, pk.f32)`, `t.to(other)`: other's device and dtype); itself
        where nothing changes, unless `copy`. `device` is an entry of `pk.devices()`, a device
        as `pk.get_device()` returns, an index, or a name as `pk.set_device` takes. A copy on
        another device is made there (through host memory) and is a new leaf. A copy of a
        tensor that requires grad requires grad too where the tensor is a leaf (a parameter
        moved to another device); one made by an op is refused while grad mode records, since
        the copy would cut it from its graph (`.detach()` it first). A dtype conversion is
        `astype` (differentiable)."""
        device, dtype = to_arguments(args, device, dtype)
        out = self if device is None else self._to_device(device)
        if dtype is not None:
            out = out.astype(dtype, copy=False)
        return out.clone() if copy and out is self else out

    def _to_device(self, device: object) -> Tensor:
        target = device_for(device)
        if target is self.device:
            return self
        if self.requires_grad and self.grad_fn is not None:
            refuse_grad("Tensor.to", self)
        host = self.numpy()  # explicit: a move the user asked for, never guarded
        with running_on(target):
            moved = asarray(host, self.dtype)
        if self.requires_grad and self.grad_fn is None:
            moved.requires_grad_()
        return moved

    def to_device(self, device: object, /, *, stream: object = None) -> Tensor:
        """The array API's `to_device`: as `to(device)` (`stream` is not used)."""
        return self.to(device)

    def __setitem__(self, key: object, value: object) -> None:
        """`t[key] = value`: writes a scalar or a tensor (broadcast to the indexed region)
        into this tensor's buffer. Where the tensor (or the one whose memory it shares) or
        the value requires grad, the write is recorded (`pykern.autograd.inplace`). Keys with
        integer arrays or boolean masks write through `advanced_index` (last write wins)."""
        if _advanced_key.is_advanced(key):
            _advanced_index.setitem(self, key, value)
            return
        shape, strides, offset = _index(self, key)
        region = self._view(shape, strides, offset)
        base = region._base
        if base.requires_grad or getattr(value, "requires_grad", False):  # type: ignore
            if inplace.records_write(region, value):
                inplace.refuse_leaf("t[key] = value", self)
                inplace.assign("setitem", region, value)
                return
        _elementwise.assign(region, value)

    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        """The Python array API namespace for pykern tensors: `pykern.array_api` (standard
        2024.12) by default, or that of `api_version` ("2023.12"; 2021.12 and 2022.12 get
        2023.12's)."""
        return _namespace_versions.namespace(api_version)

    # ------------------------------------------------------------ numpy interop

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy ufuncs on tensors run pykern's kernels (`np.exp(t)` is `pk.exp(t)`,
        `np.add.reduce(t)` a sum); those pykern does not have run numpy's on host copies.
        See `pykern.tensor.api.numpy_ufuncs`."""
        return _numpy_ufuncs.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        """numpy functions on tensors (`np.sum(t)`, `np.concatenate([t, u])`) run pykern's
        ops and return tensors; every other one runs numpy's on host copies and returns
        numpy's result (`pk.transfer_guard` catches those copies). See
        `pykern.tensor.api.numpy_functions`."""
        return _numpy_functions.array_function(func, args, kwargs)

    # ------------------------------------------------------------ operators

    def _binary(self, op: bo.BinaryOp, other: object, reflected: bool = False) -> Any:
        if not _is_operand(other):
            return NotImplemented
        ew = _elementwise
        return ew.binary(op, other, self) if reflected else ew.binary(op, self, other)

    def _inplace(self, op: bo.BinaryOp, other: object) -> Tensor:
        if not _is_operand(other):
            return NotImplemented
        _elementwise.binary(op, self, other, out=self)
        return self

    def __add__(self, o: object) -> Tensor: return self._binary(bo.ADD, o)
    def __radd__(self, o: object) -> Tensor: return self._binary(bo.ADD, o, True)
    def __iadd__(self, o: object) -> Tensor: return self._inplace(bo.ADD, o)
    def __sub__(self, o: object) -> Tensor: return self._binary(bo.SUBTRACT, o)
    def __rsub__(self, o: object) -> Tensor: return self._binary(bo.SUBTRACT, o, True)
    def __isub__(self, o: object) -> Tensor: return self._inplace(bo.SUBTRACT, o)
    def __mul__(self, o: object) -> Tensor: return self._binary(bo.MULTIPLY, o)
    def __rmul__(self, o: object) -> Tensor: return self._binary(bo.MULTIPLY, o, True)
    def __imul__(self, o: object) -> Tensor: return self._inplace(bo.MULTIPLY, o)
    def __truediv__(self, o: object) -> Tensor: return self._binary(bo.DIVIDE, o)
    def __rtruediv__(self, o: object) -> Tensor: return self._binary(bo.DIVIDE, o, True)
    def __itruediv__(self, o: object) -> Tensor: return self._inplace(bo.DIVIDE, o)
    def __floordiv__(self, o: object) -> Tensor: return self._binary(bo.FLOOR_DIVIDE, o)
    def __rfloordiv__(self, o: object) -> Tensor: return self._binary(bo.FLOOR_DIVIDE, o, True)
    def __ifloordiv__(self, o: object) -> Tensor: return self._inplace(bo.FLOOR_DIVIDE, o)
    def __mod__(self, o: object) -> Tensor: return self._binary(bo.REMAINDER, o)
    def __rmod__(self, o: object) -> Tensor: return self._binary(bo.REMAINDER, o, True)
    def __imod__(self, o: object) -> Tensor: return self._inplace(bo.REMAINDER, o)
    def __pow__(self, o: object) -> Tensor: return self._binary(bo.POW, o)
    def __rpow__(self, o: object) -> Tensor: return self._binary(bo.POW, o, True)
    def __ipow__(self, o: object) -> Tensor: return self._inplace(bo.POW, o)
    def __and__(self, o: object) -> Tensor: return self._binary(bo.BITWISE_AND, o)
    def __rand__(self, o: object) -> Tensor: return self._binary(bo.BITWISE_AND, o, True)
    def __iand__(self, o: object) -> Tensor: return self._inplace(bo.BITWISE_AND, o)
    def __or__(self, o: object) -> Tensor: return self._binary(bo.BITWISE_OR, o)
    def __ror__(self, o: object) -> Tensor: return self._binary(bo.BITWISE_OR, o, True)
    def __ior__(self, o: object) -> Tensor: return self._inplace(bo.BITWISE_OR, o)
    def __xor__(self, o: object) -> Tensor: return self._binary(bo.BITWISE_XOR, o)
    def __rxor__(self, o: object) -> Tensor: return self._binary(bo.BITWISE_XOR, o, True)
    def __ixor__(self, o: object) -> Tensor: return self._inplace(bo.BITWISE_XOR, o)
    def __lshift__(self, o: object) -> Tensor: return self._binary(bo.LEFT_SHIFT, o)
    def __rlshift__(self, o: object) -> Tensor:
        return self._binary(bo.LEFT_SHIFT, o, True)
    def __ilshift__(self, o: object) -> Tensor: return self._inplace(bo.LEFT_SHIFT, o)
    def __rshift__(self, o: object) -> Tensor: return self._binary(bo.RIGHT_SHIFT, o)
    def __rrshift__(self, o: object) -> Tensor:
        return self._binary(bo.RIGHT_SHIFT, o, True)
    def __irshift__(self, o: object) -> Tensor: return self._inplace(bo.RIGHT_SHIFT, o)
    def __eq__(self, o: object) -> Tensor:  # type: ignore[override]
        """`self == o` elementwise, a bool tensor (numpy's `equal`), not one truth value."""
        return self._binary(bo.EQUAL, o)

    def __ne__(self, o: object) -> Tensor:  # type: ignore[override]
        """`self != o` elementwise, a bool tensor (numpy's `not_equal`)."""
        return self._binary(bo.NOT_EQUAL, o)

    def __lt__(self, o: object) -> Tensor: return self._binary(bo.LESS, o)
    def __le__(self, o: object) -> Tensor: return self._binary(bo.LESS_EQUAL, o)
    def __gt__(self, o: object) -> Tensor: return self._binary(bo.GREATER, o)
    def __ge__(self, o: object) -> Tensor: return self._binary(bo.GREATER_EQUAL, o)

    def __matmul__(self, o: object) -> Tensor:
        if not _is_operand(o):
            return NotImplemented
        return _matmul.matmul(self, o)

    def __rmatmul__(self, o: object) -> Tensor:
        if not _is_operand(o):
            return NotImplemented
        return _matmul.matmul(o, self)

    def __imatmul__(self, o: object) -> Tensor:
        if not _is_operand(o):
            return NotImplemented
        result = _matmul.matmul(self, o)
        if result.shape != self.shape:
            raise ValueError(f"@= would change the shape {self.shape} to {result.shape}")
        self[...] = result
        return self

    def __neg__(self) -> Tensor: return _elementwise.negative(self)
    def __pos__(self) -> Tensor: return _elementwise.positive(self)
    def __abs__(self) -> Tensor: return _elementwise.abs(self)
    def __invert__(self) -> Tensor: return _elementwise.bitwise_invert(self)

    # ------------------------------------------------------------ methods

    def sum(self, axis: Any = None, keepdims: bool = False, dtype: object = None) -> Tensor:
        """The sum over `axis` (all for None; an int or a tuple), as `pk.sum`."""
        return _reduction.sum(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def prod(self, axis: Any = None, keepdims: bool = False, dtype: object = None) -> Tensor:
        """The product over `axis`, as `pk.prod`."""
        return _reduction.prod(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """The arithmetic mean over `axis`, as `pk.mean`."""
        return _reduction.mean(self, axis=axis, keepdims=keepdims)

    def var(self, axis: Any = None, keepdims: bool = False, correction: float = 0,
            ddof: float | None = None) -> Tensor:
        """The variance over `axis` with `correction` (numpy's `ddof`), as `pk.var`."""
        return _reduction.var(self, axis=axis, keepdims=keepdims, correction=correction,
                                    ddof=ddof)

    def std(self, axis: Any = None, keepdims: bool = False, correction: float = 0,
            ddof: float | None = None) -> Tensor:
        """The standard deviation over `axis` with `correction` (`ddof`), as `pk.std`."""
        return _reduction.std(self, axis=axis, keepdims=keepdims, correction=correction,
                                    ddof=ddof)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """The largest element over `axis` (nan propagates), as `pk.max`."""
        return _reduction.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """The smallest element over `axis` (nan propagates), as `pk.min`."""
        return _reduction.min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        """The index of the largest element along `axis` (of the flattened tensor for None)."""
        return _reduction.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        """The index of the smallest element along `axis` (of the flattened tensor for None)."""
        return _reduction.argmin(self, axis=axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """Whether any element over `axis` is true (non-zero)."""
        return _reduction.any(self, axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """Whether every element over `axis` is true (non-zero)."""
        return _reduction.all(self, axis=axis, keepdims=keepdims)

    def clip(self, min: object = None, max: object = None) -> Tensor:  # noqa: A002
        """The elements limited to [min, max] (either may be None), as `pk.clip`."""
        return _elementwise.clip(self, min, max)

    def round(self, decimals: int = 0, out: Tensor | None = None) -> Tensor:
        """Rounded to `decimals` places, halves to even (as numpy: scaled by 10**decimals,
        rounded, scaled back)."""
        ew = _elementwise
        integral = self.dtype.is_int or self.dtype == dt.bool_
        if decimals == 0 or (integral and decimals > 0):  # integers are integral already
            return ew.round(self, out=out)
        if integral:
            return _round_integer(self, decimals, out)
        scale = 10.0 ** decimals
        return ew.divide(ew.round(ew.multiply(self, scale)), scale, out=out)


def _round_integer(x: Tensor, decimals: int, out: Tensor | None) -> Tensor:
    """An integer tensor rounded to a multiple of 10**-decimals (decimals < 0), halves to
    even, in its own dtype (numpy's dtype; exact, where a float would round large values)."""
    ew = _elementwise
    if x.dtype == dt.bool_:
        raise TypeError("round of a bool tensor with decimals: numpy cannot store the result")
    step = 10 ** -decimals
    if step > np.iinfo(x.dtype.numpy).max:  # every value is nearer 0 than a step's half
        return ew.multiply(x, 0, out=out)
    q = ew.floor_divide(x, step)
    r = ew.remainder(x, step)  # in [0, step)
    rest = ew.subtract(step, r)
    odd = ew.not_equal(ew.remainder(q, 2), 0)
    up = ew.logical_or(ew.greater(r, rest), ew.logical_and(ew.equal(r, rest), odd))
    return ew.multiply(ew.add(q, ew.astype(up, x.dtype)), step, out=out)


def _is_operand(value: object) -> bool:
    return isinstance(value, (Tensor, np.ndarray, np.generic, bool, int, float, complex, list,
                              tuple))


# ---------------------------------------------------------------- indexing and reshaping


def _index(t: Tensor, key: object) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Shape, strides and offset of the view `t[key]` for basic indexing."""
    items = key if isinstance(key, tuple) else (key,)
    ellipses = sum(1 for k in items if k is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    items = tuple(k.__index__() if isinstance(k, Tensor) and k.ndim == 0 and k.dtype.is_int
                  else k for k in items)  # a 0-d integer tensor indexes like an int
    for k in items:
        if isinstance(k, (Tensor, np.ndarray, list)) or isinstance(k, (bool, np.bool_)):
            raise IndexError("pykern tensors support basic indexing only (ints, slices, None, "
                             f"...), not {type(k).__name__}; use pk.take for gathers")
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
    if consumed > t.ndim:
        raise IndexError(f"too many indices: {consumed} for a tensor of {t.ndim} dimension(s)")
    if ellipses:
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        items = items[:at] + (slice(None),) * (t.ndim - consumed) + items[at + 1:]
    else:
        items = items + (slice(None),) * (t.ndim - consumed)
    shape: list[int] = []
    strides: list[int] = []
    offset = t.offset
    dim = 0
    for k in items:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        size, stride = t.shape[dim], t._strides[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(size)
            n = len(range(start, stop, step))
            if n:
                offset += start * stride
            shape.append(n)
            strides.append(stride * step)
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError(f"invalid index {k!r}: only ints, slices, None and ... are "
                                 "supported") from None
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size}")
            offset += (i % size) * stride
        dim += 1
    return tuple(shape), tuple(strides), offset


def _reshape_shape(old: tuple[int, ...], size: int, shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    try:
        new = [operator.index(s) for s in shape]
    except TypeError:
        raise TypeError(f"reshape takes ints, got {shape!r}") from None
    unknown = [i for i, s in enumerate(new) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in new):
        raise ValueError(f"invalid shape {tuple(new)}: at most one -1 and no other negative size")
    known = 1
    for s in new:
        if s != -1:
            known *= s
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape a tensor of shape {old} (size {size}) into "
                             f"{tuple(new)}")
        new[unknown[0]] = size // known
    elif known != size:
        raise ValueError(f"cannot reshape a tensor of shape {old} (size {size}) into {tuple(new)}")
    return tuple(new)


def _nocopy_strides(old_shape: tuple[int, ...], old_strides: tuple[int, ...],
                    new_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that make `new_shape` a view of a strided tensor, or None when a copy is needed
    (numpy's _attempt_nocopy_reshape, C order)."""
    if 0 in new_shape:
        return contiguous_strides(new_shape)
    dims = [(s, st) for s, st in zip(old_shape, old_strides) if s != 1]
    olddims = [s for s, _ in dims]
    oldstrides = [st for _, st in dims]
    newdims = list(new_shape)
    newstrides = [0] * len(newdims)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(newdims) and oi < len(olddims):
        np_, op = newdims[ni], olddims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= newdims[nj]
                nj += 1
            else:
                op *= olddims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1]:
                return None
        newstrides[nj - 1] = oldstrides[oj - 1]
        for nk in range(nj - 1, ni, -1):
            newstrides[nk - 1] = newstrides[nk] * newdims[nk]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = newstrides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(newdims)):
        newstrides[nk] = last
    return tuple(newstrides)


# ---------------------------------------------------------------- creation from host data


@accepts_requires_grad
def empty(shape: int | Sequence[int], *dims: int | object, dtype: object = None,
          device: object = None) -> Tensor:
    """An uninitialised tensor. `pk.empty((2, 3), pk.f32)`, `pk.empty(2, 3)` (f32 unless
    `dtype` says otherwise)."""
    shape, dtype = shape_args(shape, dims, dtype)
    d = dt.f32 if dtype is None else dt.as_dtype(dtype)
    shape = _shape(shape)
    n = 1
    for s in shape:
        n *= s
    buffer = get_device().create_buffer(n * d.itemsize)
    if capture.ACTIVE[0] is not None:  # an op's launches being noted for its plan
        capture.note_created(buffer)
    return Tensor(buffer, shape, d)


@accepts_requires_grad
def asarray(obj: object, dtype: object = None, *, copy: bool | None = None,
            device: object = None, non_blocking: bool = False) -> Tensor:
    """A tensor holding a copy of `obj` (a numpy array, a nested list, a scalar, a Tensor or any
    object with `__array__`/`__dlpack__`). Python floats become f32 and Python ints i32 unless
    `dtype` says otherwise; numpy arrays keep their dtype. A Tensor of the right dtype is
    returned as is (copy=True copies it).

    `non_blocking=True` returns once the data are in staging memory, while the copy to the
    device goes on (kernels using the tensor, and `t.numpy()`, wait for it on the device); `obj`
    may be changed at once either way. Without it, a large copy keeps only a few pieces in
    staging at a time, or reads `obj`'s own pages where the device can import them."""
    if isinstance(obj, Tensor):
        if dtype is None or dt.as_dtype(dtype) == obj.dtype:
            return obj.copy() if copy else obj
        if copy is False:
            raise ValueError(f"asarray(copy=False) cannot convert {obj.dtype.name} to "
                             f"{dt.as_dtype(dtype).name} without a copy")
        return obj.astype(dtype)
    if copy is False:
        raise ValueError("asarray(copy=False) of host data is impossible: the data must be "
                         "copied to the device")
    d = None if dtype is None else dt.as_dtype(dtype)
    if isinstance(obj, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat_items(obj)):
        obj = _lists_of_tensors_to_numpy(obj)
    arr = _bf16_words(obj) if d == dt.bf16 else \
        np.asarray(obj, dtype=None if d is None else d.numpy)
    if d is None:
        if arr.dtype == np.float64 and not _has_numpy_dtype(obj):
            arr = arr.astype(np.float32)  # Python floats default to f32, as in kernels
        elif arr.dtype == np.int64 and not _has_numpy_dtype(obj):
            if arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
                raise OverflowError("Python integers out of the range of the default integer "
                                    "dtype i32; pass dtype=pk.i64")
            arr = arr.astype(np.int32)
        elif arr.dtype == np.complex128 and not _has_numpy_dtype(obj):
            arr = arr.astype(np.complex64)  # Python complex numbers default to c64, as floats
        try:
            d = dt.from_numpy(arr.dtype)
        except KeyError:
            raise TypeError(f"numpy dtype {arr.dtype} has no pykern equivalent") from None
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    t = Tensor(get_device().create_buffer(arr.nbytes), arr.shape, d)
    if arr.nbytes:
        capture.mark_unrepeatable()  # a replay would not upload these values again
        # ml_dtypes' bfloat16 has no buffer-protocol format: its words are uploaded
        t.buffer.upload(arr.view(d.storage) if d == dt.bf16 else arr,  # type: ignore[attr-defined]
                        non_blocking=non_blocking)
    return t


def wrapping(array: np.ndarray) -> Tensor | None:
    """A tensor over `array`'s own memory, not a copy, where the current device is the host
    and the layout allows (C-contiguous, writable, native byte order, a pykern dtype); else
    None. For kernel arguments: a kernel launched with a numpy array reads and writes it in
    place on every device, and on the host it needs no copy for that."""
    device = get_device()
    if device.info.kind != "host" or not (array.flags.c_contiguous and array.flags.writeable
                                          and array.dtype.isnative):
        return None
    try:
        d = dt.from_numpy(array.dtype)
    except KeyError:
        return None
    return Tensor(device.wrap(array), array.shape, d)  # type: ignore[attr-defined]


def _bf16_words(obj: object) -> np.ndarray:
    """`obj`'s values as bf16 bit patterns (uint16), rounded by pykern's rule, as kernels round
    (`bf16_rounding`): not by ml_dtypes, whose conversions of f64 and 64-bit integers have
    rounded twice in some versions. bf16 arrays keep their bits; complex and object data are
    left to numpy and ml_dtypes."""
    src = np.asarray(obj)
    if dt.numpy_is_bf16(src.dtype):
        return src.view(np.uint16)
    if src.dtype.kind in "biuf":
        return bf16_words(src)
    return np.asarray(obj, dtype=dt.bf16.numpy).view(np.uint16)


def _has_numpy_dtype(obj: object) -> bool:
    return isinstance(obj, (np.ndarray, np.generic)) or hasattr(obj, "__array__") and \
        not isinstance(obj, (list, tuple))


def _flat_items(obj: object) -> Iterator[object]:
    if isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _flat_items(x)
    else:
        yield obj


def _lists_of_tensors_to_numpy(obj: object) -> object:
    if isinstance(obj, (list, tuple)):
        return [_lists_of_tensors_to_numpy(x) for x in obj]
    return obj.numpy() if isinstance(obj, Tensor) else obj


def empty_like(t: Tensor | np.ndarray, dtype: object = None, *, device: object = None) -> Tensor:
    """An uninitialised tensor of `t`'s shape and (unless given) dtype."""
    return empty(t.shape, _like_dtype(t, dtype))


def _like_dtype(t: object, dtype: object) -> DType:
    if dtype is not None:
        return dt.as_dtype(dtype)
    d = getattr(t, "dtype", None)
    if isinstance(d, DType):
        return d
    try:
        return dt.from_numpy(d)
    except (KeyError, TypeError):
        raise TypeError(f"cannot take a dtype from {type(t).__name__}") from None


def _operator_docs() -> None:
    """A docstring for each operator method, from the table of symbols (`help(t.__add__)`)."""
    symbols = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
               "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^",
               "lshift": "<<", "rshift": ">>"}
    for core, symbol in symbols.items():
        for name, text in ((f"__{core}__", f"`a {symbol} b`: elementwise, numpy's broadcasting "
                                           "and promotion (a new tensor)."),
                           (f"__r{core}__", f"`b {symbol} a` where the left operand b is not a "
                                            "tensor (a scalar, a list, a numpy array)."),
                           (f"__i{core}__", f"`a {symbol}= b`: in place, into a's memory.")):
            method = vars(Tensor).get(name)
            if method is not None and not method.__doc__:
                method.__doc__ = text
    for name, text in (("__neg__", "`-a`"), ("__pos__", "`+a` (a copy)"),
                       ("__abs__", "`abs(a)`"), ("__invert__", "`~a`: bitwise (logical for "
                                                               "bool)"),
                       ("__bool__", "`bool(a)` of a one-element tensor (reads it)"),
                       ("__int__", "`int(a)` of a one-element tensor (reads it)"),
                       ("__float__", "`float(a)` of a one-element tensor (reads it)"),
                       ("__complex__", "`complex(a)` of a one-element tensor (reads it)"),
                       ("__index__", "`a` as an index: a one-element integer tensor (reads it)"),
                       ("__len__", "The size of the first dimension"),
                       ("__iter__", "The views along the first dimension"),
                       ("__init__", "A tensor over `buffer` (use pk.asarray, pk.empty, ... to "
                                    "make one)")):
        method = vars(Tensor).get(name)
        if method is not None and not method.__doc__:
            method.__doc__ = text + "."


_operator_docs()

# every public method and operator runs on the tensor's own device
# (pykern.tensor.core.operand_device)
operand_device.TENSOR_TYPES.append(Tensor)
# kernels bind tensors as arrays (the jit knows the protocol, not this class)
register_array_type(Tensor, "pk.Tensor", lambda a: asarray(a), wrapping)
operand_device.wrap_methods(Tensor)

# The op library and the numpy and array API faces, which Tensor's methods and operators run:
# their modules import this one (for Tensor), so they are imported last, when Tensor exists,
# and their functions looked up when a method runs.
from pykern.tensor.api import namespace_versions as _namespace_versions  # noqa: E402
from pykern.tensor.api import numpy_functions as _numpy_functions  # noqa: E402
from pykern.tensor.api import numpy_ufuncs as _numpy_ufuncs  # noqa: E402
from pykern.tensor.complex import complex_elementwise as _complex_elementwise  # noqa: E402
from pykern.tensor.core import interchange as _interchange  # noqa: E402
from pykern.tensor.create import creation as _creation  # noqa: E402
from pykern.tensor.elementwise import functions as _elementwise  # noqa: E402
from pykern.tensor.gemm import matmul as _matmul  # noqa: E402
from pykern.tensor.index import advanced_index as _advanced_index  # noqa: E402
from pykern.tensor.index import advanced_key as _advanced_key  # noqa: E402
from pykern.tensor.reduce import reduction as _reduction  # noqa: E402
from pykern.tensor.api import ndarray_helpers as _ndarray_helpers  # noqa: E402
from pykern.tensor.reduce import searching as _searching  # noqa: E402
from pykern.tensor.reduce import sort as _sort  # noqa: E402
from pykern.tensor.api import torch_functions as _torch_functions  # noqa: E402

ndarray_methods.LIBRARY.__dict__.update(
    ndarray_helpers=_ndarray_helpers, numpy_functions=_numpy_functions,
    numpy_ufuncs=_numpy_ufuncs, reduction=_reduction, searching=_searching, sort=_sort)

# the binary operators' fast path (replays an op plan without the layers above it): installed
# over the wrapped operators, which it falls back to
from pykern.tensor.core import fast_operators as _fast_operators  # noqa: E402

_fast_operators.install(Tensor)

# the same for the unary methods and the full reductions
from pykern.tensor.core import fast_methods as _fast_methods  # noqa: E402

_fast_methods.install(Tensor)
