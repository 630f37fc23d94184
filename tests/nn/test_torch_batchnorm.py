"""BatchNorm1d/2d and F.batch_norm against PyTorch (CPU): outputs and gradients over several
training steps, the running statistics and num_batches_tracked after each, eval mode, the
momentum=None cumulative average, affine=False, track_running_stats=False, f32 and f64, a
channels-last input; the state dict's keys and values, and Module.to(dtype) on the
buffers."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from torch_reference import assert_close, compare_forward_backward, load_from_torch, torch_repr

import pykern as pk
from pykern import nn
from pykern.nn import functional as F

torch = pytest.importorskip("torch")
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}
PK_DTYPE = {np.float32: pk.f32, np.float64: pk.f64}


def assert_same_state(mine: nn.Module, theirs: object, dtype: type) -> None:
    ours = mine.state_dict()
    assert list(ours) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        if value.dtype == torch.int64:
            assert ours[key].dtype == pk.i64 and ours[key].item() == value.item(), key
        else:
            assert_close(ours[key].numpy(), value.numpy(), dtype, key)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"affine": False, "eps": 1e-3},
                                    {"track_running_stats": False, "momentum": 0.3}],
                         ids=["default", "cumulative", "no-affine", "no-running-stats"])
def test_batch_norm_2d_train_then_eval_matches_torch(kwargs, dtype):
    theirs = torch.nn.BatchNorm2d(3, **kwargs).to(TORCH_DTYPE[dtype])
    mine = nn.BatchNorm2d(3, **kwargs, dtype=PK_DTYPE[dtype])
    assert torch_repr(mine) == torch_repr(theirs)
    rng = np.random.default_rng(1)
    if theirs.affine:  # weights other than the ones and zeros they start from
        with torch.no_grad():
            theirs.weight.uniform_(0.5, 1.5)
            theirs.bias.uniform_(-0.5, 0.5)
    load_from_torch(mine, theirs)
    for step in range(3):
        x = (rng.standard_normal((4, 3, 5, 6)) * (step + 1) + step).astype(dtype)
        compare_forward_backward(torch, mine, theirs, x, seed=step)
        mine.zero_grad()
        theirs.zero_grad()
        assert_same_state(mine, theirs, dtype)
    mine.eval()
    theirs.eval()
    x = rng.standard_normal((2, 3, 4, 4)).astype(dtype)
    compare_forward_backward(torch, mine, theirs, x, seed=9)
    assert_same_state(mine, theirs, dtype)


@pytest.mark.parametrize("shape", [(8, 5), (4, 5, 7)])
def test_batch_norm_1d_matches_torch(shape):
    theirs = torch.nn.BatchNorm1d(5, momentum=0.2)
    mine = nn.BatchNorm1d(5, momentum=0.2)
    rng = np.random.default_rng(2)
    for step in range(2):
        compare_forward_backward(torch, mine, theirs,
                                 rng.standard_normal(shape).astype(np.float32), seed=step)
    assert_same_state(mine, theirs, np.float32)
    mine.eval()
    theirs.eval()
    compare_forward_backward(torch, mine, theirs, rng.standard_normal(shape).astype(np.float32))


def test_a_channels_last_input_and_the_functional_form():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 3, 5)).astype(np.float32)
    theirs = torch.nn.BatchNorm2d(4)
    mine = nn.BatchNorm2d(4)
    nhwc = pk.asarray(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    compare_forward_backward(torch, mine, theirs, x, mine_x=nhwc)
    assert_same_state(mine, theirs, np.float32)
    # F.batch_norm updates the running statistics it is given in place
    rm, rv = pk.zeros((4,)), pk.ones((4,))
    trm, trv = torch.zeros(4), torch.ones(4)
    y = F.batch_norm(pk.asarray(x), rm, rv, training=True, momentum=0.5)
    ty = torch.nn.functional.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.5)
    assert_close(y.numpy(), ty.numpy(), np.float32)
    assert_close(rm.numpy(), trm.numpy(), np.float32)
    assert_close(rv.numpy(), trv.numpy(), np.float32)
    y = F.batch_norm(pk.asarray(x), rm, rv)  # not training: the running statistics
    ty = torch.nn.functional.batch_norm(torch.tensor(x), trm, trv)
    assert_close(y.numpy(), ty.numpy(), np.float32)


def test_state_dict_buffers_and_to_dtype(tmp_path):
    bn = nn.BatchNorm2d(3)
    theirs = torch.nn.BatchNorm2d(3)
    assert list(bn.state_dict()) == list(theirs.state_dict()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var",
                                                  "num_batches_tracked"]
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    variants = [{"track_running_stats": False}, {"affine": False}]
    if "bias" in inspect.signature(torch.nn.BatchNorm1d).parameters:  # torch >= 2.12
        variants.append({"bias": False})
    for kwargs in variants:
        assert list(nn.BatchNorm1d(3, **kwargs).state_dict()) == \
            list(torch.nn.BatchNorm1d(3, **kwargs).state_dict())
        assert torch_repr(nn.BatchNorm1d(3, **kwargs)) == \
            torch_repr(torch.nn.BatchNorm1d(3, **kwargs))
    bn(pk.random.randn(2, 3, 4, 4))
    pk.save(bn.state_dict(), tmp_path / "bn.safetensors")  # the i64 count too
    again = nn.BatchNorm2d(3)
    again.load_state_dict(pk.load(tmp_path / "bn.safetensors"))
    assert again.num_batches_tracked.item() == 1
    np.testing.assert_array_equal(again.running_var.numpy(), bn.running_var.numpy())
    bn.to(pk.f64)
    assert bn.running_mean.dtype == pk.f64 and bn.running_var.dtype == pk.f64
    assert bn.num_batches_tracked.dtype == pk.i64 and bn.num_batches_tracked.item() == 1
    assert bn(pk.random.randn(2, 3, 4, 4, dtype=pk.f64)).dtype == pk.f64
    bn.reset_running_stats()
    assert bn.num_batches_tracked.item() == 0 and (bn.running_var.numpy() == 1).all()


@pytest.mark.parametrize("call,error,match", [
    (lambda: nn.BatchNorm2d(3)(pk.zeros((2, 3))), ValueError, "expected 4D input"),
    (lambda: nn.BatchNorm1d(3)(pk.zeros((1, 3))), ValueError, "more than 1 value"),
    (lambda: F.batch_norm(pk.zeros((2, 3)), None, None), ValueError, "running_mean"),
    (lambda: F.batch_norm(pk.zeros((2, 3)), pk.zeros((4,)), pk.ones((3,))), ValueError,
     r"running_mean must have shape \(3,\)"),
])
def test_batch_norm_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
