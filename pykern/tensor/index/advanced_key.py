"""Reading an index key that has advanced parts (numpy's "advanced indexing"): integer arrays,
boolean masks and 0-d booleans, mixed with ints, slices, `None` and `...`.

`select(x, key)` checks the whole key before anything is written and turns it into a
`Selection`: a basic key (slices and `None` only) giving a view of `x`, the positions of that
view's dimensions that index arrays select along, and one i64 index tensor per such dimension,
already wrapped into [0, size). numpy's rules are followed exactly:

- a boolean mask of k dimensions stands for the k integer arrays of its `nonzero()` (found on
  the device by a prefix scan and a compaction; the count is read back once);
- a 0-d boolean adds a dimension of size 1 (`True`) or 0 (`False`) that it indexes;
- next to an index array, an int is a 0-d index array;
- the index arrays broadcast together; their shape replaces the dimensions they index when
  those are adjacent in the key, and goes first otherwise.

Host index data (lists, numpy arrays) is range-checked on the host; device tensors are checked
with one read-back of their minima and maxima, for all of them together.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from pykern.lang import dtypes as dt
from pykern.tensor.core.tensor import Tensor, asarray
from pykern.tensor.core.strided import broadcast_shapes, prod
from pykern.tensor.elementwise.functions import minimum
from pykern.tensor.index.indexing import concat
from pykern.tensor.reduce.searching import nonzero
from pykern.tensor.elementwise.functions import where

INVALID_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and integer or boolean "
                 "arrays are valid indices")


@dataclass(frozen=True)
class Selection:
    """What an advanced key selects from a tensor of shape `shape_of_x`.

    `basic`: a key of slices and None whose view holds every dimension an index array
    selects along; `dims`: those dimensions' positions in that view; `sizes`: their sizes;
    `arrays`: per position,
    an i64 index tensor with values in [0, size) (or a Python int for an int index);
    `shape`: the arrays' broadcast shape; `adjacent`: whether that shape replaces the
    dimensions in place (else it goes first); `unique`: no two selected positions can
    coincide (no int arrays, only masks and ints), so writes need no last-wins pass."""

    shape_of_x: tuple[int, ...]
    basic: tuple[slice | None, ...]
    dims: tuple[int, ...]
    sizes: tuple[int, ...]
    arrays: tuple[Tensor | int, ...]
    shape: tuple[int, ...]
    adjacent: bool
    unique: bool


def is_advanced(key: object) -> bool:
    """Whether `key` has a part that basic indexing (views) cannot express."""
    items = key if isinstance(key, tuple) else (key,)
    return any(_is_advanced_item(k, nested=isinstance(key, tuple)) for k in items)


def _is_advanced_item(k: object, nested: bool) -> bool:
    if isinstance(k, (bool, np.bool_, list)) or (nested and isinstance(k, tuple)):
        return True
    if isinstance(k, Tensor):
        return k.ndim > 0 or k.dtype == dt.bool_ or not k.dtype.is_int
    return isinstance(k, np.ndarray)  # a 0-d integer array too: read as an int here


# ---------------------------------------------------------------- the items of a key

@dataclass(frozen=True)
class _Item:
    """One entry of the key: kind is 'int', 'array', 'mask', 'bool', 'slice', 'none',
    'ellipsis' or 'gap' (an Ellipsis standing for no dimension); `value` the int, slice, bool,
    or the index/mask data (Tensor or ndarray)."""

    kind: str
    value: object = None

    @property
    def consumed(self) -> int:
        """How many dimensions of the indexed tensor this entry uses up."""
        if self.kind in ("int", "array", "slice"):
            return 1
        if self.kind == "mask":
            return self.value.ndim  # type: ignore[attr-defined]
        return 0


def _classify(k: object) -> _Item:
    if k is None:
        return _Item("none")
    if k is Ellipsis:
        return _Item("ellipsis")
    if isinstance(k, slice):
        return _Item("slice", k)
    if isinstance(k, (bool, np.bool_)):
        return _Item("bool", bool(k))
    if isinstance(k, Tensor):
        return _classify_tensor(k)
    if isinstance(k, (np.ndarray, list, tuple)):
        return _classify_host(k)
    try:
        return _Item("int", operator.index(k))
    except TypeError:
        raise IndexError(f"{INVALID_INDEX}; got {type(k).__name__}") from None


def _classify_tensor(k: Tensor) -> _Item:
    if k.dtype == dt.bool_:
        return _Item("bool", bool(k.item())) if k.ndim == 0 else _Item("mask", k)
    if not k.dtype.is_int:
        raise IndexError("arrays used as indices must be of integer (or boolean) type, got a "
                         f"tensor of dtype {k.dtype.name}")
    return _Item("int", int(k.item())) if k.ndim == 0 else _Item("array", k)


def _classify_host(k: object) -> _Item:
    arr = np.asarray(k) if not isinstance(k, np.ndarray) else k
    if not isinstance(k, np.ndarray) and arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)  # `[]` selects nothing, as numpy reads it
    if arr.dtype == np.bool_:
        return _Item("bool", bool(arr)) if arr.ndim == 0 else _Item("mask", arr)
    if arr.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type, got "
                         f"dtype {arr.dtype}")
    return _Item("int", int(arr)) if arr.ndim == 0 else _Item("array", arr)


def _items(x_ndim: int, key: object) -> list[_Item]:
    """The key's entries, with `...` replaced by the slices it stands for."""
    items = [_classify(k) for k in (key if isinstance(key, tuple) else (key,))]
    ellipses = [i for i, it in enumerate(items) if it.kind == "ellipsis"]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(it.consumed for it in items)
    if consumed > x_ndim:
        raise IndexError(f"too many indices for tensor: tensor is {x_ndim}-dimensional, but "
                         f"{consumed} were indexed")
    fill = [_Item("slice", slice(None))] * (x_ndim - consumed)
    if ellipses:
        at = ellipses[0]
        # an Ellipsis that stands for no dimension still separates index arrays (numpy)
        return items[:at] + (fill or [_Item("gap", None)]) + items[at + 1:]
    return items + fill


