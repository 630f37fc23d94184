"""Autograd: gradients of compositions of ops against central differences in float64, the
engine's rules (accumulation, broadcasting, retained graphs), grad mode, `pk.autograd.grad`,
`pk.autograd.Function`, and the errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcheck
import pykern as pk

RNG = np.random.default_rng(11)


check_grad = functools.partial(gradcheck.check_grad, rng=RNG)


UNARY_NP = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin,
    "cos": np.cos, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "square": np.square,
    "reciprocal": np.reciprocal, "log1p": np.log1p, "expm1": np.expm1, "abs": np.abs,
    "relu": lambda x: np.maximum(x, 0), "atan": np.arctan, "sinh": np.sinh,
    "silu": lambda x: x / (1 + np.exp(-x)), "negative": np.negative,
}
POSITIVE = {"log", "sqrt", "reciprocal", "log1p"}


@pytest.mark.parametrize("name", sorted(UNARY_NP))
def test_unary_gradients(name):
    x = RNG.uniform(0.3, 2.0, (3, 4)) if name in POSITIVE else RNG.uniform(-2, 2, (3, 4))
    if name in ("abs", "relu"):
        x[np.abs(x) < 0.05] = 0.5  # away from the kink
    check_grad(getattr(pk, name), UNARY_NP[name], x)


BINARY_NP = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
             "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum,
             "atan2": np.arctan2, "hypot": np.hypot, "logaddexp": np.logaddexp,
             "pow": np.power}


@pytest.mark.parametrize("name", sorted(BINARY_NP))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4))])
def test_binary_gradients_with_broadcasting(name, shapes):
    a = RNG.uniform(0.5, 2.0, shapes[0])
    b = RNG.uniform(0.5, 2.0, shapes[1]) + (0.1 if name in ("maximum", "minimum") else 0)
    check_grad(getattr(pk, name), BINARY_NP[name], a, b)


def test_python_scalars_and_operators():
    check_grad(lambda x: (2.0 - x) * 3.0 / (x + 1.0) + x ** 2 - 1.0 / x,
               lambda x: (2.0 - x) * 3.0 / (x + 1.0) + x ** 2 - 1.0 / x,
               RNG.uniform(0.5, 2, (5,)))


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4),
       batch=st.sampled_from([(), (2,), (2, 1)]), vec=st.sampled_from(["", "a", "b", "ab"]))
def test_matmul_gradients(m, k, n, batch, vec):
    a = RNG.standard_normal((k,) if "a" in vec else batch + (m, k))
    b = RNG.standard_normal((k,) if "b" in vec else (2, k, n) if batch == (2, 1) else (k, n))
    check_grad(pk.matmul, np.matmul, a, b)


@pytest.mark.parametrize("shape_a, shape_b", [((5, 3), (4, 3)), ((1, 7), (6, 7)), ((6, 2), (9, 2))])
def test_matmul_gradients_of_transposed_operands(shape_a, shape_b):
    """Operands seen transposed (F.linear's `w.mT`, an `x.mT`), whose gradients the backward
    computes in their layout."""
    a, b = RNG.standard_normal(shape_a), RNG.standard_normal(shape_b)
    check_grad(lambda x, w: pk.matmul(x, w.mT), lambda x, w: x @ w.T, a, b)
    check_grad(lambda x, w: pk.matmul(x.mT, w), lambda x, w: x.T @ w, a.T.copy(), b.T.copy())
    check_grad(lambda x, w: pk.matmul(x.mT, w.mT), lambda x, w: x.T @ w.T, a.T.copy(), b)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ((0, 2), False),
                                            (-1, True)])
def test_sum_and_mean_gradients(axis, keepdims):
    x = RNG.standard_normal((2, 3, 4))
    check_grad(lambda t: pk.sum(t, axis=axis, keepdims=keepdims),
               lambda a: np.sum(a, axis=axis, keepdims=keepdims), x)
    check_grad(lambda t: pk.mean(t, axis=axis, keepdims=keepdims),
               lambda a: np.mean(a, axis=axis, keepdims=keepdims), x)


def test_view_gradients():
    x = RNG.standard_normal((2, 3, 4))
    check_grad(lambda t: t.reshape(4, 6)[1:, ::2] * 1.0, lambda a: a.reshape(4, 6)[1:, ::2], x)
    check_grad(lambda t: t.permute(2, 0, 1).T.mT * 1.0,
               lambda a: a.transpose(2, 0, 1).T.swapaxes(-1, -2), x)
    check_grad(lambda t: t[:, None, 1, :].broadcast_to((2, 5, 4)) * 1.0,
               lambda a: np.broadcast_to(a[:, None, 1, :], (2, 5, 4)), x)
    check_grad(lambda t: t[..., :1].squeeze(-1).unsqueeze(0) * 1.0,
               lambda a: a[..., 0][None], x)
    check_grad(lambda t: t.astype(pk.f32).astype(pk.f64) * 1.0, lambda a: a, x, atol=1e-5)


def test_a_tensor_used_twice_accumulates_and_grads_add_up_across_backwards():
    x = pk.asarray(np.array([1.0, 2.0, 3.0])).requires_grad_()
    (x * x + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 5.0, 7.0])
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 7.0, 9.0])


def test_backward_accumulates_into_the_existing_grad_in_place_as_pytorch():
    # PyTorch adds into an existing .grad in place: a reference taken before sees the sum
    w = pk.asarray(np.array([1.0, -2.0, 0.5])).requires_grad_()
    (w * w).sum().backward()
    g = w.grad
    (w * 3.0).sum().backward()
    assert w.grad is g
    np.testing.assert_array_equal(g.numpy(), 2 * np.array([1.0, -2.0, 0.5]) + 3.0)
    # a user's grad of another dtype (or a broadcast view) cannot take the sum in place
    w.grad = pk.zeros(3, pk.f32)
    (w * 1.0).sum().backward()
    assert w.grad.dtype == pk.f64
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0, 1.0])
    w.grad = pk.asarray(np.array([2.0])).broadcast_to((3,))
    (w * 1.0).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0, 3.0])


def test_optimizers_see_grads_accumulated_in_place():
    # zero_grad(set_to_none=False) leaves views of the optimizer's flat buffer as .grad; two
    # backwards accumulate into them and the step uses the sum (SGD: w - lr * sum)
    start = np.array([1.0, 2.0], np.float32)
    w = pk.asarray(start).requires_grad_()
    v = pk.asarray(np.array([3.0], np.float32)).requires_grad_()
    opt = pk.optim.SGD([w, v], lr=0.5)
    (w * v).sum().backward()
    opt.zero_grad(set_to_none=False)
    zeroed = w.grad
    (w * v).sum().backward()
    (w * w).sum().backward()
    assert w.grad is zeroed
    np.testing.assert_array_equal(zeroed.numpy(), 3.0 + 2 * start)
    opt.step()
    np.testing.assert_allclose(w.numpy(), start - 0.5 * (3.0 + 2 * start), rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), [3.0 - 0.5 * 3.0], rtol=1e-6)
    # set_to_none=True: the next backward makes a new .grad; the old one keeps its values
    opt.zero_grad()
    assert w.grad is None
    (w * 2.0).sum().backward()
    assert w.grad is not zeroed
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(zeroed.numpy(), 3.0 + 2 * start)


def test_second_backward_needs_retain_graph():
    x = pk.asarray(np.array([1.0, 2.0])).requires_grad_()
    y = (pk.exp(x) * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]) * np.array([2.0, 3.0]))
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_grad_mode_detach_and_leaves():
    x = pk.asarray(np.ones(3)).requires_grad_()
    with pk.no_grad():
        y = x * 2.0
        with pk.enable_grad():
            z = x * 3.0
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert z.requires_grad and not z.is_leaf

    @pk.no_grad()
    def doubled(t):
        return t * 2.0

    assert not doubled(x).requires_grad
    d = (x * 2.0).detach()
    assert not d.requires_grad and d.grad_fn is None
    assert x.is_leaf and x.grad is None


def test_autograd_grad_leaves_dot_grad_alone():
    x = pk.asarray(np.array([0.5, -1.0])).requires_grad_()
    y = pk.asarray(np.array([2.0, 3.0])).requires_grad_()
    gx, gy = pk.autograd.grad((x * y).sum(), (x, y))
    np.testing.assert_array_equal(gx.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(gy.numpy(), [0.5, -1.0])
    assert x.grad is None and y.grad is None
    (g,) = pk.autograd.grad(x * 2.0, x, grad_outputs=pk.asarray(np.array([1.0, 10.0])))
    np.testing.assert_array_equal(g.numpy(), [2.0, 20.0])


def test_custom_function_takes_part():
    class Cube(pk.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            return x * x * x * scale

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3.0 * x * x * g, None

    x = pk.asarray(np.array([1.0, 2.0])).requires_grad_()
    y = Cube.apply(x, 2.0)
    assert y.requires_grad and repr(y.grad_fn) == "<CubeBackward>"
    (y.sum() + x.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 13.0])


def test_errors_are_clear_and_leave_tensors_intact():
    x = pk.asarray(np.array([1.0, 2.0])).requires_grad_()
    with pytest.raises(RuntimeError, match="one-element result"):
        (x * 2.0).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        pk.asarray(np.ones(2)).sum().backward()
    with pytest.raises(RuntimeError, match="only float and complex tensors"):
        pk.asarray(np.ones(2, np.int32)).requires_grad_()
    with pytest.raises(RuntimeError, match="in-place"):
        x += 1.0
    with pytest.raises(RuntimeError, match="in-place"):
        x[0] = 5.0
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_every_float_elementwise_op_has_a_backward():
    """A float op declared without a backward would be refused at backward time; none is."""
    from pykern.tensor.elementwise.binary_ops import BINARY
    from pykern.tensor.elementwise.unary_ops import UNARY
    def float_ops(table):
        names = set()
        for name, op in table.items():
            try:
                if op.plan(pk.f64).result.is_float:
                    names.add(name)
            except TypeError:  # integer-only ops
                pass
        return names

    float_unary, float_binary = float_ops(UNARY), float_ops(BINARY)
    assert len(float_unary) > 30 and len(float_binary) > 10
    missing = {n for n in float_unary if UNARY[n].backward is None} | \
        {n for n in float_binary if BINARY[n].backward is None}
    assert not missing, missing


def test_creation_functions_take_requires_grad():
    made = [pk.zeros((2,), requires_grad=True), pk.ones(3, requires_grad=True),
            pk.full((2,), 1.5, requires_grad=True), pk.arange(3.0, requires_grad=True),
            pk.random.randn(2, requires_grad=True),
            pk.asarray(np.ones(2), requires_grad=True), pk.empty((1,), requires_grad=True)]
    assert all(t.requires_grad and t.is_leaf for t in made)
    assert not pk.zeros(2).requires_grad
    with pytest.raises(RuntimeError, match="only float and complex tensors"):
        pk.zeros(2, pk.i32, requires_grad=True)


def test_pow_gradient_at_a_zero_base_or_exponent_is_zero_not_nan():
    # as PyTorch: d a**b/da is 0 where b == 0, d a**b/db is 0 where a == 0 and b >= 0 (the
    # formulas b·a^(b-1) and out·log a gave NaN there: 0·0^-1, 0·-inf)
    a = pk.asarray(np.array([0.0, 0.0, 2.0, 0.0])).requires_grad_()
    b = pk.asarray(np.array([0.0, 2.0, 0.0, -1.0])).requires_grad_()
    (a ** b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.0, 0.0, -np.inf])
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 0.0, np.log(2.0), -np.inf])
    x = pk.asarray(np.array([0.0, 1.5])).requires_grad_()
    (x ** 0 + x ** 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    x.grad = None
    (0.0 ** x).sum().backward()  # raised ValueError (math.log(0))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_custom_function_returning_its_argument_leaves_the_argument_alone():
    # forward returning its input as it is made that very tensor the result: the leaf x got
    # the op's grad_fn, so (y + x) sent both terms through the backward (x.grad 6, not 4) and
    # x stopped being a leaf
    class Triple(pk.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return 3.0 * g

    x = pk.asarray(np.array([1.0, 2.0])).requires_grad_()
    y = Triple.apply(x)
    assert y is not x and x.is_leaf and x.grad_fn is None
    (y + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])
    x.grad = None
    (x * 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_gradient_is_zero_off_the_positive_side_even_for_infinite_g(dtype):
    # PyTorch's threshold_backward: g where x > 0, else 0 (a product g * (x > 0) would give
    # nan for an infinite g at x <= 0, and for x nan)
    x = np.array([-2.0, -0.0, 0.0, 1e-3, 3.0, np.nan, -np.inf, np.inf], dtype)
    g = np.array([np.inf, -np.inf, np.nan, 2.0, -1.5, 4.0, np.inf, 0.5], dtype)
    px = pk.asarray(x).requires_grad_()
    pk.relu(px).backward(pk.asarray(g))
    want = np.where(x > 0, g, 0).astype(dtype)
    assert px.grad.dtype == px.dtype
    np.testing.assert_array_equal(px.grad.numpy(), want)
