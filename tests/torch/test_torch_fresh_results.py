"""The elementwise operators' functional overloads on "pykern" (`pykern.torch.fresh_results`):
the result handed over as pykern computed it where the operands are row-major, PyTorch's route
otherwise; either way the values, dtype, shape and strides of PyTorch's CPU result."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import pykern.torch  # noqa: E402,F401


def _same(fn, *inputs):
    expected = fn(*inputs)
    actual = fn(*[t.to("pykern") if isinstance(t, torch.Tensor) else t for t in inputs])
    assert actual.device.type == "pykern"
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    assert actual.stride() == expected.stride()
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-6, atol=1e-6)


g = torch.Generator().manual_seed(0)
X = torch.randn(4, 6, generator=g)
Y = torch.randn(4, 6, generator=g)
I = torch.randint(-5, 6, (4, 6), generator=g)  # noqa: E741


@pytest.mark.parametrize("case", [
    ("float op float", lambda a, b: a * b - a / (b.abs() + 1), X, Y),
    ("broadcast", lambda a, b: a + b, X, Y[:1]),
    ("python scalars", lambda a: (a * 2 + 1.5) ** 2, X),
    ("comparison", lambda a, b: a < b, X, Y),
    ("int tensors", lambda a, b: a * b - b, I, I.flip(0)),
    ("int and float scalar", lambda a: a * 0.5, I),  # promotes to float32
    ("int through a float op", lambda a: torch.exp(a), I),
    ("bool and int", lambda a: (a > 0) + 3, I),
    ("mixed float dtypes", lambda a, b: a + b.to(torch.bfloat16), X, Y),
    ("16-bit", lambda a, b: torch.hypot(a.half(), b.half()), X, Y),
    ("gelu option", lambda a: torch.nn.functional.gelu(a, approximate="tanh"), X),
    ("0-d cpu tensor", lambda a: a * torch.tensor(3.0), X),
], ids=lambda c: c[0])
def test_row_major_operands(case):
    _, fn, *inputs = case
    _same(fn, *inputs)


@pytest.mark.parametrize("case", [
    ("transposed", lambda a: torch.exp(a.t())),
    ("transposed pair", lambda a, b: a.t() + b.t(), Y),
    ("sliced", lambda a: a[:, ::2] * 3),
    ("channels last", lambda a: torch.sigmoid(
        a.reshape(1, 2, 3, 4).contiguous(memory_format=torch.channels_last))),
    ("alpha", lambda a, b: torch.add(a, b, alpha=2), Y),
    ("positional alpha", lambda a: torch.ops.aten.add.Scalar(a, 1.5, 2)),
    ("complex abs", lambda a: torch.abs(torch.complex(a, a))),
], ids=lambda c: c[0])
def test_other_layouts_take_pytorchs_route(case):
    _, fn, *rest = case
    _same(fn, X, *rest)


def test_a_result_is_never_an_operand():
    x = X.to("pykern")
    for y in (x + 0, x * 1, torch.maximum(x, x)):
        assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        y.add_(1)
        torch.testing.assert_close(x.cpu(), X)


def test_gradients_through_the_functional_overloads():
    a = X.clone().requires_grad_(True)
    b = a.detach().to("pykern").requires_grad_(True)
    (torch.sigmoid(a * 3 - 1) / (a.abs() + 1)).sum().backward()
    (torch.sigmoid(b * 3 - 1) / (b.abs() + 1)).sum().backward()
    torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64],
                         ids=str)
@pytest.mark.parametrize("op", [
    lambda o, a, b, c: torch.lerp(a, b, 0.1, out=o),
    lambda o, a, b, c: torch.lerp(a, b, 0.75, out=o),
    lambda o, a, b, c: torch.addcmul(a, b, c, value=0.3, out=o),
    lambda o, a, b, c: torch.addcmul(a, b, c, out=o),
    lambda o, a, b, c: torch.addcdiv(a, b, c.abs() + 0.5, value=-2.5, out=o),
], ids=["lerp near start", "lerp near end", "addcmul", "addcmul value 1", "addcdiv"])
def test_one_kernel_pointwise_ops_give_the_composed_bits(op, dtype):
    """lerp / addcmul / addcdiv of row-major tensors run one kernel each
    (`pykern.torch.pointwise_kernels`); transposed ones are composed from pykern's ops. Both
    give the same bits, and PyTorch's CPU values."""
    a, b, c = (torch.randn(6, 5, generator=g).to(dtype) for _ in range(3))
    row_major = op(torch.empty(6, 5, dtype=dtype, device="pykern"),
                   *(t.to("pykern") for t in (a, b, c)))
    composed = op(torch.empty(5, 6, dtype=dtype, device="pykern").t(),
                  *(t.t().contiguous().t().to("pykern") for t in (a, b, c)))
    assert torch.equal(row_major.cpu(), composed.cpu())
    tol = {torch.float32: 1e-6, torch.float64: 1e-12}.get(dtype, 1e-2)
    torch.testing.assert_close(row_major.cpu(), op(torch.empty(6, 5, dtype=dtype), a, b, c),
                               rtol=tol, atol=tol)


def test_shapes_that_do_not_broadcast_raise_pytorchs_error():
    a, b = torch.ones(3, device="pykern"), torch.ones(4, device="pykern")
    with pytest.raises(RuntimeError, match="4"):  # (a RuntimeError naming the sizes, as torch)
        a + b
    torch.testing.assert_close((a + a).cpu(), torch.full((3,), 2.0))  # the next op works
