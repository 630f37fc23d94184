"""nll_loss, cross_entropy (per-class weight, ignore_index, label smoothing), their modules
and MSELoss against PyTorch (CPU), values and gradients, f32 and f64; Dropout1d/2d's
per-channel masks; Flatten and Unflatten."""

from __future__ import annotations

import numpy as np
import pytest
from torch_reference import assert_close

import pykern as pk
from pykern import nn
from pykern.nn import functional as F

torch = pytest.importorskip("torch")

SHAPES = [((6, 5), (6,)), ((3, 4, 2, 3), (3, 2, 3)), ((5,), ())]


def targets(shape: tuple[int, ...], classes: int, rng: np.random.Generator) -> np.ndarray:
    t = rng.integers(0, classes, shape)
    if t.size > 2:
        t.reshape(-1)[1] = -100  # an ignored one
    return t


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_losses_match_torch(name, dtype):
    rng = np.random.default_rng(1)
    for (xshape, tshape) in SHAPES:
        classes = xshape[0] if len(xshape) == 1 else xshape[1]
        x = rng.standard_normal(xshape).astype(dtype)
        t = targets(tshape, classes, rng)
        w = rng.uniform(0.5, 2.0, classes).astype(dtype)
        options = [{}, {"weight": w}, {"reduction": "sum"}, {"reduction": "none", "weight": w}]
        if name == "cross_entropy":
            options += [{"label_smoothing": 0.2}, {"label_smoothing": 0.1, "weight": w},
                        {"label_smoothing": 0.3, "weight": w, "reduction": "none"}]
        for kwargs in options:
            tx = torch.tensor(x, requires_grad=True)
            px = pk.asarray(x).requires_grad_()
            tk = {k: torch.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
            ty = getattr(torch.nn.functional, name)(tx, torch.tensor(t), **tk)
            py = getattr(F, name)(px, pk.asarray(t), **kwargs)
            what = f"{name} {xshape} {kwargs}"
            assert_close(py.numpy(), ty.detach().numpy(), dtype, what)
            g = rng.standard_normal(ty.shape).astype(dtype)
            ty.backward(torch.tensor(g))
            py.backward(pk.asarray(g))
            assert_close(px.grad.numpy(), tx.grad.numpy(), dtype, what + " gradient")


@pytest.mark.filterwarnings("ignore:size_average and reduce")  # torch's, on the legacy args
def test_loss_modules_match_torch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    t = rng.integers(0, 4, 7)
    w = np.array([1.0, 2.0, 0.5, 1.5], np.float32)
    pairs = [
        (nn.CrossEntropyLoss(weight=pk.asarray(w), label_smoothing=0.1),
         torch.nn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.1)),
        (nn.NLLLoss(ignore_index=2, reduction="sum"),
         torch.nn.NLLLoss(ignore_index=2, reduction="sum")),
        (nn.CrossEntropyLoss(reduce=False), torch.nn.CrossEntropyLoss(reduce=False)),
    ]
    for mine, theirs in pairs:
        assert list(mine.state_dict()) == list(theirs.state_dict())
        assert_close(mine(pk.asarray(x), pk.asarray(t)).numpy(),
                     theirs(torch.tensor(x), torch.tensor(t)).numpy(), np.float32)
    y = rng.standard_normal((7, 4)).astype(np.float32)
    for kwargs in ({}, {"reduction": "sum"}, {"size_average": False}):
        assert_close(nn.MSELoss(**kwargs)(pk.asarray(x), pk.asarray(y)).numpy(),
                     torch.nn.MSELoss(**kwargs)(torch.tensor(x), torch.tensor(y)).numpy(),
                     np.float32)
    assert list(nn.CrossEntropyLoss(weight=pk.asarray(w)).state_dict()) == ["weight"]


