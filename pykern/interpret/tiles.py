"""The values and operations of cooperative-matrix tiles, as generated code calls them.

A tile is a 2-D numpy array of its dtype (`rows x cols`). On the GPU a tile is spread over the
invocations of a subgroup; every one of them executes the same tile operations with the same
operands, so each invocation holding its own whole copy computes the same result. No operation
here changes an array it is given: assigning a tile to another local may share the array.

Elementwise operators need no helper (numpy's `+ - * /` and unary `-` on two arrays of one
dtype round per element in that dtype, and integers wrap); these functions do the rest:

- `tile_addresses` finds the buffer element of every tile element and checks them, as an
  `ArrayLoad` checks its one element (see `pykern.interpret.exprs.ExprCodegen.address`);
- `load` and `store` move a tile between a buffer and an array (the buffer of a parameter is a
  numpy array or a memoryview; a `pk.shared` array is a Python list, see `module`);
- `mma` multiplies and adds (`a @ b + c`), `scale` multiplies by a scalar, `convert` changes
  the dtype with the interpreter's scalar conversion rules.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import numpy as np

from pykern.lang.coop import TILE_ALIGNMENT
from pykern.lang.dtypes import BY_NAME

Tile = np.ndarray
# the launch's `_oob(site, index, invocation[, misaligned])`, which raises KernelIndexError
Reporter = Callable[..., object]


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype that holds elements of pykern dtype `name` (generated code binds one
    module-level constant per dtype it uses)."""
    return BY_NAME[name].numpy


def zeros(rows: int, cols: int, dtype: np.dtype) -> Tile:
    """A tile local before its first assignment (the GPU's is undefined)."""
    return np.zeros((rows, cols), dtype)


def fill(rows: int, cols: int, value: object, dtype: np.dtype) -> Tile:
    """`pk.coop_fill`: every element `value` (a scalar of the tile's dtype)."""
    return np.full((rows, cols), value, dtype)


# ---------------------------------------------------------------- memory


def tile_addresses(offset: int, length: int, strides: tuple[int, ...], shape: tuple[int, ...],
                   index: tuple[int, ...], size: tuple[int, int], transpose: bool,
                   itemsize: int, debug: bool, report: Reporter, site: int,
                   invocation: tuple[int, ...]) -> np.ndarray:
    """The buffer address of every element (i, j) of a `size` = (rows, cols) tile whose first
    element is `array[index]`: element (i, j) is `array[..., r + i, c + j]`, with `transpose`
    `array[..., r + j, c + i]`. Every address must lie inside the buffer (in debug mode every
    index inside its dimension, what the GPU checks then); else `report(site, index of the
    first offending element, invocation)` raises KernelIndexError. In debug mode, the tile's
    rows in memory must also start at multiples of the lesser of TILE_ALIGNMENT bytes and a
    row's size, as Vulkan asks (a GPU reads a misaligned row from elsewhere); else
    `report(site, index, invocation, (first byte, row stride in bytes))` raises."""
    *lead, r, c = index
    first = offset + sum(k * s for k, s in zip(index, strides, strict=True))
    steps, low, high = _address_steps(size, strides[-2], strides[-1], transpose)
    allowed = 0 <= first + low and first + high < length  # the extremes decide for all
    if debug:
        down, across = (size[1], size[0]) if transpose else size  # the block's rows and columns
        allowed = (allowed and all(0 <= k < n for k, n in zip(lead, shape, strict=False))
                   and 0 <= r and r + down <= shape[-2] and 0 <= c and c + across <= shape[-1])
    if not allowed:
        element = _first_outside(offset, length, strides, shape, index, size, transpose, debug)
        report(site, element, invocation)
    if debug:
        down, across = (size[1], size[0]) if transpose else size
        align = min(TILE_ALIGNMENT, across * itemsize)
        if (first * itemsize) % align or (down > 1 and (strides[-2] * itemsize) % align):
            report(site, index, invocation, (first * itemsize, strides[-2] * itemsize))
    return first + steps


@functools.lru_cache(maxsize=256)
def _address_steps(size: tuple[int, int], down_stride: int, across_stride: int,
                   transpose: bool) -> tuple[np.ndarray, int, int]:
    """Each tile element's address minus the first's (read-only), and their least and
    greatest."""
    i = np.arange(size[0], dtype=np.int64)[:, None]
    j = np.arange(size[1], dtype=np.int64)[None, :]
    down, across = (j, i) if transpose else (i, j)
    steps = down * down_stride + across * across_stride
    steps.flags.writeable = False
    return steps, int(steps.min()), int(steps.max())


