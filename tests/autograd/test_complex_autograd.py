"""Autograd of complex tensors, in PyTorch's convention (z.grad = dL/dx + i dL/dy for a real
loss L of z = x + iy): every differentiable function of the namespace called on complex
inputs either differentiates correctly (central differences of numpy on both parts) or
refuses with NotImplementedError / TypeError — never a silently cut graph."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import gradcheck
import namespace_grads as ng
import pykern as pk

RNG = np.random.default_rng(2212)
check = functools.partial(gradcheck.check_complex_grad, rng=RNG)


def _complex(shape, low, high):
    return RNG.uniform(low, high, shape) + 1j * RNG.uniform(-0.5, 0.5, shape)


# defined on complex numbers and differentiable for real inputs, but refused
# (NotImplementedError) for complex ones that require grad: their backward formulas are
# written for real numbers (none left among DIFFERENTIABLE)
REFUSED_FOR_COMPLEX: set[str] = set()


@pytest.mark.filterwarnings("ignore:astype. casting complex values")  # astype(c128, f64)
@pytest.mark.parametrize("name", sorted(ng.DIFFERENTIABLE))
def test_namespace_function_on_complex_inputs(name):
    """A gradient checked against numpy, a NotImplementedError for the functions listed, or,
    for functions not defined on complex numbers (relu, maximum, softmax...), the TypeError
    they raise without grad (or a NotImplementedError)."""
    case = ng.DIFFERENTIABLE[name]
    arrays = [_complex(s, case.low, case.high) for s in case.shapes]
    ts = [pk.asarray(a).requires_grad_() for a in arrays]
    try:
        with pk.no_grad():
            case.call(*ts)
    except TypeError:
        with pytest.raises((TypeError, NotImplementedError)):
            case.call(*ts)
        assert name not in REFUSED_FOR_COMPLEX
        return
    if name in REFUSED_FOR_COMPLEX:
        with pytest.raises(NotImplementedError, match="no backward for complex tensors"):
            case.call(*ts)
        return
    out = case.call(*ts)
    assert out.requires_grad, f"{name} cut the graph of a complex input"
    check(case.call, case.reference, *arrays, atol=1e-5)


def test_where_and_more_ops_on_complex_and_mixed_inputs():
    a = _complex((3, 4), -1.0, 1.0)
    b = RNG.standard_normal(4)
    check(lambda z, x: pk.where(pk.real(z) > 0, z, x * 2.0),
          lambda z, x: np.where(z.real > 0, z, x * 2.0), a, b)
    check(lambda z, x: pk.exp(z * x) / (z + 3.0), lambda z, x: np.exp(z * x) / (z + 3.0), a, b)
    check(lambda z: z ** 3 - 2j * z ** -2, lambda z: z ** 3 - 2j * z ** -2.0, a + 2.0)
    check(lambda z: 2.0 ** z + pk.conj(z) * z, lambda z: 2.0 ** z + np.conj(z) * z, a)


def test_gradient_descent_on_a_complex_parameter():
    """z.grad points up the slope of the real loss in both parts: |z - c|^2 falls to 0."""
    c = pk.asarray(np.array([1 - 2j, 0.5 + 3j]))
    z = pk.zeros(2, pk.c128, requires_grad=True)
    for _ in range(60):
        loss = pk.sum(pk.abs(z - c) ** 2)
        z.grad = None
        loss.backward()
        with pk.no_grad():
            z -= 0.1 * z.grad
    np.testing.assert_allclose(z.numpy(), c.numpy(), atol=1e-4)


def test_real_leaf_through_complex_ops_gets_a_real_gradient():
    """x real, y = |x * w| with w complex: x.grad is real, d|x w|/dx = |w| sign(x)."""
    x = pk.asarray(np.array([2.0, -3.0])).requires_grad_()
    w = pk.asarray(np.array([3 + 4j, 1j]))
    pk.abs(x * w).sum().backward()
    assert x.grad.dtype == pk.f64
    np.testing.assert_allclose(x.grad.numpy(), [5.0, -1.0])


def test_complex_views_parts_and_in_place_writes():
    """z.real and z.imag pass gradients to their part; an in-place write into a complex
    tensor that takes part in the graph is refused, not silently lost."""
    z = pk.asarray(np.array([1 + 1j, 2 - 1j])).requires_grad_()
    (pk.real(z) * 3.0 + pk.imag(z) * 5.0).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [3 + 5j, 3 + 5j])
    y = z * 2.0
    with pytest.raises(NotImplementedError, match="complex"):
        y += 1j
    np.testing.assert_array_equal(y.numpy(), [2 + 2j, 4 - 2j])  # intact


def test_in_place_writes_into_recorded_complex_tensors_are_refused():
    """+=, t[key] = v (basic and advanced keys) and writes through a part view of a recorded
    complex tensor: NotImplementedError, the tensor intact, and the next call works."""
    z = pk.asarray(np.array([[2 + 1j, 0.5j], [1.0, 3 - 1j]])).requires_grad_()
    y = z * 1.0
    writes = [lambda: y.__setitem__(pk.asarray([1, 0]), 1j), lambda: y.__setitem__(0, 5j),
              lambda: pk.view_as_real(y).__setitem__((0, 0, 0), 1.0),
              lambda: pk.real(y).__iadd__(1.0)]
    for write in writes:
        with pytest.raises(NotImplementedError, match="in-place write"):
            write()
    with pytest.raises(NotImplementedError, match="complex"):
        y += 1j
    np.testing.assert_array_equal(y.numpy(), z.detach().numpy())  # intact
    (pk.abs(y[pk.asarray([1, 0])]) * 2).sum().backward()  # and the graph still works
    assert z.grad.shape == (2, 2)


def test_backward_refuses_a_gradient_of_the_other_kind():
    """A complex gradient for a real result (1j would silently give zeros) or a real one for
    a complex result: RuntimeError, as PyTorch's; nothing is accumulated."""
    x = pk.asarray(np.array([1.0, 2.0])).requires_grad_()
    y = x * 3.0
    for bad in (np.array([1j, 1j]), pk.asarray(np.array([1j, 0j])), [1j, 2]):
        with pytest.raises(RuntimeError, match="complex gradient for a real result"):
            y.backward(bad, retain_graph=True)
    z = pk.fft.fft(x)
    for bad in (np.ones(2), pk.ones(2), [1.0, 2.0]):
        with pytest.raises(RuntimeError, match="real gradient for a complex result"):
            z.backward(bad, retain_graph=True)
    assert x.grad is None
    z.backward(np.array([1 + 0j, 0j]))
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_fused_function_of_complex_tensors_differentiates_op_by_op():
    f = pk.fuse(lambda t, u: pk.exp(t) * u + pk.conj(t))
    a = _complex((3, 4), -1.0, 1.0)
    b = RNG.standard_normal(4)
    check(f, lambda t, u: np.exp(t) * u + np.conj(t), a, b)


