"""Memory: what a node saves for its backward is released as soon as that backward has run
(kept with retain_graph=True), the graph keeps no intermediate tensor alive through its edges,
and a training-like loop holds the same device memory from one iteration to the next. Freed
means freed by reference counting: no gc.collect() in these tests, so a reference cycle
through the graph would fail them."""

from __future__ import annotations

import weakref

import numpy as np

import pykern as pk

RNG = np.random.default_rng(2222)


def _chain(x):
    """exp saves its result, sin its input, matmul both operands: three saved intermediates,
    whose buffers are returned as weak references."""
    h = pk.exp(x)
    s = pk.sin(h)
    m = s @ s.T
    refs = [weakref.ref(t.buffer) for t in (h, s)]
    return m.sum(), refs


def test_saved_tensors_are_freed_once_their_backward_has_run():
    x = pk.asarray(RNG.standard_normal((3, 4))).requires_grad_()
    loss, refs = _chain(x)
    assert all(r() is not None for r in refs)  # the graph holds them until backward
    loss.backward()
    assert all(r() is None for r in refs)
    assert loss.grad_fn is not None and loss.grad_fn.backward is None  # released
    assert x.grad is not None


def test_retain_graph_keeps_them_until_the_last_backward():
    x = pk.asarray(RNG.standard_normal((2, 3))).requires_grad_()
    loss, refs = _chain(x)
    loss.backward(retain_graph=True)
    assert all(r() is not None for r in refs)
    first = x.grad.numpy()
    loss.backward()
    assert all(r() is None for r in refs)
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)


def test_autograd_grad_frees_them_too():
    x = pk.asarray(RNG.standard_normal(4)).requires_grad_()
    h = pk.tanh(x)
    ref = weakref.ref(h.buffer)
    loss = (h * h).sum()
    del h
    (g,) = pk.autograd.grad(loss, x)
    assert ref() is None
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(g.numpy(), 2 * t * (1 - t * t))


def test_edges_keep_no_intermediate_alive():
    """A node reached from the loss holds the nodes of its inputs, not the input tensors:
    an intermediate that no backward reads is freed as soon as the user drops it."""
    x = pk.asarray(RNG.standard_normal(5)).requires_grad_()
    h = x * 2.0  # nothing saves h: add and sum read no tensor
    ref = weakref.ref(h)
    loss = (h + 1.0).sum()
    del h
    assert ref() is None
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(5, 2.0))


def _step(w, b, xb, yb, lr):
    """One step of a two-layer regression: matmul, bias, tanh, layer norm, softmax, a slice
    written in place, mean squared error; SGD by hand under no_grad."""
    h = pk.tanh(xb @ w + b)
    h = pk.nn.functional.layer_norm(h, (h.shape[-1],))
    p = pk.softmax(h, axis=-1)
    p = p * 2.0
    p[:, 0] = 0.0  # a recorded write into a non-leaf (one nothing saved)
    loss = ((p - yb) ** 2).mean()
    loss.backward()
    with pk.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad = b.grad = None
    return loss.item()


def test_a_training_loop_does_not_grow_device_memory():
    device = pk.get_device()
    w = pk.asarray((RNG.standard_normal((6, 5)) * 0.3).astype(np.float32)).requires_grad_()
    b = pk.zeros(5, requires_grad=True)
    xb = pk.asarray(RNG.standard_normal((8, 6)).astype(np.float32))
    yb = pk.asarray(RNG.uniform(0, 0.3, (8, 5)).astype(np.float32))
    used, losses = [], []
    for _ in range(12):
        losses.append(_step(w, b, xb, yb, 0.5))
        device.sync()  # buffers freed while launches used them are released after these
        used.append(device.memory_stats().used_bytes)
    assert losses[-1] < losses[0]
    assert used[-1] == used[3], used  # steady after the first steps (cached constants)
