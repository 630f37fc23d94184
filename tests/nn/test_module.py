"""pk.nn.Module and Parameter: registration, PyTorch's parameter names and state_dict keys,
load_state_dict's round trip and errors, train/eval, to(dtype), zero_grad and repr."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern import nn


class Block(nn.Module):
    """A module with its own parameter, a child and a ModuleList."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(pk.ones((3,)))
        self.proj = nn.Linear(3, 3)
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.LayerNorm(3)])

    def forward(self, x):
        x = self.proj(x) * self.scale
        for layer in self.layers:
            x = layer(x)
        return x


@pk.kernel
def doubled(x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = 2.0 * x[i]


def mlp() -> nn.Sequential:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def test_parameter_is_a_leaf_tensor_sharing_memory():
    t = pk.zeros((2, 3))
    p = nn.Parameter(t)
    assert isinstance(p, pk.Tensor) and p.requires_grad and p.is_leaf
    assert p.buffer is t.buffer and p.shape == (2, 3)
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:")


def test_parameter_is_a_kernel_argument_and_an_operand():
    p = nn.Parameter(pk.arange(4, dtype=pk.f32))
    out = pk.zeros((4,))
    doubled[4](p, out)
    np.testing.assert_array_equal(out.numpy(), [0, 2, 4, 6])
    assert (p * 3).numpy().tolist() == [0, 3, 6, 9]


def test_state_dict_keys_follow_pytorch():
    # the keys PyTorch gives the same modules
    assert list(mlp().state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert list(Block().state_dict()) == [
        "scale", "proj.weight", "proj.bias", "layers.0.weight", "layers.0.bias",
        "layers.1.weight", "layers.1.bias"]
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    assert list(mha.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                      "out_proj.bias"]
    assert list(nn.Embedding(5, 2).state_dict()) == ["weight"]
    assert list(nn.Linear(2, 2, bias=False).state_dict()) == ["weight"]


def test_named_parameters_children_and_modules():
    b = Block()
    names = [n for n, _ in b.named_parameters()]
    assert names == list(b.state_dict())
    assert all(p.requires_grad for p in b.parameters())
    assert [n for n, _ in b.named_children()] == ["proj", "layers"]
    assert [n for n, _ in b.named_modules()] == ["", "proj", "layers", "layers.0", "layers.1"]
    assert [n for n, _ in b.named_parameters(recurse=False)] == ["scale"]


def test_shared_parameter_listed_once_in_parameters_twice_in_state_dict():
    a = nn.Linear(3, 3)
    model = nn.Sequential(a, a)
    assert len(list(model.parameters())) == 2
    assert list(model.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_load_state_dict_round_trip():
    src, dst = mlp(), mlp()
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (n, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=n)
    x = pk.random.randn(5, 4)
    np.testing.assert_array_equal(src(x).numpy(), dst(x).numpy())
    # numpy values and a saved file work too
    host = {k: v.numpy() * 0 + 1 for k, v in src.state_dict().items()}
    dst.load_state_dict(host)
    assert (dst[0].weight.numpy() == 1).all()


def test_load_state_dict_round_trip_through_a_file(tmp_path):
    src, dst = Block(), Block()
    pk.save(src.state_dict(), tmp_path / "model.safetensors")
    dst.load_state_dict(pk.load(tmp_path / "model.safetensors"))
    np.testing.assert_array_equal(src.proj.weight.numpy(), dst.proj.weight.numpy())


def test_load_state_dict_errors_copy_nothing():
    model = mlp()
    before = model[0].weight.numpy().copy()
    sd = {k: v.numpy() + 1 for k, v in model.state_dict().items()}
    del sd["2.bias"]
    sd["3.weight"] = np.zeros(2, np.float32)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\) in state_dict: '3.weight'") \
            as info:
        model.load_state_dict(sd)
    assert "Missing key(s) in state_dict: '2.bias'" in str(info.value)
    np.testing.assert_array_equal(model[0].weight.numpy(), before)
    result = model.load_state_dict(sd, strict=False)
    assert result == (["2.bias"], ["3.weight"])
    np.testing.assert_array_equal(model[0].weight.numpy(), before + 1)
    bad = dict(model.state_dict())
    bad["0.weight"] = np.zeros((4, 8), np.float32)
    with pytest.raises(RuntimeError, match=r"size mismatch for '0.weight'.*\(4, 8\).*\(8, 4\)"):
        model.load_state_dict(bad, strict=False)


def test_train_eval_switches_dropout():
    pk.random.seed(1)
    model = nn.Sequential(nn.Dropout(0.5), nn.ReLU())
    x = pk.ones((50, 40))
    assert model.training and model[0].training
    assert (model(x).numpy() == 0).mean() > 0.4
    assert model.eval() is model and not model[0].training
    np.testing.assert_array_equal(model(x).numpy(), x.numpy())
    model.train()
    assert model[0].training


def test_to_dtype_zero_grad_and_registration_errors():
    model = mlp()
    model(pk.random.randn(3, 4)).sum().backward()
    assert model[0].weight.grad is not None
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    first = model[0].weight
    model.to(pk.f64)
    assert model[0].weight is first
    assert all(p.dtype == pk.f64 and p.requires_grad for p in model.parameters())
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert model(pk.random.randn(3, 4, dtype=pk.f64)).dtype == pk.f64
    with pytest.raises(TypeError, match="only float dtypes"):
        model.to(pk.i32)
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign Tensor as parameter 'weight'"):
        lin.weight = pk.zeros((2, 2))
    with pytest.raises(NotImplementedError, match="defines no forward"):
        nn.Module()(1)


def test_zero_grad_without_none_zeroes_in_place_as_pytorch():
    """A reference taken to .grad sees the zeros, and the next backward adds into them."""
    model = mlp()
    x = pk.random.randn(3, 4)
    model(x).sum().backward()
    kept = model[0].weight.grad
    expected = kept.numpy().copy()
    model.zero_grad(set_to_none=False)
    assert model[0].weight.grad is kept
    np.testing.assert_array_equal(kept.numpy(), np.zeros_like(expected))
    model(x).sum().backward()
    np.testing.assert_allclose(kept.numpy(), expected, rtol=1e-6)


def test_repr_nests_like_pytorch():
    assert repr(mlp()) == (
        "Sequential(\n"
        "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Linear(in_features=8, out_features=2, bias=True)\n"
        ")")


def test_sequential_indexing_and_ordered_dict_names():
    from collections import OrderedDict
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.GELU())]))
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"]
    m = mlp()
    assert isinstance(m[-1], nn.Linear) and len(m) == 3 and len(m[:2]) == 2
    with pytest.raises(IndexError, match="out of range"):
        m[3]


