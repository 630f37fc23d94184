"""`pk.c64` / `pk.c128` in kernels: arrays (strided, 2-D, shared, local), scalar parameters,
literals and promotion, casts, the parts, arithmetic with numpy's results, device functions,
control flow around complex values, and the errors for what complex numbers do not have.

Arithmetic (+ - * and the parts) is exact and compared bit for bit where numpy computes the
same operations; division and powers within a few ULP (Vulkan allows 2.5 ULP per division)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.lang import dtypes

BACKENDS = ("device", "interpreter")


def kernel_on(backend: str, fn):
    return pk.kernel(fn, interpret=backend == "interpreter")


def random_complex(n: int, dtype, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)


def arithmetic(x: pk.Array, y: pk.Array, out: pk.Array, w: pk.c64):
    i = pk.global_id(0)
    z = x[i]
    out[i, 0] = z + y[i]
    out[i, 1] = z - y[i] * w
    out[i, 2] = -z * 2 + 1j
    out[i, 3] = pk.conj(z) + complex(z.imag, y[i].real)
    out[i, 4] = z * z
    out[i, 5] = z / y[i]
    out[i, 6] = z ** 2
    out[i, 7] = z ** -3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_arithmetic_matches_numpy(backend, dtype):
    x, y = random_complex(9, dtype, 1), random_complex(9, dtype, 2)
    w = 0.5 - 2j
    out = np.zeros((9, 8), dtype)
    kernel_on(backend, arithmetic)[9](x, y, out, w)
    cw = np.complex64(w).astype(dtype)  # the parameter is a c64, promoted to the arrays' type
    for k, expected in ((0, x + y), (3, np.conj(x) + (x.imag + 1j * y.real))):
        np.testing.assert_array_equal(out[:, k], expected, err_msg=f"column {k}")
    # products: (ac - bd) + (ad + bc)i rounded per operation (numpy's build may fuse them
    # into FMAs: a unit or two in the last place of |z|); division and powers a few more
    eps = np.finfo(dtype).eps
    for k, expected, ulps in ((1, x - y * cw, 2), (2, -x * 2 + 1j, 0), (4, x * x, 2),
                              (5, x / y, 8), (6, x ** 2, 2), (7, x ** -3, 16)):
        error = np.abs(out[:, k] - expected)
        assert np.all(error <= ulps * eps * np.abs(expected)), f"column {k}: {error}"
    np.testing.assert_array_equal(out[:, 6], out[:, 4])  # z ** 2 is z * z, as numpy's


def strided(x: pk.c128[:, :], out: pk.c128[:, :], n: pk.c128[:]):
    i = pk.global_id(0)
    j = pk.global_id(1)
    out[i, j] = x[i, j] * x[j, i] - abs(x[i, j])
    if j == 0:
        n[i] = x[i, i].real + x[i, 0].imag * 1j


def test_strided_2d_arrays_and_views():
    base = random_complex(36, np.complex128, 3).reshape(6, 6)
    x = base[::2, 1::2].T  # 3 x 3, strided both ways, transposed
    out = np.zeros((3, 3), np.complex128)
    n = np.zeros(6, np.complex128)[::2]  # a written strided view: copied back into the base
    pk.kernel(strided)[3, 3](x, out, n)
    np.testing.assert_allclose(out, x * x.T - abs(x), rtol=1e-15)
    np.testing.assert_array_equal(n, np.diag(x).real + 1j * x[:, 0].imag)


def shared_and_local(x: pk.c64[:], out: pk.c64[:]):
    buf = pk.shared(pk.c64, 64)
    acc = pk.local(pk.c64, 2)
    i = pk.global_id(0)
    lane = pk.local_id(0)
    buf[lane] = x[i] if i < pk.grid(0) else 0j
    pk.barrier()
    acc[0] = buf[(lane + 1) % 64]
    acc[1] = acc[0] * 1j
    if i < pk.grid(0):
        out[i] = acc[1] + acc[0].real


@pytest.mark.parametrize("backend", BACKENDS)
def test_shared_and_local_arrays(backend):
    x = random_complex(64, np.complex64, 4)
    out = np.zeros(64, np.complex64)
    pk.kernel(shared_and_local, workgroup=(64,), interpret=backend == "interpreter")[64](x, out)
    rolled = np.roll(x, -1)
    np.testing.assert_array_equal(out, rolled * 1j + rolled.real)


@pk.func
def rotate(z, turns):
    """z times i**turns, and |z|: a complex and a real result."""
    r = z
    for _ in range(turns):
        r = r * 1j
    return r, abs(z)


@pk.func
def mirrored(z):
    return complex(z.imag, z.real)


def uses_functions(x: pk.c64[:], out: pk.c64[:], norms: pk.f32[:]):
    i = pk.global_id(0)
    r, m = rotate(x[i], 3)
    out[i] = mirrored(r) + mirrored(x[i]) * 0.5
    norms[i] = m


@pytest.mark.parametrize("backend", BACKENDS)
def test_device_functions_take_and_return_complex(backend):
    x = random_complex(5, np.complex64, 5)
    out, norms = np.zeros(5, np.complex64), np.zeros(5, np.float32)
    kernel_on(backend, uses_functions)[5](x, out, norms)
    r = x * (1j ** 3)

    def swap(z):
        return z.imag + 1j * z.real
    np.testing.assert_allclose(out, swap(r) + swap(x) * 0.5, rtol=1e-6)
    np.testing.assert_allclose(norms, np.abs(x), rtol=1e-6)


def control_flow(x: pk.c64[:], out: pk.c64[:], steps: pk.i32[:]):
    i = pk.global_id(0)
    z = 0j
    c = x[i]
    n = 0
    # a Mandelbrot iteration: complex values in a while condition, `and`, `if` expressions
    while n < 20 and abs(z * z + c) <= 2.0:
        z = z * z + c
        n += 1
    out[i] = z if z != 0 else c / (abs(c) + 1)
    steps[i] = n if (z == c or abs(z) > 0.5) else -n


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_values_in_conditions(backend):
    x = np.array([0.0, 0.25 + 0.5j, -1.0, 1 + 1j, -0.75 + 0.1j, 0.3j], np.complex64)
    out, steps = np.zeros_like(x), np.zeros(x.size, np.int32)
    kernel_on(backend, control_flow)[x.size](x, out, steps)
    for k, c in enumerate(x):
        z, n = np.complex64(0), 0
        while n < 20 and abs(z * z + c) <= 2.0:
            z, n = z * z + c, n + 1
        expected = z if z != 0 else c / np.float32(abs(c) + 1)
        np.testing.assert_allclose(out[k], expected, rtol=1e-5, atol=1e-7)
        assert steps[k] == (n if (z == c or abs(z) > 0.5) else -n)


def promotion(x: pk.c64[:], d: pk.f64[:], i: pk.i64[:], out64: pk.c64[:],
              out128: pk.c128[:]):
    k = pk.global_id(0)
    out64[k] = x[k] + i[k] + 0.5 + 1j
    out128[k] = x[k] * d[k] + pk.c128(1 + 2j) + complex(d[k])


def test_promotion_as_numpy_with_weak_literals():
    x = random_complex(4, np.complex64, 6)
    d = np.array([1.5, -2.0, 1e-300, 3.0])
    i = np.arange(4, dtype=np.int64)
    out64, out128 = np.zeros(4, np.complex64), np.zeros(4, np.complex128)
    k = pk.kernel(promotion)
    k[4](x, d, i, out64, out128)
    assert "c128" in str(k.ir(x, d, i, out64, out128))  # c64 * f64 is c128
    np.testing.assert_allclose(out64, x + i.astype(np.float32) + 0.5 + 1j, rtol=1e-6)
    np.testing.assert_allclose(out128, x.astype(np.complex128) * d + (1 + 2j) + d,
                               rtol=1e-15)


def casts(x: pk.f32[:], z: pk.c128[:], out: pk.c64[:], flags: pk.bool_[:], parts: pk.f64[:]):
    i = pk.global_id(0)
    out[i] = pk.c64(x[i]) + pk.c64(z[i])
    flags[i] = pk.bool_(z[i])
    parts[i] = pk.real(z[i]) - pk.imag(z[i]) + pk.imag(x[i]) + pk.angle(z[i]) + pk.angle(x[i])


@pytest.mark.parametrize("backend", BACKENDS)
def test_casts_parts_and_truth(backend):
    x = np.array([1.0, -2.0, 0.0], np.float32)
    z = np.array([0j, 1e-40 + 0j, -0.5j])
    out, flags, parts = np.zeros(3, np.complex64), np.zeros(3, bool), np.zeros(3)
    kernel_on(backend, casts)[3](x, z, out, flags, parts)
    np.testing.assert_array_equal(out, x + z.astype(np.complex64))
    np.testing.assert_array_equal(flags, z != 0)
    expected = z.real - z.imag + np.angle(z) + np.angle(x).astype(np.float64)
    np.testing.assert_allclose(parts, expected, rtol=1e-6)


def scalar_param(z: pk.c128, out: pk.c128[:]):
    out[pk.global_id(0)] = z * z


@settings(max_examples=15, deadline=None)
@given(st.complex_numbers(allow_nan=False, allow_infinity=False, max_magnitude=1e150))
def test_scalar_parameters_take_python_and_numpy_complex(z):
    out = np.zeros(2, np.complex128)
    k = pk.kernel(scalar_param)
    k[1](z, out)
    k[1](np.complex64(z) if abs(z) < 1e30 else z, out[1:])
    assert out[0] == np.complex128(z) * np.complex128(z)


def subgroup_sum(x: pk.c64[:], sums: pk.c64[:], swapped: pk.c64[:], size: pk.i32[:]):
    i = pk.global_id(0)
    sums[i] = pk.subgroup_add(x[i])
    swapped[i] = pk.subgroup_shuffle_xor(x[i], 1)
    size[i] = pk.subgroup_size()


@pytest.mark.parametrize("backend", BACKENDS)
def test_subgroup_sums_and_shuffles_each_part(backend):
    n = 32
    x = (np.arange(n) + 1j * np.arange(n, 0, -1)).astype(np.complex64)
    sums, swapped = np.zeros(n, np.complex64), np.zeros(n, np.complex64)
    size = np.zeros(n, np.int32)
    pk.kernel(subgroup_sum, workgroup=(n,), interpret=backend == "interpreter")[n](
        x, sums, swapped, size)
    s = int(size[0])  # the device's subgroup size (8 on lavapipe, 32 on NVIDIA)
    np.testing.assert_array_equal(sums, x.reshape(-1, s).sum(axis=1).repeat(s))
    np.testing.assert_array_equal(swapped, x.reshape(-1, 2)[:, ::-1].reshape(-1))


# ---------------------------------------------------------------- errors

def order(x: pk.c64[:], out: pk.bool_[:]):
    out[0] = x[0] < x[1]


def floor_div(x: pk.c64[:]):
    x[0] = x[0] // x[1]


def bits(x: pk.c64[:]):
    x[0] = x[0] & x[1]


def extremum(x: pk.c64[:]):
    x[0] = max(x[0], x[1])


def to_real(x: pk.c64[:], y: pk.f32[:]):
    y[0] = x[0]


def cast_to_real(x: pk.c64[:], y: pk.f32[:]):
    y[0] = pk.f32(x[0])


def atomic(x: pk.c64[:]):
    pk.atomic_add(x, 0, 1j)


@pytest.mark.parametrize("fn, args, match", [
    (order, (np.zeros(2, np.complex64), np.zeros(1, bool)), r"'<' is not defined on complex"),
    (floor_div, (np.zeros(2, np.complex64),), r"'//' is not defined on complex values \(c64\)"),
    (bits, (np.zeros(2, np.complex64),), r"'&' is not defined on complex"),
    (extremum, (np.zeros(2, np.complex64),), r"'max' is not defined on complex"),
    (to_real, (np.zeros(2, np.complex64), np.zeros(1, np.float32)), r"take \.real"),
    (cast_to_real, (np.zeros(2, np.complex64), np.zeros(1, np.float32)), r"c64 value cannot "
                                                                            r"become f32"),
    (atomic, (np.zeros(2, np.complex64),), r"not supported on complex \(c64\) arrays"),
])
def test_what_complex_numbers_lack_is_a_located_error(fn, args, match):
    with pytest.raises(pk.CompileError, match=match) as info:
        pk.kernel(fn)[1](*args)
    assert "test_complex_kernels.py:" in str(info.value)
    assert all(np.all(a == 0) for a in args)  # nothing ran


def test_launch_errors_name_the_parameter():
    out = np.zeros(1, np.complex128)
    with pytest.raises(pk.LaunchError, match=r"parameter 'out' expects pk.c128\[:\]"):
        pk.kernel(scalar_param)[1](1j, np.zeros(1, np.complex64))
    with pytest.raises(pk.LaunchError, match=r"parameter 'z' \(c128\) expects a number"):
        pk.kernel(scalar_param)[1]("1j", out)
    with pytest.raises(pk.LaunchError, match=r"'w' \(c64\) \(imaginary part\): 1e\+39 is out"):
        pk.kernel(arithmetic)[1](out, out, np.zeros((1, 8), np.complex128), 1e39j)
    assert out[0] == 0


def test_numpy_complex_dtypes_are_pykern_dtypes():
    assert pk.asarray(np.zeros(2, np.complex64)).dtype == pk.c64  # tensors take them too
    assert dtypes.from_numpy(np.complex64) is pk.c64
    assert dtypes.from_numpy(np.complex128) is pk.c128


def out_of_bounds(x: pk.c64[:, :], y: pk.c64[:]):
    i = pk.global_id(0)
    y[i] = x[i, i + 1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_mode_reports_the_complex_index(backend):
    """Every backend names the index, shape and elements of the complex array as written, not
    of the real array of its parts that the kernel runs on."""
    k = pk.kernel(out_of_bounds, debug=True, interpret=backend == "interpreter")
    with pytest.raises(pk.KernelIndexError,
                       match=r"index \(2, 3\) is out of bounds for 'x' with shape \(3, 3\)"):
        k[3](np.zeros((3, 3), np.complex64), np.zeros(3, np.complex64))


def test_the_interpreter_counts_complex_elements_outside_debug_mode():
    k = pk.kernel(out_of_bounds, interpret=True)
    x = np.zeros((2, 3), np.complex64)
    with pytest.raises(pk.KernelIndexError,
                       match=r"index \(2, 3\) of 'x' \(shape \(2, 3\)\) is out of bounds: "
                             r"element 9 is outside its buffer of 6 elements"):
        k[3](x, np.zeros(3, np.complex64))
