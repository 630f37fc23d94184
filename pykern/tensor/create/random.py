"""`pk.random`: random tensors from a counter-based generator (Philox-4x32-10).

Philox turns a 128-bit counter and a 64-bit key into four 32-bit random words with 32-bit
integer arithmetic only (the 32x32->64 multiplies are done in 16-bit halves, so no int64 is
needed). Element `e` of a call's output always comes from counter `offset + e // per_counter`,
where `offset` is the generator's position and `per_counter` the elements one counter yields
(4 for 32-bit and smaller outputs, 2 for 64-bit ones) — so the values depend only on the seed,
the sequence of calls and the element index, never on the launch shape or the device. Each
call advances the position by the counters it used.

    pk.random.seed(42)
    x = pk.random.rand(1000, 3)          # uniform on [0, 1), f32
    z = pk.random.randn(256, dtype=pk.f16)
    k = pk.random.randint(0, 10, (5,))   # i32 in [0, 10)

Distributions: uniform floats take the top 24 (f32), 11 (f16), 8 (bf16) or 53 (f64) bits of a
word, so every value is a multiple of 2**-24 (2**-11, 2**-8, 2**-53) in [0, 1). Normals use
Box-Muller in f32 (f64 normals are those f32 values widened: Vulkan has no 64-bit log/cos).
Integers in [low, high) take the high word of a 32x32-bit product (64-bit ranges: a 64-bit
remainder); the bias is below span / 2**32 (span / 2**64).
"""

from __future__ import annotations

import functools
import math
import operator
import os
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

import pykern as pk
from pykern.autograd.keyword import accepts_requires_grad
from pykern.jit import compiling
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.ops.public import declare as _declare
from pykern.ops.public import torch_names as _torch_names
from pykern.tensor.core.tensor import Tensor, _shape, empty
from pykern.tensor.elementwise import functions as ew

MASK32 = 0xFFFFFFFF
PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
TWO_PI = 6.283185307179586


@pk.func
def mulhi(a, b):
    """The high 32 bits of the 64-bit product of two u32, from 16-bit halves."""
    a_lo = a & 0xFFFF
    a_hi = a >> 16
    b_lo = b & 0xFFFF
    b_hi = b >> 16
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    cross = (lo_lo >> 16) + (hi_lo & 0xFFFF) + lo_hi
    return a_hi * b_hi + (hi_lo >> 16) + (cross >> 16)


@pk.func
def uniform24(w):
    """A u32 word as an f32 in [0, 1): its top 24 bits times 2**-24."""
    return pk.f32(w >> 8) * 5.9604644775390625e-08


@pk.func
def philox4x32(c0, c1, k0, k1):
    """Philox-4x32-10 of the counter (c0, c1, 0, 0) under the key (k0, k1): four words."""
    c2: pk.u32 = 0
    c3: pk.u32 = 0
    for _ in range(10):
        hi0 = mulhi(pk.u32(PHILOX_M0), c0)
        lo0 = c0 * PHILOX_M0
        hi1 = mulhi(pk.u32(PHILOX_M1), c2)
        lo1 = c2 * PHILOX_M1
        c0 = hi1 ^ c1 ^ k0
        c1 = lo1
        c2 = hi0 ^ c3 ^ k1
        c3 = lo0
        k0 += PHILOX_W0
        k1 += PHILOX_W1
    return c0, c1, c2, c3


@pk.func
def counter_words(j, key_lo, key_hi, base_lo, base_hi):
    """The four words of counter `j` of a call at the 64-bit position (base_lo, base_hi): the
    position base + j in c0 (low word) and c1, through Philox under the key."""
    c0 = base_lo + pk.u32(j)
    c1 = base_hi
    if c0 < base_lo:
        c1 += 1
    return philox4x32(c0, c1, key_lo, key_hi)


