"""In-place writes and autograd, as PyTorch handles them: version counters shared by the views
of a buffer and bumped by every write, the saved-tensor check at backward time, leaves that
refuse writes, and writes into non-leaves (whole tensors, regions, views) recorded so that
their gradients are exact. Gradients are compared with the closed forms of the same
computations done out of place in numpy."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

RNG = np.random.default_rng(1111)


def leaf(a):
    return pk.asarray(np.asarray(a, np.float64)).requires_grad_()


# ---------------------------------------------------------------- version counters


def test_every_write_bumps_the_version_shared_by_views_and_aliases():
    t = pk.zeros((2, 3), pk.f64)
    view, alias = t[1], t.detach()
    v0 = t._version
    t += 1.0
    assert t._version == view._version == alias._version == v0 + 1
    view[0] = 5.0
    assert t._version == v0 + 2
    pk.multiply(t, 2.0, out=t)
    assert t._version == v0 + 3
    alias -= 1.0
    assert t._version == v0 + 4
    np.testing.assert_array_equal(t.numpy(), [[1.0, 1.0, 1.0], [9.0, 1.0, 1.0]])
    assert pk.zeros(3)._version <= 1  # a fresh tensor (its fill may count as one write)


def test_an_optimizer_step_bumps_its_parameters_versions():
    p = leaf([1.0, 2.0])
    opt = pk.optim.SGD([p], lr=0.5)
    y = p * p  # multiply saves p for the gradient
    y.sum().backward(retain_graph=True)
    before = p._version
    opt.step()
    assert p._version > before
    np.testing.assert_allclose(p.numpy(), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="gradient of multiply was modified by an in-place"):
        y.sum().backward()


# ---------------------------------------------------------------- saved tensors


def test_writing_a_tensor_an_op_saved_fails_its_backward_naming_the_op():
    x = leaf([0.5, 1.0, 2.0])
    y = pk.exp(x)  # exp saves its result
    y += 1.0
    with pytest.raises(RuntimeError, match="gradient of exp was modified by an in-place "
                                           r"operation.*version 1.*version 0"):
        y.sum().backward()


def test_writing_an_input_an_op_saved_fails_even_through_an_alias_or_under_no_grad():
    x = leaf([0.5, 1.0])
    h = x * 1.0
    y = pk.sin(h)  # sin saves its input
    with pk.no_grad():
        h.detach()[0] = 3.0
    with pytest.raises(RuntimeError, match="gradient of sin"):
        y.sum().backward()


def test_writes_that_no_backward_reads_are_allowed():
    """add saves nothing and `y * 3` saves only the number: writing y afterwards is fine, and
    what was computed from y before the write keeps its own path."""
    a = np.array([0.5, -1.0, 2.0])
    x = leaf(a)
    y = x * 2.0
    z = y * 3.0 + 1.0
    y *= 2.0  # y is 4x now
    (z + y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 6.0 + 4.0))
    assert repr(y.grad_fn) == "<multiply_Backward>"


def test_matmul_saves_what_each_gradient_reads():
    a, b = leaf(RNG.standard_normal((2, 3))), leaf(RNG.standard_normal((3, 2)))
    c = pk.asarray(RNG.standard_normal((3, 2)))
    y = a @ c  # only a requires grad: a's gradient reads c, not a
    with pk.no_grad():
        a *= 2.0
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.ones((2, 2)) @ c.numpy().T)
    y = a @ b
    with pk.no_grad():
        c2 = b.detach()
        c2 += 1.0
    with pytest.raises(RuntimeError, match="gradient of matmul"):
        y.sum().backward()


# ---------------------------------------------------------------- leaves


def test_leaves_that_require_grad_refuse_writes_and_stay_intact():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="add_: a leaf tensor that requires grad is used in "
                                           "an in-place operation.*pk.no_grad"):
        x += 1.0
    with pytest.raises(RuntimeError, match="a leaf tensor that requires grad"):
        x[0] = 5.0
    with pytest.raises(RuntimeError, match="a view of a leaf tensor that requires grad"):
        v = x[1:]
        v *= 2.0
    with pytest.raises(RuntimeError, match="a leaf tensor"):
        pk.exp(x, out=x)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    assert x.is_leaf and x._version == 0
    with pk.no_grad():  # as an optimizer updates its parameters
        x -= 1.0
        x[2] = 0.0
    np.testing.assert_array_equal(x.numpy(), [0.0, 1.0, 0.0])
    assert x.is_leaf and x._version == 2


# ---------------------------------------------------------------- recorded writes


def test_an_in_place_op_on_a_non_leaf_is_recorded():
    x = leaf([1.0, -2.0, 3.0])
    y = x * 2.0
    y += 1.0
    assert not y.is_leaf and repr(y.grad_fn) == "<add_Backward>"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_in_place_ops_chain_like_their_out_of_place_forms():
    a, w0 = RNG.standard_normal(4), RNG.standard_normal(4)
    x, w = leaf(a), leaf(w0)
    y = x * 2.0
    y *= w  # w's gradient reads y as it was, which this very op overwrites: kept, as PyTorch
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * w0)
    np.testing.assert_allclose(w.grad.numpy(), 2.0 * a)
    x.grad = w.grad = None
    y = pk.tanh(x)
    y += 1.0
    with pytest.raises(RuntimeError, match="gradient of tanh"):  # tanh saves its result
        y.sum().backward()
    y = x * 2.0
    y /= w  # divide reads b and out (a fresh result): nothing it reads is overwritten
    y -= x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 / w0 - 1.0)
    np.testing.assert_allclose(w.grad.numpy(), -2.0 * a / w0 ** 2)


def test_out_writes_into_a_tensor_that_then_carries_the_graph():
    a = np.array([0.3, 0.7])
    x = leaf(a)
    out = pk.zeros(2, pk.f64)
    res = pk.exp(x, out=out)
    assert res is out and out.requires_grad and repr(out.grad_fn) == "<exp_Backward>"
    (out * out).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * a))
    np.testing.assert_allclose(out.numpy(), np.exp(a))
    with pytest.raises(TypeError, match="cannot store a f64 result into a i32"):
        pk.exp(x, out=pk.zeros(2, pk.i32))


def test_a_plain_tensor_written_from_one_that_requires_grad_joins_the_graph():
    x = leaf([1.0, 2.0, 3.0])
    z = pk.zeros(3, pk.f64)
    z += x * x
    assert z.requires_grad and not z.is_leaf
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


# ---------------------------------------------------------------- regions and views


def test_setitem_on_a_non_leaf_passes_the_gradient_around_the_region():
    a = RNG.standard_normal((3, 4))
    x = leaf(a)
    y = x * 1.0
    y[:, 1] = 0.0
    (y * y).sum().backward()
    expect = 2 * a
    expect[:, 1] = 0.0
    np.testing.assert_allclose(x.grad.numpy(), expect)


def test_augmented_assignment_into_an_index_is_exact():
    """`y[0] += v` runs getitem, an in-place op on the view, then setitem."""
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal(2)
    x, v = leaf(a), leaf(b)
    y = x * 3.0
    y[0] += v * v
    w = RNG.standard_normal((3, 2))
    (y * pk.asarray(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * w)
    np.testing.assert_allclose(v.grad.numpy(), 2 * b * w[0])
    expect = 3.0 * a
    expect[0] += b * b
    np.testing.assert_allclose(y.numpy(), expect)


def test_an_in_place_op_on_a_strided_view_is_recorded_on_its_base():
    a = RNG.standard_normal((3, 4))
    x = leaf(a)
    y = x * 1.0
    v = y.T[::2]  # a transposed, stepped view: rows 0 and 2 of y.T, columns 0, 2 of y
    v *= 3.0
    assert v.requires_grad and y.requires_grad
    (y * y).sum().backward()
    scale = np.ones((3, 4))
    scale[:, ::2] = 3.0
    np.testing.assert_allclose(x.grad.numpy(), 2 * a * scale ** 2)
    np.testing.assert_allclose(y.numpy(), a * scale)


def test_the_view_written_becomes_a_view_of_the_base_as_it_is():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    x = leaf(a)
    y = x * 1.0
    v = y[1:3]
    v *= 2.0
    (v * 5.0).sum().backward()  # through v: the new values 2 * x[1:3]
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 10.0, 10.0, 0.0])


def test_a_view_taken_before_a_write_is_a_view_of_the_base_as_it_is_when_used_after():
    """As PyTorch regenerates a view's grad_fn: a view used after its base was written reads
    the new values, so its gradient goes to the base as it is now; an op that read it before
    keeps the old path."""
    x = leaf([1.0, 2.0])
    y = x * 1.0
    old = y[0:1]
    before = old * 5.0  # reads y[0] = x[0]
    y *= 2.0
    (old * 1.0 + before).sum().backward()  # old is 2 * x[0] now
    np.testing.assert_allclose(x.grad.numpy(), [2.0 + 5.0, 0.0])


def test_backward_from_a_view_written_through_its_base():
    x = leaf([1.0, 2.0])
    y = x * 1.0
    v = y[1:]
    y *= 3.0
    v.backward(pk.asarray(np.array([1.0])))
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 3.0])


def test_sibling_views_after_a_write_into_one_of_them():
    """`q, k = h[:, :2], h[:, 2:]; q *= 3`: k is untouched and q is written, an overlapping
    view sees the write."""
    a = RNG.standard_normal((2, 4))
    x = leaf(a)
    h = x * 1.0
    q, k, both = h[:, :2], h[:, 2:], h[:, 1:3]
    q *= 3.0
    w = RNG.standard_normal((2, 2))
    (k * k + both * pk.asarray(w)).sum().backward()
    expect = np.zeros((2, 4))
    expect[:, 2:] += 2 * a[:, 2:]
    expect[:, 1] += 3.0 * w[:, 0]  # both[:, 0] is q[:, 1] = 3 x[:, 1]
    expect[:, 2] += w[:, 1]
    np.testing.assert_allclose(x.grad.numpy(), expect)


def test_setitem_of_a_plain_tensor_with_a_value_that_requires_grad():
    a = np.array([0.5, 1.5])
    x = leaf(a)
    z = pk.ones((2, 2), pk.f64)
    z[1] = pk.exp(x)
    z[0, 0] = x[0]  # a 0-d value
    (z * z).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * a) + [2 * a[0], 0.0])


def test_setitem_broadcasts_the_value_and_its_gradient_is_summed_back():
    x = leaf([2.0])
    z = pk.zeros((3, 2), pk.f64)
    z[1:] = x * 1.0  # (1,) broadcast to (2, 2)
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0])


def test_out_overwriting_a_non_leaf_gives_its_old_inputs_zeros():
    """As PyTorch's copy_: the old graph stays connected, with a zero gradient."""
    x = leaf([1.0, 2.0])
    y = x * 3.0
    pk.exp(pk.asarray(np.array([0.0, 1.0])), out=y)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    x.grad = None
    y = x * 3.0
    y[...] = 7.0
    (y * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [7.0, 7.0])