def test_integer_array_and_mask_indexing_of_complex_tensors():
    """x[idx], x[mask] and mixes with slices: g scatter-added back, repeats accumulating."""
    a = _complex((4, 5), -1.0, 1.0)
    idx = np.array([2, 0, 2, 3])
    mask = RNG.standard_normal((4, 5)) > 0
    check(lambda t: t[pk.asarray(idx)], lambda x: x[idx], a)
    check(lambda t: t[:, pk.asarray(idx)] * 2j, lambda x: x[:, idx] * 2j, a)
    check(lambda t: t[pk.asarray(mask)], lambda x: x[mask], a)
    check(lambda t: pk.exp(t[pk.asarray(idx), 1:3]), lambda x: np.exp(x[idx, 1:3]), a)


@pytest.mark.filterwarnings("ignore:astype. casting complex values")
def test_real_part_by_astype_then_a_complex_op_sends_no_imaginary_gradient():
    """x = z.astype(f64) keeps Re(z); a complex op of x (x * w, fft(x)) sends x a complex
    gradient, of which only the real part is x's: its imaginary part must not reach z."""
    a = _complex((2, 3), -1.0, 1.0)
    w = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    check(lambda z: z.astype(pk.f64) * pk.asarray(w), lambda z: z.real * w, a)
    check(lambda z: pk.fft.fft(pk.astype(z, pk.f64)), lambda z: np.fft.fft(z.real), a)
    check(lambda z: z.astype(pk.f64) + z, lambda z: z.real + z, a)


