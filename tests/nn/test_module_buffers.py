"""Module buffers (register_buffer, persistent or not) and ModuleDict: where they appear
(state_dict, named_buffers, attribute access), load_state_dict into them, to(dtype), and the
state_dict keys of a model built of the new layers, against PyTorch's for the same
structure."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from torch_reference import torch_repr

import pykern as pk
from pykern import nn


class Stats(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(pk.ones((2,)))
        self.register_buffer("count", pk.zeros((), pk.i64))
        self.register_buffer("mean", pk.zeros((2,)))
        self.register_buffer("scratch", pk.zeros((4,)), persistent=False)
        self.register_buffer("unset", None)
        self.inner = nn.Linear(2, 2)


def test_buffers_in_state_dict_order_and_attribute_access():
    m = Stats()
    assert list(m.state_dict()) == ["scale", "count", "mean", "inner.weight", "inner.bias"]
    assert [n for n, _ in m.named_buffers()] == ["count", "mean", "scratch"]
    assert [n for n, _ in m.named_parameters()] == ["scale", "inner.weight", "inner.bias"]
    assert m.unset is None and m.mean.shape == (2,)
    m.mean = pk.ones((2,))  # replaces the buffer
    assert (m.state_dict()["mean"].numpy() == 1).all()
    with pytest.raises(TypeError, match="as buffer 'mean'"):
        m.mean = np.zeros(2)
    with pytest.raises(TypeError, match="register_parameter"):
        m.register_buffer("p", nn.Parameter(pk.zeros((1,))))
    del m.scratch
    assert [n for n, _ in m.named_buffers()] == ["count", "mean"]
    m.register_buffer("scale", pk.zeros((2,)))  # a name moves from one table to the other
    assert [n for n, _ in m.named_parameters()] == ["inner.weight", "inner.bias"]


def test_load_state_dict_fills_buffers_and_to_converts_the_float_ones():
    src, dst = Stats(), Stats()
    with pk.no_grad():
        src.mean[...] = 3.0
        src.count[...] = 7
    dst.load_state_dict(src.state_dict())
    assert dst.count.item() == 7 and (dst.mean.numpy() == 3).all()
    missing = dict(src.state_dict())
    del missing["count"]
    with pytest.raises(RuntimeError, match="Missing key.*'count'"):
        dst.load_state_dict(missing)
    dst.to(pk.f64)
    assert dst.mean.dtype == pk.f64 and dst.count.dtype == pk.i64
    assert dst.scratch.dtype == pk.f64  # non-persistent buffers follow too
    assert dst.scale.dtype == pk.f64


def test_module_dict():
    d = nn.ModuleDict({"enc": nn.Linear(3, 4), "dec": nn.Linear(4, 3)})
    d["act"] = nn.ReLU()
    assert list(d) == ["enc", "dec", "act"] and len(d) == 3 and "dec" in d
    assert list(d.state_dict()) == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert isinstance(d.pop("act"), nn.ReLU) and "act" not in d
    d.update([("extra", nn.Linear(1, 1))])
    assert list(d.keys()) == ["enc", "dec", "extra"]
    del d["extra"]
    assert [type(m).__name__ for m in d.values()] == ["Linear", "Linear"]
    assert repr(d).startswith("ModuleDict(\n  (enc): Linear")
    d.clear()
    assert len(d) == 0
    with pytest.raises(TypeError, match="pairs"):
        nn.ModuleDict([nn.Linear(1, 1)])


class PkNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8),
                                      nn.ReLU(), nn.MaxPool2d(2), nn.Dropout2d(0.1))
        self.heads = nn.ModuleDict({"cls": nn.Linear(8 * 4 * 4, 5),
                                    "aux": nn.Sequential(nn.Flatten(), nn.Linear(128, 2))})
        self.norm = nn.BatchNorm1d(5, affine=False)
        self.register_buffer("steps", pk.zeros((), pk.i64))
        self.loss = nn.CrossEntropyLoss(weight=pk.ones((5,)))

    def forward(self, x):
        f = self.features(x)
        return self.norm(self.heads["cls"](f.reshape(f.shape[0], -1))), self.heads["aux"](f)


def test_state_dict_keys_of_a_model_match_torchs():
    torch = pytest.importorskip("torch")
    tnn = torch.nn

    class TorchNet(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = tnn.Sequential(tnn.Conv2d(3, 8, 3, padding=1), tnn.BatchNorm2d(8),
                                           tnn.ReLU(), tnn.MaxPool2d(2), tnn.Dropout2d(0.1))
            self.heads = tnn.ModuleDict({"cls": tnn.Linear(8 * 4 * 4, 5),
                                         "aux": tnn.Sequential(tnn.Flatten(),
                                                               tnn.Linear(128, 2))})
            self.norm = tnn.BatchNorm1d(5, affine=False)
            self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
            self.loss = tnn.CrossEntropyLoss(weight=torch.ones(5))

        def forward(self, x):
            f = self.features(x)
            return self.norm(self.heads["cls"](f.flatten(1))), self.heads["aux"](f)

    mine, theirs = PkNet(), TorchNet()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert torch_repr(mine.features) == torch_repr(theirs.features)
    # torch's weights through numpy: the same outputs, in eval mode (running statistics)
    theirs.train()
    x = np.random.default_rng(1).standard_normal((4, 3, 8, 8)).astype(np.float32)
    theirs(torch.tensor(x))  # moves the running statistics off their start
    mine.load_state_dict(OrderedDict((k, v.numpy()) for k, v in theirs.state_dict().items()))
    mine.eval()
    theirs.eval()
    with torch.no_grad():
        expected = theirs(torch.tensor(x))
    for got, want in zip(mine(pk.asarray(x)), expected):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, atol=2e-5)
