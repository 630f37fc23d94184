"""pk.bitcast(x, dtype): the bits of a number read as another number type of the same width,
on the device and in the interpreter, against numpy's `view`; constants; the split of a u64
word into two f32 (how the GEMM kernels read pairs); and the located errors for types of
different widths, bool and what is not a dtype."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import pykern as pk

PAIRS = [(pk.i8, pk.u8), (pk.u8, pk.i8), (pk.f16, pk.i16), (pk.u16, pk.f16), (pk.f32, pk.u32),
         (pk.i32, pk.f32), (pk.f32, pk.i32), (pk.f64, pk.u64), (pk.i64, pk.f64),
         (pk.u64, pk.i64)]
MODES = pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])


@functools.lru_cache(maxsize=None)
def reinterpret(src: pk.DType, dst: pk.DType, interpret: bool) -> pk.Kernel:
    @pk.kernel(interpret=interpret)
    def bits_as(x: src[:], out: dst[:], back: src[:]):
        i = pk.global_id(0)
        y = pk.bitcast(x[i], dst)
        out[i] = y
        back[i] = pk.bitcast(y, src)  # and back: the same bits

    return bits_as


def finite_values(dtype: pk.DType, rng: np.random.Generator, n: int) -> np.ndarray:
    """Values of `dtype` whose bits, read as a float of that width, are normal numbers (no NaN
    payloads or subnormals for a device to canonicalise or flush), and some signed zeros."""
    width = {8: None, 16: np.float16, 32: np.float32, 64: np.float64}[dtype.bits]
    if width is None:
        return rng.integers(0, 256, n).astype(np.uint8).view(dtype.numpy)
    floats = (rng.standard_normal(n) * 100).astype(width)
    floats[:2] = (0.0, -0.0)
    return floats.view(dtype.numpy)


@MODES
@pytest.mark.parametrize("src,dst", PAIRS, ids=lambda d: d.name)
def test_bits_read_as_another_type(src, dst, interpret):
    x = finite_values(src, np.random.default_rng(src.bits), 64)
    out = np.zeros(64, dst.numpy)
    back = np.zeros(64, src.numpy)
    reinterpret(src, dst, interpret)[64](x, out, back)
    np.testing.assert_array_equal(out.view(np.uint8), x.view(np.uint8))
    np.testing.assert_array_equal(back.view(np.uint8), x.view(np.uint8))


@MODES
def test_a_u64_word_split_into_two_f32(interpret):
    @pk.kernel(interpret=interpret)
    def split(words: pk.u64[:], out: pk.f32[:]):
        i = pk.global_id(0)
        w = words[i]
        out[2 * i] = pk.bitcast(pk.u32(w & 0xFFFFFFFF), pk.f32)  # the first f32 in memory
        out[2 * i + 1] = pk.bitcast(pk.u32(w >> 32), pk.f32)

    f = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    out = np.zeros(256, np.float32)
    split[128](f.view(np.uint64), out)
    np.testing.assert_array_equal(out, f)


@MODES
def test_constants(interpret):
    @pk.kernel(interpret=interpret)
    def consts(out: pk.u32[:], f: pk.f32[:]):
        out[0] = pk.bitcast(1.0, pk.u32)
        out[1] = pk.bitcast(-1, pk.u32)
        f[0] = pk.bitcast(pk.u32(0x40490FDB), pk.f32)
        f[1] = pk.bitcast(0x3F800000, float)

    out = np.zeros(2, np.uint32)
    f = np.zeros(2, np.float32)
    consts[1](out, f)
    assert out.tolist() == [0x3F800000, 0xFFFFFFFF]
    assert f.tolist() == [np.float32(np.pi), 1.0]


def widths(x: pk.f32[:], out: pk.u64[:]):
    out[0] = pk.bitcast(x[0], pk.u64)


def of_bool(x: pk.f32[:], out: pk.u8[:]):
    out[0] = pk.bitcast(x[0] > 0.0, pk.u8)


def to_bool(x: pk.u8[:], out: pk.u8[:]):
    out[0] = pk.bitcast(x[0], pk.bool_)


def not_a_dtype(x: pk.f32[:], out: pk.u32[:]):
    out[0] = pk.bitcast(x[0], 4)


def arity(x: pk.f32[:], out: pk.u32[:]):
    out[0] = pk.bitcast(x[0])


@pytest.mark.parametrize("fn,args,match", [
    (widths, (np.zeros(1, np.float32), np.zeros(1, np.uint64)),
     r"bitcast\(\) needs types of one width: f32 has 32 bits, u64 64"),
    (of_bool, (np.zeros(1, np.float32), np.zeros(1, np.uint8)),
     r"the x of pk.bitcast\(\) must be a number type"),
    (to_bool, (np.zeros(1, np.uint8), np.zeros(1, np.uint8)),
     r"the dtype of pk.bitcast\(\) must be a number type .*'pk.bool_'"),
    (not_a_dtype, (np.zeros(1, np.float32), np.zeros(1, np.uint32)),
     r"the dtype of pk.bitcast\(\) must be a number type .*'4'"),
    (arity, (np.zeros(1, np.float32), np.zeros(1, np.uint32)),
     r"takes 2 argument"),
], ids=["widths", "of_bool", "to_bool", "not_a_dtype", "arity"])
def test_errors_are_located(fn, args, match):
    with pytest.raises(pk.CompileError, match=match) as info:
        pk.kernel(fn)[1](*args)
    line = fn.__code__.co_firstlineno + 1
    assert f"test_bitcast.py:{line}:" in str(info.value)
    assert "pk.bitcast(" in str(info.value)  # the source line is shown
