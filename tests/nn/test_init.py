"""pk.nn.init against PyTorch's rules: gains, fans, the bounds and moments of each random
initialisation (on large tensors, within sampling tolerance), the deterministic ones
exactly, in-place writes into parameters, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk
from pykern.nn import init

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def seeded() -> None:
    """Both generators seeded: torch's samples are references of the same distributions."""
    pk.random.seed(11)
    torch.manual_seed(11)

SHAPES = [(300, 200), (64, 16, 3, 3), (40, 30, 5), (7, 9, 2, 3, 4)]


def test_calculate_gain_matches_torch():
    for name in ("linear", "conv2d", "conv_transpose1d", "sigmoid", "tanh", "relu", "selu"):
        assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    for slope in (None, 0.2, 3):
        assert init.calculate_gain("leaky_relu", slope) == \
            torch.nn.init.calculate_gain("leaky_relu", slope)
    with pytest.raises(ValueError, match="unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", "steep")


def test_fans_match_torch():
    for shape in SHAPES:
        assert init._calculate_fan_in_and_fan_out(pk.empty(shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(pk.empty((5,)))


def uniform_bound(fn: str, shape: tuple[int, ...], **kwargs: object) -> float:
    """The bound torch's uniform initialisation `fn` has for `shape`: the largest |value| of
    a large sample, rounded up to the formula's value by the check below."""
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    if fn == "xavier_uniform_":
        return kwargs.get("gain", 1.0) * math.sqrt(6.0 / (fan_in + fan_out))
    fan = fan_in if kwargs.get("mode", "fan_in") == "fan_in" else fan_out
    gain = torch.nn.init.calculate_gain(kwargs.get("nonlinearity", "leaky_relu"),
                                        kwargs.get("a", 0))
    return gain * math.sqrt(3.0 / fan)


@pytest.mark.parametrize("shape", SHAPES[:2])
@pytest.mark.parametrize("fn,kwargs", [
    ("xavier_uniform_", {}), ("xavier_uniform_", {"gain": 2.0}),
    ("kaiming_uniform_", {}), ("kaiming_uniform_", {"a": math.sqrt(5.0)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
])
def test_uniform_initialisations_have_torchs_bounds(fn, kwargs, shape):
    pk.random.seed(1)
    w = getattr(init, fn)(pk.empty(shape), **kwargs).numpy()
    bound = uniform_bound(fn, shape, **kwargs)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.97 * bound
    assert abs(w.mean()) < 0.05 * bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.05)
    t = getattr(torch.nn.init, fn)(torch.empty(shape), **kwargs).numpy()
    assert np.abs(t).max() <= bound  # the same formula on torch's side


@pytest.mark.parametrize("fn,kwargs,std", [
    ("xavier_normal_", {"gain": 0.5}, lambda fi, fo: 0.5 * math.sqrt(2.0 / (fi + fo))),
    ("kaiming_normal_", {"nonlinearity": "relu"}, lambda fi, fo: math.sqrt(2.0 / fi)),
    ("kaiming_normal_", {"mode": "fan_out", "a": 0.1},
     lambda fi, fo: math.sqrt(2.0 / (1 + 0.01)) / math.sqrt(fo)),
    ("normal_", {"mean": 0.3, "std": 0.02}, lambda fi, fo: 0.02),
])
def test_normal_initialisations_have_torchs_moments(fn, kwargs, std):
    pk.random.seed(2)
    shape = (256, 64, 3)
    fi, fo = init._calculate_fan_in_and_fan_out(pk.empty(shape))
    w = getattr(init, fn)(pk.empty(shape), **kwargs).numpy()
    t = getattr(torch.nn.init, fn)(torch.empty(shape), **kwargs).numpy()
    for sample in (w, t):
        assert sample.std() == pytest.approx(std(fi, fo), rel=0.02)
        assert sample.mean() == pytest.approx(kwargs.get("mean", 0.0), abs=0.02 * std(fi, fo))


def normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (1.0, 2.0, -1.0, 2.0),
                                          (0.0, 0.02, -0.04, 0.04), (0.0, 1.0, 3.0, 5.0)])
def test_trunc_normal_has_the_truncated_distribution(mean, std, a, b):
    """Against the truncated normal's own CDF, mean and variance (also for an interval far in
    a tail, where PyTorch warns that its sampling may be wrong)."""
    w = init.trunc_normal_(pk.empty((400, 250)), mean, std, a, b).numpy().astype(np.float64)
    assert w.min() >= a and w.max() <= b
    lo, hi = (a - mean) / std, (b - mean) / std
    mass = normal_cdf(hi) - normal_cdf(lo)
    pdf = [math.exp(-z * z / 2) / math.sqrt(2 * math.pi) for z in (lo, hi)]
    shift = (pdf[0] - pdf[1]) / mass
    var = std ** 2 * (1 + (lo * pdf[0] - hi * pdf[1]) / mass - shift ** 2)
    assert w.mean() == pytest.approx(mean + std * shift, abs=0.01 * math.sqrt(var))
    assert w.var() == pytest.approx(var, rel=0.02)
    for q in np.linspace(a, b, 7)[1:-1]:
        expected = (normal_cdf((q - mean) / std) - normal_cdf(lo)) / mass
        assert (w <= q).mean() == pytest.approx(expected, abs=0.005)


def test_orthogonal_eye_dirac_and_constants():
    pk.random.seed(4)
    for shape, gain in (((6, 10), 1.0), ((10, 6), 2.0), ((4, 3, 2, 2), 0.5)):
        w = init.orthogonal_(pk.empty(shape, dtype=pk.f64), gain).numpy().reshape(shape[0], -1)
        gram = w @ w.T if shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(gram, gain ** 2 * np.eye(len(gram)), atol=1e-10)
    np.testing.assert_array_equal(init.eye_(pk.empty((3, 5))).numpy(),
                                  torch.nn.init.eye_(torch.empty(3, 5)).numpy())
    for shape, groups in (((4, 2, 3, 3), 2), ((6, 4, 5), 1), ((2, 3, 3, 3, 3), 1)):
        np.testing.assert_array_equal(init.dirac_(pk.empty(shape), groups).numpy(),
                                      torch.nn.init.dirac_(torch.empty(shape), groups).numpy())
    assert (init.constant_(pk.empty((3,)), 0.25).numpy() == 0.25).all()
    assert (init.ones_(pk.empty((3,))).numpy() == 1).all()
    assert (init.zeros_(pk.empty((3,), dtype=pk.f16)).numpy() == 0).all()
    u = init.uniform_(pk.empty((2000,)), -3.0, -1.0).numpy()
    assert u.min() >= -3 and u.max() < -1 and u.mean() == pytest.approx(-2, abs=0.05)


def test_initialising_a_parameter_writes_in_place():
    lin = pk.nn.Linear(4, 3)
    before = lin.weight
    out = init.zeros_(lin.weight)
    assert out is lin.weight is before and (lin.weight.numpy() == 0).all()
    assert lin.weight.requires_grad and lin.weight.is_leaf
    assert init.kaiming_uniform_(pk.empty((0, 3))).shape == (0, 3)  # nothing to fill


@pytest.mark.parametrize("call,error,match", [
    (lambda: init.uniform_(pk.empty((3,)), generator=object()), TypeError, "generator"),
    (lambda: init.normal_(pk.zeros((3,), pk.i32)), TypeError, "float dtype"),
    (lambda: init.kaiming_uniform_(pk.empty((3, 3)), mode="fan_avg"), ValueError, "mode"),
    (lambda: init.eye_(pk.empty((3, 3, 3))), ValueError, "2-D"),
    (lambda: init.dirac_(pk.empty((3, 3, 3)), groups=2), ValueError, "divisible"),
    (lambda: init.trunc_normal_(pk.empty((3,)), a=1.0, b=0.0), ValueError, "below"),
])
def test_init_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