def test_a_sliced_sequential_keeps_its_children_names_as_pytorch():
    # PyTorch's Sequential slice is Sequential(OrderedDict(items[slice])): the names stay, so
    # its state_dict keys are the model's; len, iteration and int indexing are by position
    m = mlp()
    tail = m[1:]
    assert isinstance(tail, nn.Sequential) and len(tail) == 2
    assert list(tail.state_dict()) == ["2.weight", "2.bias"]
    assert [name for name, _ in tail.named_children()] == ["1", "2"]
    assert list(tail) == [m[1], m[2]] and tail[0] is m[1] and tail[-1] is m[2]
    assert tail[1] is m[2] and tail[1:][0] is m[2]
    assert list(tail[1:].state_dict()) == ["2.weight", "2.bias"]
    assert list(m[::2].state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert repr(m[1:]).splitlines()[1] == "  (1): ReLU()"
    with pytest.raises(IndexError, match="out of range"):
        tail[2]
    # it runs the same modules: relu then the last linear
    x = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)
    w, b = m[2].weight.numpy(), m[2].bias.numpy()
    np.testing.assert_allclose(tail(pk.asarray(x)).numpy(), np.maximum(x, 0) @ w.T + b,
                               rtol=1e-5, atol=1e-6)
    # named children keep their names too; a ModuleList slice is renumbered, as PyTorch's
    from collections import OrderedDict
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.GELU()),
                                       ("out", nn.Linear(3, 1))]))
    assert list(named[1:].state_dict()) == ["out.weight", "out.bias"]
    assert list(Block().layers[1:].state_dict()) == ["0.weight", "0.bias"]


def test_parameters_are_counted_with_numel_as_in_pytorch():
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3, bias=False))
    assert sum(p.numel() for p in model.parameters()) == 4 * 16 + 16 + 16 * 3
    assert pk.zeros((2, 0, 3)).numel() == 0 and pk.zeros(()).numel() == 1