@pytest.mark.parametrize("tdtype", [np.uint8, np.int16, np.int32, np.int64])
@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_losses_take_every_integer_target_dtype_and_many_classes(name, tdtype):
    # 300 classes: more than a u8 target can name and past one workgroup of the gradient's
    # kernel; an ignore_index a u8 target cannot hold ignores nothing there
    rng = np.random.default_rng(3)
    classes, rows = 300, 37
    x = rng.standard_normal((rows, classes)).astype(np.float32)
    t = rng.integers(0, min(classes, np.iinfo(tdtype).max + 1), rows).astype(tdtype)
    ignore = int(t[5]) if tdtype != np.uint8 else -100
    w = rng.uniform(0.5, 2.0, classes).astype(np.float32)
    smoothing = {"label_smoothing": 0.25} if name == "cross_entropy" else {}
    for kwargs in ({}, {"weight": w, **smoothing}, {"reduction": "none", **smoothing}):
        tx = torch.tensor(x, requires_grad=True)
        px = pk.asarray(x).requires_grad_()
        tk = {k: torch.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
        ty = getattr(torch.nn.functional, name)(tx, torch.tensor(t.astype(np.int64)),
                                               ignore_index=ignore, **tk)
        py = getattr(F, name)(px, pk.asarray(t), ignore_index=ignore, **kwargs)
        what = f"{name} {tdtype.__name__} {kwargs}"
        assert_close(py.numpy(), ty.detach().numpy(), np.float32, what)
        g = rng.standard_normal(ty.shape).astype(np.float32)
        ty.backward(torch.tensor(g))
        py.backward(pk.asarray(g))
        assert_close(px.grad.numpy(), tx.grad.numpy(), np.float32, what + " gradient")


def test_a_class_weight_that_requires_grad_gets_its_gradient():
    # PyTorch does not differentiate the weight; its loss written out in ops does
    rng = np.random.default_rng(4)
    x = rng.standard_normal((9, 5)).astype(np.float64)
    t = rng.integers(0, 5, 9)
    t[2] = -100
    w = rng.uniform(0.5, 2.0, 5)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tt = torch.tensor(t)
    keep = tt != -100
    logp = torch.log_softmax(tx, 1)[keep]
    picked, wt = logp[torch.arange(len(logp)), tt[keep]], tw[tt[keep]]
    smooth = -(logp * tw).sum(1)
    ty = (0.9 * -(picked * wt) + 0.1 / 5 * smooth).sum() / wt.sum()
    ty.backward()
    px, pw = pk.asarray(x).requires_grad_(), pk.asarray(w).requires_grad_()
    py = F.cross_entropy(px, pk.asarray(t), weight=pw, label_smoothing=0.1)
    py.backward()
    assert_close(py.numpy(), ty.detach().numpy(), np.float64, "loss")
    assert_close(px.grad.numpy(), tx.grad.numpy(), np.float64, "input gradient")
    assert_close(pw.grad.numpy(), tw.grad.numpy(), np.float64, "weight gradient")


def test_all_targets_ignored_gives_nan_as_torch():
    x = pk.zeros((2, 3))
    t = pk.asarray(np.array([-100, -100]))
    assert np.isnan(F.nll_loss(x, t).item())
    assert F.nll_loss(x, t, reduction="sum").item() == 0


@pytest.mark.parametrize("call,error,match", [
    (lambda x, t: F.nll_loss(x, t, weight=pk.ones((2,))), ValueError, r"weight must have shape"),
    (lambda x, t: F.nll_loss(x, pk.asarray(np.array([0, 3]))), IndexError, "out of range"),
    (lambda x, t: F.nll_loss(x[0], t), ValueError, "0-d target"),
    (lambda x, t: F.cross_entropy(x, t, label_smoothing=1.5), ValueError, "label_smoothing"),
    (lambda x, t: nn.NLLLoss(reduction="avg"), ValueError, "reduction"),
])
def test_loss_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(pk.zeros((2, 3)), pk.asarray(np.array([0, 1])))


@pytest.mark.parametrize("layer,shape", [(nn.Dropout2d, (8, 50, 3, 4)), (nn.Dropout2d, (8, 50, 5)),
                                         (nn.Dropout1d, (8, 50, 6)), (nn.Dropout1d, (50, 6))])
def test_channel_dropout_drops_whole_channels(layer, shape):
    pk.random.seed(4)
    drop = layer(p=0.25)
    x = pk.asarray(np.random.default_rng(3).uniform(1, 2, shape).astype(np.float32))
    x.requires_grad_()
    y = drop(x)
    planes = y.numpy().reshape(shape[:2] + (-1,) if len(shape) > 2 else shape[:1] + (-1,))
    xs = x.numpy().reshape(planes.shape)
    dropped = (planes == 0).all(axis=-1)
    kept = np.isclose(planes, xs / 0.75, rtol=1e-6).all(axis=-1)
    assert (dropped | kept).all()  # each channel all zero or all scaled
    assert 0.15 < dropped.mean() < 0.35
    y.sum().backward()
    grad = x.grad.numpy().reshape(planes.shape)
    expected = np.broadcast_to(np.where(dropped[..., None], 0.0, 1 / 0.75), grad.shape)
    np.testing.assert_allclose(grad, expected, rtol=1e-6)
    drop.eval()
    assert drop(x) is x
    assert repr(drop) == repr(getattr(torch.nn, layer.__name__)(p=0.25))


def test_flatten_and_unflatten_match_torch():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    for args in ((), (0,), (1, 2), (2, -1), (-3, -2)):
        expected = torch.nn.Flatten(*args)(torch.tensor(x)).numpy()
        np.testing.assert_array_equal(nn.Flatten(*args)(pk.asarray(x)).numpy(), expected)
    un = nn.Unflatten(1, (3, -1))
    flat = pk.asarray(x.reshape(2, 60)).requires_grad_()
    y = un(flat)
    np.testing.assert_array_equal(y.numpy(), x.reshape(2, 3, 20))
    (y * 2).sum().backward()
    np.testing.assert_array_equal(flat.grad.numpy(), np.full((2, 60), 2.0, np.float32))
    assert repr(nn.Flatten()) == repr(torch.nn.Flatten())
    with pytest.raises(ValueError, match="does not multiply"):
        nn.Unflatten(1, (7, 9))(flat)


def test_a_class_weight_written_after_the_loss_is_caught_at_backward():
    # the gradient reads the weight: a write into it between the loss and its backward would
    # give a gradient of other weights than the loss's, so backward refuses, as for any saved
    # tensor
    x = pk.asarray(np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32))
    x.requires_grad_()
    w = pk.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    loss = F.cross_entropy(x, pk.asarray(np.array([0, 1, 2, 1])), weight=w)
    w += 1.0
    with pytest.raises(RuntimeError, match="modified"):
        loss.backward()


