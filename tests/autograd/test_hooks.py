"""Post-accumulate-grad hooks and end-of-backward callbacks (pykern/autograd/hooks.py): when
they run, what `.grad` holds then, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


def _leaf(values: np.ndarray) -> pk.Tensor:
    return pk.asarray(values.astype(np.float32)).requires_grad_()


def test_hook_sees_the_whole_gradient_of_a_leaf_used_twice():
    """A weight used by two ops (tied weights): the hook runs once, after both gradients
    were added, with the leaf itself."""
    rng = np.random.default_rng(0)
    w_np, x_np = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    w = _leaf(w_np)
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append((t, t.grad.numpy().copy())))
    x = pk.asarray(x_np.astype(np.float32))
    loss = pk.sum(pk.matmul(pk.matmul(x, w), w))
    loss.backward()
    assert len(seen) == 1 and seen[0][0] is w
    # d/dW sum(x W W) = x^T 1 W^T + (x W)^T 1
    ones = np.ones((2, 3))
    expected = x_np.T @ ones @ w_np.T + (x_np @ w_np).T @ ones
    np.testing.assert_allclose(seen[0][1], expected, rtol=1e-5, atol=1e-5)


def test_hooks_of_later_layers_run_before_earlier_gradients_exist():
    """The hook of the last layer's weight runs while the first layer's gradient is still
    to be computed: what data-parallel training overlaps communication with."""
    pk.random.seed(0)
    model = pk.nn.Sequential(pk.nn.Linear(4, 8), pk.nn.ReLU(), pk.nn.Linear(8, 2))
    first, last = model[0].weight, model[2].weight
    when_last_ran = []
    last.register_post_accumulate_grad_hook(lambda t: when_last_ran.append(first.grad))
    loss = pk.sum(model(pk.ones((5, 4))))
    loss.backward()
    assert when_last_ran == [None]
    assert first.grad is not None


def test_hook_runs_in_every_backward_and_grad_accumulates():
    w = _leaf(np.array([1.0, 2.0]))
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    for _ in range(2):
        pk.sum(w * 3.0).backward()
    np.testing.assert_array_equal(seen[0], [3.0, 3.0])
    np.testing.assert_array_equal(seen[1], [6.0, 6.0])


def test_remove_unregisters_and_several_hooks_run_in_order():
    w = _leaf(np.array([1.0]))
    order = []
    first = w.register_post_accumulate_grad_hook(lambda t: order.append("a"))
    w.register_post_accumulate_grad_hook(lambda t: order.append("b"))
    pk.sum(w * 2.0).backward()
    first.remove()
    first.remove()  # a second remove does nothing
    pk.sum(w * 2.0).backward()
    assert order == ["a", "b", "b"]


def test_a_leaf_root_runs_its_hook():
    w = _leaf(np.array([1.0, 2.0]))
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    w.backward(np.array([0.5, 0.25], np.float32))
    np.testing.assert_array_equal(seen, [[0.5, 0.25]])


def test_autograd_grad_runs_no_hook():
    w = _leaf(np.array([1.0, 2.0]))
    seen = []
    w.register_post_accumulate_grad_hook(seen.append)
    (g,) = pk.autograd.grad(pk.sum(w * w), w)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    assert seen == [] and w.grad is None


def test_a_leaf_the_pass_does_not_reach_runs_no_hook():
    used, unused = _leaf(np.array([1.0])), _leaf(np.array([1.0]))
    seen = []
    unused.register_post_accumulate_grad_hook(seen.append)
    pk.sum(used * 2.0).backward()
    assert seen == []


def test_queue_callback_runs_after_every_hook():
    a, b = _leaf(np.array([1.0])), _leaf(np.array([2.0]))
    events = []

    def hook(t):
        events.append("hook")
        if len(events) == 1:
            pk.autograd.queue_callback(lambda: events.append(("end", a.grad is not None
                                                              and b.grad is not None)))

    a.register_post_accumulate_grad_hook(hook)
    b.register_post_accumulate_grad_hook(hook)
    pk.sum(a * b).backward()
    assert events == ["hook", "hook", ("end", True)]


def test_errors():
    with pytest.raises(RuntimeError, match="no backward"):
        pk.autograd.queue_callback(lambda: None)
    with pytest.raises(RuntimeError, match="does not require grad"):
        pk.ones(2).register_post_accumulate_grad_hook(lambda t: None)
    made = _leaf(np.array([1.0])) * 2.0
    with pytest.raises(RuntimeError, match="leaf"):
        made.register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(TypeError, match="callable"):
        _leaf(np.array([1.0])).register_post_accumulate_grad_hook(3)


def test_an_exception_in_a_hook_ends_backward_and_the_next_works():
    w = _leaf(np.array([1.0]))

    def broken(t):
        raise ValueError("from the hook")

    handle = w.register_post_accumulate_grad_hook(broken)
    with pytest.raises(ValueError, match="from the hook"):
        pk.sum(w * 2.0).backward()
    handle.remove()
    w.grad = None
    pk.sum(w * 2.0).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0])