def _first_outside(offset: int, length: int, strides: tuple[int, ...], shape: tuple[int, ...],
                   index: tuple[int, ...], size: tuple[int, int], transpose: bool,
                   debug: bool) -> tuple[int, ...]:
    """The array index of the first element, in row-major tile order, that `tile_addresses`
    does not allow."""
    *lead, r, c = index
    for i, j in itertools.product(range(size[0]), range(size[1])):
        element = (*lead, r + j, c + i) if transpose else (*lead, r + i, c + j)
        address = offset + sum(k * s for k, s in zip(element, strides, strict=True))
        inside = all(0 <= k < n for k, n in zip(element, shape, strict=True))
        if not 0 <= address < length or (debug and not inside):
            return element
    raise AssertionError("every element of the tile is allowed")


def _as_bits(array_dtype: np.dtype, tile_dtype: np.dtype) -> bool:
    """A float tile on an integer array of its width: bf16 tiles on the 16-bit words that
    `pykern.passes.bf16` makes of bf16 arrays. The words are the tile's bits."""
    return array_dtype.kind in "ui" and np.dtype(tile_dtype).kind not in "ui" \
        and array_dtype.itemsize == np.dtype(tile_dtype).itemsize


def load(buffer: object, addresses: np.ndarray, array_dtype: np.dtype,
         tile_dtype: np.dtype, pack: int = 1, transpose: bool = False) -> Tile:
    """`pk.coop_load`: the elements at `addresses` (checked), as a tile of `tile_dtype`. With
    `pack` > 1 (`dtype=` of a narrower type) each array element holds `pack` tile elements,
    in memory order along the tile's rows (along its columns with `transpose`)."""
    if isinstance(buffer, list):  # pk.shared: Python ints or numpy float scalars
        flat = np.array([buffer[a] for a in addresses.ravel().tolist()], array_dtype)
        words = flat.reshape(addresses.shape)
    else:
        words = np.asarray(buffer)[addresses]  # numpy array or memoryview
    if pack == 1:
        if _as_bits(array_dtype, tile_dtype):
            return np.ascontiguousarray(words.astype(array_dtype)).view(tile_dtype)
        return words.astype(tile_dtype)
    words = np.ascontiguousarray(words.astype(array_dtype))
    if transpose:
        return np.ascontiguousarray(words.T).view(tile_dtype).T.copy()
    return words.view(tile_dtype).copy()


def store(buffer: object, addresses: np.ndarray, tile: Tile, array_dtype: np.dtype) -> None:
    """`pk.coop_store`: every element of `tile`, converted to the array's dtype, to its
    address (checked). Elements that share an address (a zero stride) store in row-major tile
    order, the last one staying."""
    values = tile.view(array_dtype) if _as_bits(array_dtype, tile.dtype) else \
        tile.astype(array_dtype)
    if isinstance(buffer, list):
        # the values generated code holds: Python ints for integers, numpy scalars for floats
        items = list(values.ravel()) if values.dtype.kind == "f" else values.ravel().tolist()
        for address, item in zip(addresses.ravel().tolist(), items, strict=True):
            buffer[address] = item
        return
    np.asarray(buffer)[addresses] = values


# ---------------------------------------------------------------- arithmetic


def mma(a: Tile, b: Tile, c: Tile) -> Tile:
    """`pk.coop_mma`: `a @ b + c` in c's dtype.

    Floats: the products are exact in float64 (for f16, bf16 and f32 operands), summed in
    float64, added to c and rounded once to c's dtype. The GPU accumulates in c's precision in
    an order of its own, so its results agree with these within the bound of accumulating in
    that precision, not bit for bit. Integers: exact products summed in int64 (signed or
    unsigned by the operands' dtype), wrapped to c's dtype in two's complement."""
    wide = np.float64 if c.dtype.kind == "f" else np.int64
    exact = a.astype(wide) @ b.astype(wide) + c.astype(wide)
    return exact.astype(c.dtype)


def scale(tile: Tile, scalar: object) -> Tile:
    """Every element times `scalar` (of the tile's dtype), rounded or wrapped in that dtype."""
    return tile * tile.dtype.type(scalar)


def convert(tile: Tile, dtype: np.dtype) -> Tile:
    """Elementwise conversion with the rules of the interpreter's scalar casts (`helpers`):
    float to int truncates toward zero and saturates at the type's limits, NaN gives 0; int to
    int wraps; to float rounds to nearest."""
    if tile.dtype.kind == "f" and dtype.kind in "iu":
        limits = np.iinfo(dtype)
        wide = np.trunc(tile.astype(np.float64))  # tile integers have at most 32 bits: exact
        clipped = np.clip(np.nan_to_num(wide, nan=0.0), limits.min, limits.max)
        return clipped.astype(dtype)
    return tile.astype(dtype)


NAMESPACE: dict[str, object] = {
    "_tile_dtype": numpy_dtype,
    "_tile_zeros": zeros,
    "_tile_fill": fill,
    "_tile_addresses": tile_addresses,
    "_tile_load": load,
    "_tile_store": store,
    "_tile_mma": mma,
    "_tile_scale": scale,
    "_tile_convert": convert,
}
