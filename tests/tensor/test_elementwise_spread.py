"""The flat elementwise path with several elements per invocation (`strided.SPREAD`): the
generic kernels launched with it on the current device and, through the tensor ops, on a
Vulkan device (where the ops take it), against numpy. Sizes that are not multiples of the
elements per invocation, views whose offset breaks 16-byte alignment, steps, broadcast
operands and the narrow and wide dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.lang import dtypes as dt
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.core import strided
from pykern.tensor.elementwise.unary_ops import copy_f

rng = np.random.default_rng(13)
EVERY = strided.ELEMENTS_PER_INVOCATION
# around multiples of the elements per invocation and of a 256-wide workgroup of them
SIZES = [1, 2, 3, EVERY, EVERY + 1, 7, 1023, 1024, 1025, 4 * 256 * 3 + 3]
DTYPES = [pk.bool_, pk.i8, pk.f16, pk.f32, pk.f64, pk.i64]


def _values(dtype: pk.DType, n: int) -> np.ndarray:
    if dtype == pk.bool_:
        return rng.random(n) < 0.5
    if dtype.is_int:
        return rng.integers(-100, 100, n).astype(dtype.numpy)
    return rng.uniform(-4, 4, n).astype(dtype.numpy)


def _spread(kernel: pk.Kernel, inputs: list[pk.Tensor], out: pk.Tensor, *constants: object
            ) -> None:
    """Launches `kernel` with the SPREAD path over `inputs` (1-D views of out's length)."""
    (job,) = strided.plan(out.shape, [*inputs, out], spread=True)
    assert job.nd == strided.SPREAD and job.grid == strided.cdiv(out.size, EVERY)
    kernel[job.grid](*job.views, *constants, job.nd)


def test_plan_spreads_flat_problems_only():
    t = pk.zeros((8, 16, 3))
    (job,) = strided.plan(t.shape, [t, t], spread=True)
    assert (job.nd, job.n, job.grid) == (strided.SPREAD, t.size, strided.cdiv(t.size, EVERY))
    (job,) = strided.plan((16, 8), [t[:, :, 0].T, t[:, :, 1].T], spread=True)
    assert job.nd == strided.STRIDED  # transposed views do not collapse: no spreading
    (job,) = strided.plan(t.shape, [t, t])
    assert job.nd == strided.FLAT and job.grid == t.size


@pytest.mark.parametrize("n", SIZES)
def test_binary_kernel_spread_sizes(n: int):
    a, b = _values(pk.f32, n), _values(pk.f32, n)
    out = pk.full(n, -1.0)
    op = ew.BINARY["add"].plan(pk.f32)
    _spread(ew.binary_kernel, [pk.asarray(a), pk.asarray(b)], out, op.fn, op.compute)
    np.testing.assert_array_equal(out.numpy(), a + b)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("start", [1, 2, 3])
def test_unary_kernel_spread_unaligned_views(dtype: pk.DType, start: int):
    n = 1029
    x = _values(dtype, n + start)
    out_full = pk.zeros(n + start + 1, dtype)
    out = out_full[start + 1:]  # another misalignment than the input's
    _spread(ew.unary_kernel, [pk.asarray(x)[start:]], out, copy_f, dtype)
    np.testing.assert_array_equal(out.numpy(), x[start:])
    np.testing.assert_array_equal(out_full.numpy()[:start + 1], np.zeros(start + 1, dtype.numpy))


@pytest.mark.parametrize("n", [5, 1031])
def test_ternary_kernel_spread_with_steps_and_broadcast(n: int):
    c = rng.random(2 * n) < 0.5
    x = _values(pk.f32, 3 * n)
    out = pk.empty(n)
    y = ew.constant(7.5, pk.f32).broadcast_to((n,))  # stride 0
    _spread(ew.ternary_kernel, [pk.asarray(c)[::2], pk.asarray(x)[1::3], y], out, ew.where_f,
            dt.bool_, pk.f32)
    np.testing.assert_array_equal(out.numpy(), np.where(c[::2], x[1::3], np.float32(7.5)))


def test_spread_in_place_reads_each_element_before_writing_it():
    a = _values(pk.f32, 4099)
    t = pk.asarray(a)
    op = ew.BINARY["multiply"].plan(pk.f32)
    _spread(ew.binary_kernel, [t, t], t, op.fn, op.compute)
    np.testing.assert_array_equal(t.numpy(), a * a)


# ---- through the tensor ops, on a Vulkan device (which takes the SPREAD path) ----


@pytest.mark.usefixtures("on_vulkan")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("n", [3, 1025, 4099])
def test_ops_on_vulkan(dtype: pk.DType, n: int):
    if dtype == pk.f64 and not pk.get_device().info.features.fp64:
        pytest.skip("no f64 on this device")
    a, b = _values(dtype, n + 1), _values(dtype, n)
    ta, tb = pk.asarray(a)[1:], pk.asarray(b)
    if dtype == pk.bool_:
        np.testing.assert_array_equal((ta ^ tb).numpy(), a[1:] ^ b)
    else:
        np.testing.assert_array_equal((ta + tb).numpy(), a[1:] + b)
        np.testing.assert_array_equal((ta * 2).numpy(), a[1:] * dtype.numpy.type(2))
    np.testing.assert_array_equal(ta.astype(pk.f32).numpy(), a[1:].astype(np.float32))
    np.testing.assert_array_equal(pk.where(tb, ta, tb).numpy(), np.where(b, a[1:], b))


@pytest.mark.usefixtures("on_vulkan")
def test_exp_times_scalar_on_vulkan():
    x = rng.uniform(-4, 4, 10_001).astype(np.float32)
    got = (pk.exp(pk.asarray(x)) * 2.0).numpy()
    want = np.exp(x.astype(np.float64)) * 2.0
    np.testing.assert_allclose(got, want, rtol=4e-6)