@pytest.mark.parametrize("tdtype", [np.int8, np.uint8, np.int32, np.int64])
def test_the_row_kernels_clamp_targets_outside_the_classes(tdtype):
    # targets are range-checked on the host before the kernels run, except inside a
    # pk.compile recording: there a target outside [0, C) picks nothing (its log-probability
    # counts as 0) and takes the weight of the nearest class, and its gradient picks nothing
    from pykern.tensor.nnops.class_loss import class_loss_rows
    rng = np.random.default_rng(6)
    classes = 5
    logp = np.log(rng.dirichlet(np.ones(classes), 6)).astype(np.float32)
    t = np.array([-3, 0, 4, 5, 100, -100], tdtype) if tdtype != np.uint8 else \
        np.array([0, 4, 5, 100, 255, 2], tdtype)
    w = rng.uniform(0.5, 2.0, classes).astype(np.float32)
    px = pk.asarray(logp).requires_grad_()
    loss, weights = class_loss_rows(px, pk.asarray(t), pk.asarray(w), -100, 0.0)
    wide = t.astype(np.int64)
    inside = (wide >= 0) & (wide < classes)
    ignored = wide == -100
    k = np.clip(wide, 0, classes - 1)
    picked = np.where(inside, logp[np.arange(6), k], 0.0)
    want = np.where(ignored, 0.0, -picked * w[k]).astype(np.float32)
    np.testing.assert_allclose(loss.numpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(weights.numpy(), np.where(ignored, 0.0, w[k]).astype(np.float32))
    loss.backward(pk.ones(6))
    grad = np.zeros_like(logp)
    rows = np.nonzero(inside & ~ignored)[0]
    grad[rows, k[rows]] = -w[k[rows]]
    np.testing.assert_allclose(px.grad.numpy(), grad, rtol=1e-6)
