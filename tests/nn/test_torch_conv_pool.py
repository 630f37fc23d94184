"""Conv1d, Conv2d, ConvTranspose1d/2d and the 2-D poolings against PyTorch (CPU): the same
weights (loaded from torch's state dict through numpy), forward and the gradients of the input
and of the parameters, for several geometries, strided inputs, f32 and f64; the default
initialisations' bounds; pooling's indices, NaN and -inf rules; errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_reference import assert_close, compare_forward_backward, load_from_torch

import pykern as pk
from pykern import nn
from pykern.nn import functional as F

torch = pytest.importorskip("torch")
DTYPES = [np.float32, np.float64]
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}
PK_DTYPE = {np.float32: pk.f32, np.float64: pk.f64}

CONV2D = [  # (in, out, kernel, keyword arguments), input (N, H, W)
    (3, 8, 3, {}, (2, 9, 10)),
    (4, 6, (3, 2), {"stride": 2, "padding": (1, 2), "dilation": (2, 1), "bias": False},
     (2, 11, 9)),
    (6, 6, 3, {"groups": 3, "padding": "same"}, (1, 7, 8)),
    (2, 4, 2, {"padding": "same", "dilation": 2}, (3, 6, 6)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CONV2D)))
def test_conv2d_matches_torch(case, dtype):
    cin, cout, k, kwargs, (n, h, w) = CONV2D[case]
    theirs = torch.nn.Conv2d(cin, cout, k, **kwargs).to(TORCH_DTYPE[dtype])
    mine = nn.Conv2d(cin, cout, k, **kwargs, dtype=PK_DTYPE[dtype])
    assert list(mine.state_dict()) == list(theirs.state_dict())
    load_from_torch(mine, theirs)
    x = np.random.default_rng(case).standard_normal((n, cin, h, w)).astype(dtype)
    compare_forward_backward(torch, mine, theirs, x, seed=case)
    # a channels-last input: the same values, another layout
    nhwc = pk.asarray(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    compare_forward_backward(torch, mine, theirs, x, seed=case, mine_x=nhwc)
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv1d_and_unbatched_inputs_match_torch(dtype):
    rng = np.random.default_rng(5)
    for kwargs in ({}, {"stride": 2, "padding": 1, "dilation": 2, "groups": 2},
                   {"padding": "same"}):
        theirs = torch.nn.Conv1d(4, 6, 3, **kwargs).to(TORCH_DTYPE[dtype])
        mine = nn.Conv1d(4, 6, 3, **kwargs, dtype=PK_DTYPE[dtype])
        load_from_torch(mine, theirs)
        compare_forward_backward(torch, mine, theirs, rng.standard_normal((2, 4, 13)).astype(dtype))
        compare_forward_backward(torch, mine, theirs, rng.standard_normal((4, 9)).astype(dtype))
        assert repr(mine) == repr(theirs)
    conv = torch.nn.Conv2d(2, 3, 3).to(TORCH_DTYPE[dtype])
    mine2 = nn.Conv2d(2, 3, 3, dtype=PK_DTYPE[dtype])
    load_from_torch(mine2, conv)
    compare_forward_backward(torch, mine2, conv, rng.standard_normal((2, 5, 6)).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv_transpose_matches_torch(dtype):
    rng = np.random.default_rng(6)
    for kwargs in ({}, {"stride": 2, "padding": 1, "output_padding": 1},
                   {"stride": (2, 1), "groups": 2, "dilation": 2, "bias": False}):
        theirs = torch.nn.ConvTranspose2d(4, 6, 3, **kwargs).to(TORCH_DTYPE[dtype])
        mine = nn.ConvTranspose2d(4, 6, 3, **kwargs, dtype=PK_DTYPE[dtype])
        assert list(mine.state_dict()) == list(theirs.state_dict())
        assert mine.weight.shape == tuple(theirs.weight.shape)
        load_from_torch(mine, theirs)
        compare_forward_backward(torch, mine, theirs,
                                 rng.standard_normal((2, 4, 5, 6)).astype(dtype))
        assert repr(mine) == repr(theirs)
    up = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).to(TORCH_DTYPE[dtype])
    mine_up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, dtype=PK_DTYPE[dtype])
    load_from_torch(mine_up, up)
    x = rng.standard_normal((1, 3, 4, 4)).astype(dtype)
    expected = up(torch.tensor(x), output_size=[8, 8]).detach().numpy()
    assert_close(mine_up(pk.asarray(x), output_size=(8, 8)).numpy(), expected, dtype)
    t1 = torch.nn.ConvTranspose1d(3, 4, 3, stride=2).to(TORCH_DTYPE[dtype])
    m1 = nn.ConvTranspose1d(3, 4, 3, stride=2, dtype=PK_DTYPE[dtype])
    load_from_torch(m1, t1)
    compare_forward_backward(torch, m1, t1, rng.standard_normal((2, 3, 7)).astype(dtype))


def test_conv_default_initialisation_bounds_as_torch():
    pk.random.seed(3)
    for layer, fan_in in ((nn.Conv2d(16, 32, 3), 16 * 9), (nn.Conv1d(8, 4, 5, groups=2), 4 * 5),
                          (nn.ConvTranspose2d(16, 8, 3), 8 * 9)):
        bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)), fan_in of the layout
        w, b = layer.weight.numpy(), layer.bias.numpy()
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
        assert np.abs(b).max() <= bound
        assert abs(w.var() - bound ** 2 / 3) < 0.2 * bound ** 2 / 3


POOLS = [  # (function name, keyword arguments)
    ("max_pool2d", {"kernel_size": 2}),
    ("max_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("max_pool2d", {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 1),
                    "dilation": (2, 1), "ceil_mode": True}),
    ("avg_pool2d", {"kernel_size": 2}),
    ("avg_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False,
                    "ceil_mode": True}),
    ("avg_pool2d", {"kernel_size": (2, 3), "padding": (1, 1), "divisor_override": 5}),
    ("adaptive_avg_pool2d", {"output_size": (4, 3)}),
    ("adaptive_avg_pool2d", {"output_size": 1}),
    ("adaptive_avg_pool2d", {"output_size": (None, 5)}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(POOLS)))
def test_pooling_matches_torch(case, dtype):
    name, kwargs = POOLS[case]
    rng = np.random.default_rng(10 + case)
    x = rng.standard_normal((2, 3, 9, 11)).astype(dtype)
    x[0, 0, :2, :2] = 1.5  # ties: the first one wins
    tfn, pfn = getattr(torch.nn.functional, name), getattr(F, name)
    # a strided input: every other column of a wider array
    wide = np.zeros((2, 3, 9, 22), dtype)
    wide[..., ::2] = x
    for mine_x in (pk.asarray(x), pk.asarray(wide)[..., ::2]):
        tx = torch.tensor(x, requires_grad=True)
        px = mine_x.requires_grad_()
        ty, py = tfn(tx, **kwargs), pfn(px, **kwargs)
        assert_close(py.numpy(), ty.detach().numpy(), dtype, name)
        g = rng.standard_normal(ty.shape).astype(dtype)
        ty.backward(torch.tensor(g))
        py.backward(pk.asarray(g))
        assert_close(px.grad.numpy(), tx.grad.numpy(), dtype, f"{name} gradient")
    unbatched = pfn(pk.asarray(x[0]), **kwargs).numpy()
    assert_close(unbatched, tfn(torch.tensor(x[0]), **kwargs).numpy(), dtype, "unbatched")


def test_max_pool_indices_nan_and_minus_inf_as_torch():
    x = np.random.default_rng(1).standard_normal((1, 2, 6, 6)).astype(np.float32)
    x[0, 0, 0, 1] = np.nan
    x[0, 1, :2, :2] = -np.inf
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    py, pi = F.max_pool2d(pk.asarray(x), 2, return_indices=True)
    np.testing.assert_array_equal(py.numpy(), ty.numpy())
    np.testing.assert_array_equal(pi.numpy(), ti.numpy())
    assert pi.dtype == pk.i64
    layer = nn.MaxPool2d(3, stride=2, padding=1, return_indices=True)
    out, idx = layer(pk.asarray(x))
    tout, tidx = torch.nn.MaxPool2d(3, stride=2, padding=1, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    assert repr(layer) == repr(torch.nn.MaxPool2d(3, stride=2, padding=1, return_indices=True))
    assert repr(nn.AvgPool2d(2)) == repr(torch.nn.AvgPool2d(2))
    assert repr(nn.AdaptiveAvgPool2d((5, 7))) == repr(torch.nn.AdaptiveAvgPool2d((5, 7)))


def test_pooling_modules_match_the_functions():
    x = pk.random.randn(2, 3, 8, 8)
    np.testing.assert_array_equal(nn.MaxPool2d(2)(x).numpy(), F.max_pool2d(x, 2).numpy())
    np.testing.assert_array_equal(nn.AvgPool2d(3, 1, 1, count_include_pad=False)(x).numpy(),
                                  F.avg_pool2d(x, 3, 1, 1, count_include_pad=False).numpy())
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d(1)(x).numpy(),
                               x.numpy().mean(axis=(2, 3), keepdims=True), rtol=1e-6,
                               atol=1e-7)


@pytest.mark.parametrize("call,error,match", [
    (lambda x: F.max_pool2d(x, 2, padding=2), ValueError, "at most half"),
    (lambda x: F.avg_pool2d(x, 9, stride=1), ValueError, "output would be empty"),
    (lambda x: F.max_pool2d(x.astype(pk.i32), 2), TypeError, "i32"),
    (lambda x: F.max_pool2d(x.reshape(-1), 2), ValueError, "3-d"),
    (lambda x: F.avg_pool2d(x, 2, divisor_override=0), ValueError, "divisor_override"),
    (lambda x: F.adaptive_avg_pool2d(x, (1, 2, 3)), ValueError, "output_size"),
    (lambda x: nn.Conv2d(3, 4, 3, groups=2), ValueError, "groups"),
    (lambda x: nn.Conv2d(3, 4, 3, padding_mode="reflect"), NotImplementedError,
     "padding_mode"),
    (lambda x: nn.Conv2d(3, 4, 3, stride=2, padding="same"), ValueError, "stride 1"),
    (lambda x: F.conv1d(x, pk.ones((2, 3, 3))), ValueError, "input must be"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(pk.random.randn(1, 3, 8, 8))