@functools.cache
def random_kernel(out_dtype: DType, dist: str, live: bool = False) -> pk.Kernel:
    """The kernel that fills a tensor of `out_dtype` with draws of `dist` (one per dtype and
    distribution, made on first use). With `live`, the key and position are read from the
    u32 array `state` (key low, key high, position low, position high) instead of the scalar
    arguments: inside a `pk.compile` recording, whose replays write each call's there."""
    LIVE = live  # noqa: N806
    WIDE = out_dtype.bits == 64  # noqa: N806  (two words per element)
    PER = 2 if WIDE else 4  # noqa: N806  (elements per counter)
    HALF = out_dtype in (dt.f16, dt.bf16)  # noqa: N806
    VT = dt.f32 if HALF else out_dtype  # noqa: N806  (f16 and bf16 values are made in f32)
    # a 16-bit uniform takes as many bits as its type has significant bits (11 or 8): exact,
    # and below 1 after the store's rounding
    BITS = 8 if out_dtype == dt.bf16 else 11  # noqa: N806
    ULP = 2.0 ** -BITS  # noqa: N806

    @pk.kernel
    def philox(out: pk.Array, n: int, key_lo: pk.u32, key_hi: pk.u32, base_lo: pk.u32,
               base_hi: pk.u32, low: VT, span_lo: pk.u32, span_hi: pk.u32,
               state: pk.u32[:]):
        j = pk.global_id(0)
        if LIVE:
            key_lo = state[0]
            key_hi = state[1]
            base_lo = state[2]
            base_hi = state[3]
        r0, r1, r2, r3 = counter_words(j, key_lo, key_hi, base_lo, base_hi)
        words = pk.local(pk.u32, (4,))
        words[0] = r0
        words[1] = r1
        words[2] = r2
        words[3] = r3
        vals = pk.local(VT, (4,))
        if dist == "uniform":
            if WIDE:
                for k in range(2):
                    hi = pk.f64(words[2 * k] >> 5)
                    lo = pk.f64(words[2 * k + 1] >> 6)
                    vals[k] = (hi * 67108864.0 + lo) * 1.1102230246251565e-16
            else:
                for k in range(4):
                    if HALF:
                        vals[k] = pk.f32(words[k] >> (32 - BITS)) * ULP
                    else:
                        vals[k] = uniform24(words[k])
        elif dist == "normal":
            for k in range(2):
                u1 = pk.f32((words[2 * k] >> 8) + 1) * 5.9604644775390625e-08
                theta = uniform24(words[2 * k + 1]) * TWO_PI - math.pi
                r = pk.sqrt(-2.0 * pk.log(u1))
                if WIDE:
                    vals[k] = r * pk.cos(theta)
                else:
                    vals[2 * k] = r * pk.cos(theta)
                    vals[2 * k + 1] = r * pk.sin(theta)
        else:  # "randint"
            if WIDE:
                span = (pk.u64(span_hi) << 32) | pk.u64(span_lo)
                for k in range(2):
                    w = (pk.u64(words[2 * k]) << 32) | pk.u64(words[2 * k + 1])
                    if span != 0:
                        w = w % span
                    vals[k] = low + VT(w)
            else:
                for k in range(4):
                    v = words[k]
                    if span_lo != 0:
                        v = mulhi(v, span_lo)
                    vals[k] = low + VT(v)
        for k in range(PER):
            e = j * PER + k
            if e < n:
                out[e] = vals[k]

    return philox