# ---------------------------------------------------------------- the selection

def select(x: Tensor, key: object) -> Selection:
    """The Selection of the advanced key `key` on `x`; IndexError naming what is wrong (an
    index out of range with its axis and size, a mask of the wrong shape, a float array, too
    many indices, index arrays that do not broadcast)."""
    builder = _Builder(x)
    for it in _items(x.ndim, key):
        builder.add(it)
    return builder.finish()


class _Builder:
    """Collects a Selection entry by entry. Integer index arrays wait in `pending` (their
    slot in `arrays`, the data, the axis, its size) for one range check of them all."""

    def __init__(self, x: Tensor) -> None:
        self.x = x
        self.basic: list[slice | None] = []
        self.dims: list[int] = []
        self.sizes: list[int] = []
        self.arrays: list[Tensor | int] = []
        self.pending: list[tuple[int, object, int, int]] = []
        self.axis = 0  # the next dimension of x to index
        # where each indexed entry stands among the key's entries, empty Ellipses included:
        # index arrays are adjacent when these are consecutive
        self.positions: list[int] = []
        self.gaps = 0

    def _indexed(self, entry: slice | None, n: int, array: Tensor | int) -> None:
        self.positions.append(len(self.basic) + self.gaps)
        self.dims.append(len(self.basic))
        self.basic.append(entry)
        self.sizes.append(n)
        self.arrays.append(array)

    def add(self, it: _Item) -> None:
        if it.kind == "gap":
            self.gaps += 1
        elif it.kind in ("none", "slice"):
            self.basic.append(it.value)  # type: ignore[arg-type]
            self.axis += it.kind == "slice"
        elif it.kind == "bool":  # a new dimension of size 1, indexed by [0] or by []
            self._indexed(None, 1, asarray(np.zeros(int(it.value), np.int64)))  # type: ignore
        elif it.kind == "int":
            n = self.x.shape[self.axis]
            i = int(it.value)  # type: ignore[call-overload]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {self.axis} with size "
                                 f"{n}")
            self._indexed(slice(None), n, i % n)
            self.axis += 1
        elif it.kind == "array":
            n = self.x.shape[self.axis]
            self.pending.append((len(self.arrays), it.value, self.axis, n))
            self._indexed(slice(None), n, 0)  # the slot is filled in by finish()
            self.axis += 1
        else:  # a mask: the integer arrays of its nonzero(), in range by construction
            for k, found in enumerate(_mask_indices(it.value, self.axis, self.x.shape)):
                self._indexed(slice(None), self.x.shape[self.axis + k], found)
            self.axis += it.consumed

    def finish(self) -> Selection:
        for (slot, value, _, n), lo in zip(self.pending, _checked_minima(self.pending)):
            t = value if isinstance(value, Tensor) else asarray(np.asarray(value, np.int64))
            t = t.astype(dt.i64, copy=False)
            self.arrays[slot] = _wrapped(t, n) if lo < 0 else t
        shape = _broadcast(self.arrays)
        dims, at = self.dims, self.positions
        adjacent = at == list(range(at[0], at[0] + len(at)))
        unique = not self.pending or prod(shape) <= 1
        return Selection(tuple(self.x.shape), tuple(self.basic), tuple(dims), tuple(self.sizes),
                         tuple(self.arrays), shape, adjacent, unique)


