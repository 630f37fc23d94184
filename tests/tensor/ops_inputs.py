"""Inputs for the linalg/nn/indexing/sort/scan op tests: sample data per dtype and tensors of a
given layout (contiguous, transposed, strided with steps and negative strides, broadcast with
stride 0), built directly as `pk.Tensor` views of a larger buffer, with the numpy array each
one holds."""

import numpy as np
from hypothesis import strategies as st

import pykern as pk

ALL = [pk.bool_, pk.i8, pk.i16, pk.i32, pk.i64, pk.u8, pk.u16, pk.u32, pk.u64, pk.f16, pk.f32,
       pk.f64]
FLOATS = [pk.f16, pk.f32, pk.f64]
INTS = [pk.i8, pk.i16, pk.i32, pk.i64, pk.u8, pk.u16, pk.u32, pk.u64]
LAYOUTS = ["contiguous", "transposed", "strided", "broadcast"]
EPS = {pk.f16: 2.0**-10, pk.bf16: 2.0**-7, pk.f32: 2.0**-23, pk.f64: 2.0**-52}


def sample(rng: np.random.Generator, dtype: pk.DType, shape: tuple[int, ...],
           low: float = -4, high: float = 4) -> np.ndarray:
    """Random values of `dtype`: floats uniform in [low, high), small integers, half-true
    bools."""
    if dtype == pk.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.is_float:
        return rng.uniform(low, high, shape).astype(dtype.numpy)
    lo = int(low) if dtype.kind == "i" else 0
    return rng.integers(lo, int(high) + 1, shape).astype(dtype.numpy)


def as_layout(a: np.ndarray, layout: str, rng: np.random.Generator) -> pk.Tensor:
    """A pk.Tensor holding the values of `a` with the given memory layout."""
    shape = a.shape
    if layout == "transposed" and a.ndim >= 2:
        base = pk.asarray(np.ascontiguousarray(a.transpose(tuple(range(a.ndim))[::-1])))
        strides = base.element_strides[::-1]
        return pk.Tensor(base.buffer, shape, base.dtype, strides, 0)
    if layout == "strided" and a.ndim >= 1:
        steps = [int(rng.choice([1, 2, -1, -2])) for _ in shape]
        big = tuple(s * abs(k) + 1 for s, k in zip(shape, steps))
        host = np.zeros(big, a.dtype)
        starts = [1 if k > 0 else b - 1 for k, b in zip(steps, big)]
        key = tuple(slice(st_, st_ + s * k, k) if (st_ + s * k) >= 0 else slice(st_, None, k)
                    for st_, s, k in zip(starts, shape, steps))
        host[key] = a
        base = pk.asarray(host)
        bst = base.element_strides
        offset = sum(st_ * b for st_, b in zip(starts, bst))
        return pk.Tensor(base.buffer, shape, base.dtype, tuple(k * b for k, b in zip(steps, bst)),
                         offset)
    return pk.asarray(a)


def broadcast_pair(rng: np.random.Generator, dtype: pk.DType, shape: tuple[int, ...],
                   low: float = -4, high: float = 4) -> tuple[np.ndarray, pk.Tensor]:
    """A tensor of `shape` with stride 0 along some dimensions, and its numpy values."""
    src_shape = tuple(1 if rng.random() < 0.5 else s for s in shape)
    src = sample(rng, dtype, src_shape, low, high)
    base = pk.asarray(src)
    strides = tuple(0 if ss == 1 and s != 1 else st for s, ss, st in
                    zip(shape, src_shape, base.element_strides))
    t = pk.Tensor(base.buffer, tuple(shape), base.dtype, strides, 0)
    return np.ascontiguousarray(np.broadcast_to(src, shape)), t


def make(rng: np.random.Generator, dtype: pk.DType, shape: tuple[int, ...], layout: str,
         low: float = -4, high: float = 4) -> tuple[np.ndarray, pk.Tensor]:
    """(numpy values, tensor with `layout`) for `shape` and `dtype`."""
    shape = tuple(shape)
    if layout == "broadcast" and len(shape) >= 1 and all(shape):
        return broadcast_pair(rng, dtype, shape, low, high)
    a = sample(rng, dtype, shape, low, high)
    return a, as_layout(a, layout, rng)


layouts = st.sampled_from(LAYOUTS)
seeds = st.integers(0, 2**32 - 1)