class _State:
    """The generator's key (seed) and position (counters used so far)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seed(None)

    def seed(self, value: int | None) -> None:
        if value is None:
            value = int.from_bytes(os.urandom(8), "little")
        value = operator.index(value)
        if not 0 <= value < 2**64:
            raise ValueError(f"seed must be in 0 .. 2**64 - 1, got {value}")
        with self.lock:
            self.key = value
            self.offset = 0

    def take(self, counters: int) -> int:
        with self.lock:
            start = self.offset
            self.offset = (self.offset + counters) % 2**64
            return start


_state = _State()


def seed(s: int | None = None) -> None:
    """Seeds the generator (an int in 0 .. 2**64 - 1; None draws one from the OS) and resets
    its position: the same seed and the same calls give the same tensors."""
    _state.seed(s)


def get_state() -> tuple[int, int]:
    """(seed, position): pass to `set_state` to replay what follows."""
    return _state.key, _state.offset


def set_state(state: tuple[int, int]) -> None:
    """Restores a (seed, position) that `get_state` returned: the draws after it repeat."""
    key, offset = state
    _state.seed(key)
    _state.offset = operator.index(offset) % 2**64


def _shape_args(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], (int,)) and not hasattr(shape[0],
                                                                           "__index__"):
        return _shape(shape[0])
    return _shape(shape)


def _generate(shape: tuple[int, ...], dtype: DType, dist: str, low: object = 0,
              span: int = 0) -> Tensor:
    out = empty(shape, dtype)
    n = out.size
    if n == 0:
        return out
    per = 2 if dtype.bits == 64 else 4
    counters = -(-n // per)
    if compiling.active() is not None:
        _generate_live(out, n, counters, dtype, dist, low, span)
        return out
    start = _state.take(counters)
    key = _state.key
    random_kernel(dtype, dist)[counters](
        out.reshape(-1), n, key & MASK32, key >> 32, start & MASK32, start >> 32, low,
        span & MASK32, (span >> 32) & MASK32, _placeholder())
    return out


def _generate_live(out: Tensor, n: int, counters: int, dtype: DType, dist: str, low: object,
                   span: int) -> None:
    """`_generate` inside a `pk.compile` recording: the key and position go into a small
    tensor the kernel reads, written before each replay with that call's (the generator
    moves on exactly as eager calls move it)."""
    state = empty((4,), dt.u32)
    compiling.note_kept(state.buffer)  # kept by the hook: the recording's own, not state

    def draw() -> None:
        start = _state.take(counters)
        key = _state.key
        words = np.array([key & MASK32, key >> 32, start & MASK32, start >> 32], np.uint32)
        compiling.write_unrecorded(state.buffer, words)

    draw()
    compiling.on_replay(draw)
    random_kernel(dtype, dist, True)[counters](
        out.reshape(-1), n, 0, 0, 0, 0, low, span & MASK32, (span >> 32) & MASK32, state)


def _placeholder() -> Tensor:
    """A u32 array bound where the kernel reads no state (one per device)."""
    device = pk.get_device()
    t = _placeholders.get(device)
    if t is None:
        t = _placeholders[device] = pk.zeros((4,), dt.u32)
    return t


_placeholders: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _float_dtype(dtype: object, what: str) -> DType:
    d = dt.as_dtype(dtype)
    if not d.is_float:
        raise TypeError(f"{what} makes floats (f16, f32, f64), not {d.name}")
    return d


@accepts_requires_grad
def rand(*shape: int | Sequence[int], dtype: object = dt.f32) -> Tensor:
    """Uniform random floats in [0, 1): `pk.random.rand(2, 3)` or `rand((2, 3))`."""
    d = _float_dtype(dtype, "rand")
    return _generate(_shape_args(shape), d, "uniform", 0.0)


@accepts_requires_grad
def randn(*shape: int | Sequence[int], dtype: object = dt.f32) -> Tensor:
    """Standard normal random floats (mean 0, variance 1)."""
    d = _float_dtype(dtype, "randn")
    return _generate(_shape_args(shape), d, "normal", 0.0)


def randint(low: int, high: int | None = None, shape: int | Sequence[int] = (),
            dtype: object = dt.i32) -> Tensor:
    """Uniform random integers in [low, high) (in [0, low) when high is None), as numpy's
    randint."""
    if high is None:
        low, high = 0, low
    low, high = operator.index(low), operator.index(high)
    d = dt.as_dtype(dtype)
    if not d.is_int:
        raise TypeError(f"randint makes integers, not {d.name}")
    if high <= low:
        raise ValueError(f"randint: low ({low}) must be below high ({high})")
    lo_lim, hi_lim = (-(1 << (d.bits - 1)), 1 << (d.bits - 1)) if d.kind == dt.INT else \
        (0, 1 << d.bits)
    if low < lo_lim or high > hi_lim:
        raise ValueError(f"randint: [{low}, {high}) is outside the range of {d.name}")
    span = high - low
    width = 64 if d.bits == 64 else 32
    span = 0 if span == 1 << width else span  # 0 stands for the whole word
    return _generate(_shape(shape), d, "randint", low, span)


@accepts_requires_grad
def uniform(low: float = 0.0, high: float = 1.0, shape: int | Sequence[int] = (),
            dtype: object = dt.f32) -> Tensor:
    """Uniform random floats in [low, high)."""
    u = rand(_shape(shape), dtype=dtype)
    return ew.add(ew.multiply(u, high - low, out=u), low, out=u)


@accepts_requires_grad
def normal(mean: float = 0.0, std: float = 1.0, shape: int | Sequence[int] = (),
           dtype: object = dt.f32) -> Tensor:
    """Normal random floats with the given mean and standard deviation."""
    z = randn(_shape(shape), dtype=dtype)
    return ew.add(ew.multiply(z, std, out=z), mean, out=z)


if TYPE_CHECKING:
    from collections.abc import Callable


def _random(fn: Callable[..., Tensor], torch: str, *aten: str) -> Callable[..., Tensor]:
    """A random op declared (`pk.random.<name>`): nothing to differentiate."""
    return _declare(fn, "random", exports=("random",),
                    aliases=_torch_names(torch, *aten, numpy=f"random.{fn.__name__}"))


rand = _random(rand, "rand", "aten::rand")
randn = _random(randn, "randn", "aten::randn")
randint = _random(randint, "randint", "aten::randint.low")
uniform = _random(uniform, "Tensor.uniform_", "aten::uniform_")
normal = _random(normal, "normal", "aten::normal.float_float")
