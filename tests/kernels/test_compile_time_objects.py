"""dtypes and @pk.func objects as compile-time values: `pk.constexpr` parameters and globals
holding them, and `x.dtype` of arrays and scalars used wherever a dtype goes. Each kernel runs
on the device and in the interpreter and is compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

BACKENDS = [pytest.param(False, id="vulkan"), pytest.param(True, id="interpreter")]


@pk.func
def square(v):
    return v * v


@pk.func
def negate(v):
    return -v


@pk.func
def apply_twice(fn, v):
    return fn(fn(v))


ACCUMULATE = pk.constexpr(pk.f64)
POST = square


@pytest.mark.parametrize("interpret", BACKENDS)
def test_func_as_constexpr_parameter_one_variant_each(interpret):
    @pk.kernel(interpret=interpret)
    def k(x: pk.f32[:], out: pk.f32[:], op: pk.constexpr):
        i = pk.global_id(0)
        out[i] = op(x[i]) + apply_twice(op, 1.5)

    x = np.linspace(-3, 3, 50, dtype=np.float32)
    out = np.empty_like(x)
    k[50](x, out, square)
    np.testing.assert_allclose(out, x * x + 1.5 ** 4, rtol=1e-6)
    k[50](x, out, negate)
    np.testing.assert_allclose(out, -x + 1.5, rtol=1e-6)
    k[50](x, out, op=square)  # the first variant again
    np.testing.assert_allclose(out, x * x + 1.5 ** 4, rtol=1e-6)


@pytest.mark.parametrize("interpret", BACKENDS)
def test_dtype_as_constexpr_parameter_casts_and_declares(interpret):
    @pk.kernel(interpret=interpret, workgroup=(16, 1, 1))
    def k(x: pk.f32[:], out: pk.f32[:], acc_t: pk.constexpr):
        i = pk.global_id(0)
        buf = pk.local(acc_t, 4)
        tile = pk.shared(acc_t, 16)
        for j in range(4):
            buf[j] = acc_t(x[i]) * acc_t(j)
        tile[pk.local_id(0)] = buf[0] + buf[1] + buf[2] + buf[3]
        pk.barrier()
        total: acc_t = 0
        if acc_t == pk.f32 and acc_t.is_float:  # decided at compile time
            total = acc_t(0.75)
        out[i] = pk.f32(tile[pk.local_id(0)] + total)

    x = np.linspace(-2.3, 7.9, 64, dtype=np.float32)
    out = np.empty_like(x)
    k[64](x, out, pk.f32)
    np.testing.assert_allclose(out, x * 6 + 0.75, rtol=1e-6)
    k[64](x, out, pk.i32)  # truncating casts: another variant
    np.testing.assert_array_equal(out, np.trunc(x) * 6)


@pytest.mark.parametrize("interpret", BACKENDS)
def test_globals_holding_a_dtype_and_a_func(interpret):
    @pk.kernel(interpret=interpret)
    def k(x: pk.i32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        wide = ACCUMULATE(x[i]) * ACCUMULATE(3)
        out[i] = pk.f32(POST(wide))

    x = np.arange(-20, 20, dtype=np.int32)
    out = np.empty(40, np.float32)
    if not interpret and not pk.runtime.get_device().features.fp64:
        pytest.skip("the device has no f64")
    k[40](x, out)
    np.testing.assert_array_equal(out, (x * 3.0) ** 2)


@pytest.mark.parametrize("interpret", BACKENDS)
def test_array_and_scalar_dtype_attribute(interpret):
    @pk.kernel(interpret=interpret, workgroup=(8, 1, 1))
    def k(x: pk.Array, out: pk.Array, n: pk.i32):
        i = pk.global_id(0)
        acc: x.dtype = 0
        buf = pk.local(x.dtype, 4)
        tile = pk.shared(out.dtype, 8)
        same = pk.local(x.dtype, buf.shape)  # a declared array's shape is constant
        same[3] = x.dtype(1) if x.dtype != out.dtype else x.dtype(0)
        for j in range(4):
            buf[j] = x[i] + x.dtype(j)
            acc += buf[j]
        scaled = acc * x.dtype(n)
        tile[pk.local_id(0)] = out.dtype(scaled) + out.dtype(scaled.dtype(1))
        out[i] = tile[pk.local_id(0)] + n.dtype(0) + out.dtype(same[3])

    x = np.arange(16, dtype=np.int32)
    out = np.empty(16, np.float32)
    k[16](x, out, 3)
    np.testing.assert_array_equal(out, (4 * x + 6) * 3 + 1 + 1)  # i32 != f32
    xf = np.linspace(0, 1, 16, dtype=np.float32)
    k[16](xf, out, 2)
    np.testing.assert_allclose(out, (4 * xf + 6) * 2 + 1, rtol=1e-6)


def test_two_funcs_of_one_name_never_share_a_disk_cache_entry():
    """Two @pk.func objects with the same qualified name and different bodies are two
    variants on disk too: a second kernel object (an empty memory cache, as in a new process)
    launched with the second function must not load the module compiled for the first."""
    def make_func(scale: float):
        if scale == 2.0:
            @pk.func
            def op(v):
                return v * 2.0
        else:
            @pk.func
            def op(v):
                return v * 3.0
        return op

    def make_kernel():
        @pk.kernel
        def k(x: pk.f32[:], op: pk.constexpr):
            i = pk.global_id(0)
            x[i] = op(x[i])
        return k

    twice, thrice = make_func(2.0), make_func(3.0)
    assert twice.__qualname__ == thrice.__qualname__
    a = np.ones(8, np.float32)
    make_kernel()[8](a, twice)
    np.testing.assert_array_equal(a, 2.0)
    b = np.ones(8, np.float32)
    make_kernel()[8](b, thrice)
    np.testing.assert_array_equal(b, 3.0)


def test_funcs_of_one_source_with_other_captured_values_are_other_variants():
    """Same name and text, another closure value: the key has what the text reads too."""
    def make_func(scale: float):
        @pk.func
        def op(v):
            return v * scale
        return op

    def make_kernel():
        @pk.kernel
        def k(x: pk.f32[:], op: pk.constexpr):
            i = pk.global_id(0)
            x[i] = op(x[i])
        return k

    for scale in (2.0, 5.0):
        a = np.ones(8, np.float32)
        make_kernel()[8](a, make_func(scale))
        np.testing.assert_array_equal(a, scale)


TILE = (2, 4)


@pytest.mark.parametrize("interpret", BACKENDS)
def test_tuples_as_constexprs_and_captured_globals(interpret):
    @pk.kernel(interpret=interpret)
    def k(out: pk.f32[:, :], tile: pk.constexpr):
        i = pk.global_id(0)
        buf = pk.local(pk.f32, tile)  # a constexpr shape declares an array
        r, c = pk.unravel(i, TILE)
        rows, cols = tile
        for a in range(rows):
            for b in range(cols):
                buf[a, b] = pk.f32(a * 10 + b) + tile[0] * 0.5
        out[r, c] = buf[rows - 1, cols - 1] + pk.f32(len(tile) * 1000)

    out = np.zeros(TILE, np.float32)
    k[8](out, (3, 2))
    np.testing.assert_array_equal(out, 21 + 1.5 + 2000)
    k[8](out, (1, 2))  # another value, another variant
    np.testing.assert_array_equal(out, 1 + 0.5 + 2000)


def test_tuple_constexpr_of_another_element_type_is_another_variant():
    @pk.kernel
    def k(out: pk.f32[:], t: pk.constexpr):
        out[0] = t[0] / 2

    out = np.zeros(1, np.float32)
    k[1](out, (3,))
    assert out[0] == 1.5
    k[1](out, (True,))
    assert out[0] == 0.5
    with pytest.raises(pk.LaunchError, match="tuple of numbers"):
        k[1](out, ((1, 2),))