def test_view_as_real_of_an_empty_tensor_passes_its_gradient():
    """An empty gradient counts as contiguous whatever its strides (here from a complex
    op of the real view); view_as_real's backward still views it as complex."""
    for shape in ((0,), (3, 0)):
        z = pk.zeros(shape, pk.c128, requires_grad=True)
        out = pk.view_as_real(z) + 1j
        out.backward(pk.zeros(out.shape, pk.c128))
        assert z.grad.shape == shape and z.grad.dtype == pk.c128
    check(lambda z: pk.view_as_real(z).astype(pk.c128),
          lambda z: np.stack([z.real, z.imag], -1).astype(complex), _complex((2, 0), -1, 1))


def test_matmul_with_an_empty_batch_dimension_differentiates():
    """A batch of 0 matrices against one matrix: the batch broadcasts to 0, not 1."""
    b = _complex((2, 3), -1, 1)
    check(lambda z, y: z @ y, lambda z, y: z @ y, _complex((0, 4, 2), -1, 1), b)
    check(lambda z: pk.view_as_real(z.T) @ pk.asarray(np.ones((2, 1))),
          lambda z: np.stack([z.T.real, z.T.imag], -1) @ np.ones((2, 1)),
          _complex((2, 0), -1, 1))


@pytest.mark.parametrize("part", ["view_as_real", "real", "imag"])
def test_part_view_used_after_its_complex_base_was_written_under_no_grad(part):
    """A view of another dtype (the parts of a complex tensor) whose base was written in place
    gets a new grad_fn, as every view: its gradient must reach the base's elements it sees
    (element strides of the two count different units), as PyTorch's regenerated view does."""
    a = _complex(4, -1.0, 1.0)
    z = pk.asarray(a).requires_grad_()
    y = z * 2.0
    v = {"view_as_real": pk.view_as_real, "real": pk.real, "imag": pk.imag}[part](y)
    with pk.no_grad():
        y[1] = 7.0  # invisible to autograd, as in PyTorch: y's gradient path stays z * 2
    (v * v).sum().backward()
    seen = 2 * y.detach().numpy()  # d sum(v^2) / dy = 2 v, on the parts v sees
    expected = {"view_as_real": seen, "real": seen.real, "imag": 1j * seen.imag}[part]
    np.testing.assert_allclose(z.grad.numpy(), 2 * expected, atol=1e-12)


def test_complex_view_used_after_its_real_base_was_written_under_no_grad():
    x = pk.asarray(RNG.standard_normal((3, 2))).requires_grad_()
    r = x * 2.0
    c = pk.view_as_complex(r)
    with pk.no_grad():
        r[0, 0] = 5.0
    pk.real(c * (1 - 2j)).sum().backward()  # Re((1 - 2i)(p + iq)) = p + 2q
    np.testing.assert_array_equal(x.grad.numpy(), [[2.0, 4.0]] * 3)


def test_angle_of_a_real_tensor_has_a_zero_gradient():
    """angle of a real tensor is 0 or pi, piecewise constant: a zero gradient, also at 0
    (PyTorch's; atan2's would be 0/0 = nan there), and the result stays in the graph."""
    x = pk.asarray(np.array([0.0, -1.5, 2.0])).requires_grad_()
    y = pk.angle(x)
    assert y.requires_grad
    (y * 3.0 + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])
