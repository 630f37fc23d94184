"""docs/architecture.md's walkthrough "Add an op", followed: an op declared here, in a test
file, gets its forward, its backward and its export as `pk.<name>` from the registry alone —
no table, namespace or autograd module is edited."""

import functools

import numpy as np
import pytest

import pykern as pk
from pykern import ops
from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad
from pykern.ops.public import declare, torch_names
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.elementwise.functions import as_tensor


# 1. the kernel: one invocation per element (the spread pass gives a GPU several)
@functools.lru_cache(maxsize=None)
def _cube_kernel(dtype: pk.DType) -> pk.Kernel:
    @pk.kernel
    def cube_kernel(x: dtype[:], out: dtype[:]):
        i = pk.global_id(0)
        out[i] = x[i] * x[i] * x[i]

    return cube_kernel


# 2. the forward: checks, allocation, launch; nothing of autograd
def cube_test_op(x: object) -> Tensor:
    """x³ elementwise, for float tensors (a new tensor of x's dtype)."""
    t = as_tensor(x, "cube_test_op: x")
    if not t.dtype.is_float:
        raise TypeError(f"cube_test_op takes float tensors, not {t.dtype.name}")
    flat = t.contiguous().reshape(-1)
    out = empty(flat.shape, t.dtype)
    if out.size:
        _cube_kernel(t.dtype)[out.size](flat, out)
    return out.reshape(t.shape)


# 3. the backward: run the forward cut from the graph, record how g flows back
def _cube_backward(forward, x):
    with no_grad():
        out = forward(x)
    return record("cube_test_op", out, (x,), lambda g: (g * 3.0 * x * x,))


@pytest.fixture
def cube():
    """The op declared (as its module would at import) and removed again afterwards."""
    function = declare(cube_test_op, "unary", grad="rule", backward=_cube_backward,
                       aliases=torch_names(None, "aten::pow.Tensor_Scalar"),
                       reference=lambda a: a ** 3)
    yield function
    ops.registry.unregister("cube_test_op")


def test_the_registry_entry_finds_forward_backward_and_names(cube):
    op = ops.get("cube_test_op")
    assert op.function is cube and op.backward is _cube_backward
    assert op.doc == "x³ elementwise, for float tensors (a new tensor of x's dtype)."
    assert op.kind == "unary" and op.grad == "rule"
    assert ops.exported("pk")["cube_test_op"] is cube


def test_the_forward_runs_as_pk_name(cube):
    x = np.array([[-1.5, 0.0], [2.0, 3.25]], np.float32)
    got = pk.cube_test_op(pk.asarray(x))  # exported from the registry, on x's device
    np.testing.assert_allclose(got.numpy(), x.astype(np.float64) ** 3, rtol=1e-6)
    with pytest.raises(TypeError, match="float tensors"):
        pk.cube_test_op(pk.asarray([1, 2]))


def test_the_backward_is_the_declared_one(cube):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4))
    t = pk.asarray(x).requires_grad_()
    (pk.cube_test_op(t) * 2.0).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), 6.0 * x * x, rtol=1e-12)
    # and against central differences of the forward itself
    eps, i = 1e-6, (1, 2)
    up, down = x.copy(), x.copy()
    up[i] += eps
    down[i] -= eps
    fd = (cube_test_op(pk.asarray(up)).numpy().sum() - cube_test_op(pk.asarray(down))
          .numpy().sum()) / (2 * eps) * 2.0
    assert abs(t.grad.numpy()[i] - fd) < 1e-5


def test_unknown_names_still_raise():
    with pytest.raises(AttributeError, match="no attribute 'no_such_op'"):
        pk.no_such_op  # noqa: B018
