"""The flat elementwise path, which a GPU runs with several elements per invocation through the
spread pass (`pykern.passes.spread`, the one mechanism for the op library's kernels, users'
and `@pk.fuse`'s): the pass applies to the generic kernels' and a fused kernel's flat form,
and they give numpy's results on the current device and, through the tensor ops, on a Vulkan
device (which spreads them). Sizes that are not multiples of the elements per invocation,
views whose offset breaks 16-byte alignment, steps, broadcast operands and the narrow and wide
dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.lang import dtypes as dt
from pykern.passes import lower_bf16, lower_complex
from pykern.passes.spread import ITEMS_PER_INVOCATION, spread, spreadable
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.core import strided
from pykern.tensor.elementwise.unary_ops import copy_f

rng = np.random.default_rng(13)
EVERY = ITEMS_PER_INVOCATION
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
    """Launches `kernel` with the flat path over `inputs` (1-D views of out's length)."""
    (job,) = strided.plan(out.shape, [*inputs, out])
    assert job.nd == strided.FLAT and job.grid == out.size
    kernel[job.grid](*job.views, *constants, job.nd)


def test_plan_collapses_flat_problems_only():
    t = pk.zeros((8, 16, 3))
    (job,) = strided.plan(t.shape, [t, t])
    assert (job.nd, job.n, job.grid) == (strided.FLAT, t.size, t.size)
    (job,) = strided.plan((16, 8), [t[:, :, 0].T, t[:, :, 1].T])
    assert job.nd == strided.STRIDED  # transposed views do not collapse


def _lowered(kernel: pk.Kernel, *args: object):
    """The IR the backend gets of `kernel`'s variant for `args`, before spreading."""
    return lower_bf16(lower_complex(kernel.ir(*args)))


@pytest.mark.parametrize("dtype", [pk.f32, pk.f16, pk.bf16, pk.i64], ids=lambda d: d.name)
def test_the_pass_spreads_the_generic_kernels_flat_form(dtype: pk.DType):
    x, out, b = pk.zeros(8, dtype), pk.zeros(8, dtype), pk.zeros(8, pk.bool_)
    add = ew.BINARY["add"].plan(dtype)
    for kernel_ir in (_lowered(ew.unary_kernel, x, out, copy_f, dtype, strided.FLAT),
                      _lowered(ew.binary_kernel, x, x, out, add.fn, add.compute, strided.FLAT),
                      _lowered(ew.ternary_kernel, b, x, x, out, ew.where_f, dt.bool_, dtype,
                               strided.FLAT)):
        assert spreadable(kernel_ir), kernel_ir.name
        assert spread(kernel_ir, EVERY).items == EVERY


@pk.fuse
def _fused(a, b):
    return pk.exp(a) * b + 1.0


def test_the_pass_spreads_a_fused_kernel():
    a, b = pk.asarray(_values(pk.f32, 64)), pk.asarray(_values(pk.f32, 64))
    np.testing.assert_allclose(_fused(a, b).numpy(),
                               np.exp(a.numpy().astype(np.float64)) * b.numpy() + 1.0,
                               rtol=2e-6)
    (kernel,) = _fused._kernels.values()
    out = pk.empty(64)
    assert spreadable(_lowered(kernel, a, b, out, 1.0))  # (the constant 1.0 is an argument)


@pytest.mark.usefixtures("on_vulkan")
def test_a_vulkan_device_runs_the_ops_spread():
    x = pk.zeros(8)
    op = ew.BINARY["add"].plan(pk.f32)
    module = ew.binary_kernel.compile(x, x, x, op.fn, op.compute, strided.FLAT).module
    assert module.items == EVERY


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