def _checked_minima(pending: list[tuple[int, object, int, int]]) -> list[int]:
    """Range-checks integer index arrays (IndexError for a value outside [-n, n)) and gives
    each one's minimum (to skip wrapping arrays without negative values). Host data is
    checked on the host; device tensors' minima and maxima come back in one read."""
    bounds: list[tuple[int, int] | None] = []
    on_device: list[Tensor] = []
    for _, value, _, _ in pending:
        if isinstance(value, Tensor):
            bounds.append(None)
            if value.size:
                on_device.append(value)
        else:
            arr = value  # an ndarray of integers
            size = arr.size  # type: ignore[attr-defined]
            bounds.append((int(arr.min()), int(arr.max())) if size else (0, -1))  # type: ignore
    read = iter(_device_bounds(on_device, [n for _, v, _, n in pending
                                           if isinstance(v, Tensor) and v.size]))
    minima = []
    for (_, value, axis, n), b in zip(pending, bounds):
        if b is None:
            b = next(read) if value.size else (0, -1)  # type: ignore[attr-defined]
        lo, hi = b
        if hi >= n or lo < -n:
            bad = _max_of(value) if hi >= n else lo
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
        minima.append(lo)
    return minima


def _device_bounds(tensors: list[Tensor], sizes: list[int]) -> list[tuple[int, int]]:
    """(min, max) of each device tensor, read back together. Unsigned maxima are capped at
    the axis size first, so that they fit i64 (the real value is read again for an error)."""
    if not tensors:
        return []
    parts = []
    for t, n in zip(tensors, sizes):
        hi = minimum(t.max(), n) if t.dtype.kind == "u" else t.max()
        parts += [t.min().astype(dt.i64).reshape(1), hi.astype(dt.i64).reshape(1)]
    values = concat(parts).numpy().tolist()
    return [(values[2 * k], values[2 * k + 1]) for k in range(len(tensors))]


def _max_of(value: object) -> int:
    """The largest index of an index array (for the message of an error)."""
    if isinstance(value, Tensor):
        return int(value.max().item())
    return int(value.max())  # type: ignore[attr-defined]


def _mask_indices(mask: object, axis: int, x_shape: tuple[int, ...]) -> list[Tensor]:
    """The integer arrays a boolean mask stands for (its nonzero(), on the device)."""
    shape = tuple(mask.shape)  # type: ignore[attr-defined]
    for d, m in enumerate(shape):
        # a mask axis of size 0 selects nothing whatever the indexed axis's size, as numpy
        if m != x_shape[axis + d] and m != 0:
            raise IndexError(f"boolean index did not match indexed tensor along axis {axis + d}; "
                             f"size of axis is {x_shape[axis + d]} but size of corresponding "
                             f"boolean axis is {m}")
    t = mask if isinstance(mask, Tensor) else asarray(np.ascontiguousarray(mask))
    return list(nonzero(t))


def _broadcast(arrays: list[Tensor | int]) -> tuple[int, ...]:
    shapes = [tuple(a.shape) for a in arrays if isinstance(a, Tensor)]
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        listed = " ".join(str(s) for s in shapes)
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {listed}") from None


def _wrapped(a: Tensor, n: int) -> Tensor:
    """Negative indices counted from the end (on the device)."""
    return where(a < 0, a + n, a).astype(dt.i64, copy=False)
