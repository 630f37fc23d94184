"""Every pk.optim optimizer against torch.optim (CPU) step by step: the same parameters and
gradients, several shapes (a scalar, a non-contiguous parameter, one past a 64-element
chunk), one parameter skipped (grad None) on some steps, f32 and f64; then the state dict's
keys (state and param_groups) against torch's, and a torch optimizer's state dict (through
numpy) loaded into a pk optimizer that goes on exactly as torch does.

Bounds: the kernels compute in the parameters' dtype with PyTorch's order of operations;
what differs is the device's contraction into FMAs and its division and sqrt (a few ULP per
step): relative 2e-6 of the largest parameter after 6 steps in f32, 1e-13 in f64.
"""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

torch = pytest.importorskip("torch")

CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "betas": (0.3, 0.9), "maximize": True}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
    ("RMSprop", {}),
    ("RMSprop", {"momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 0.1, "initial_accumulator_value": 0.5, "weight_decay": 0.1}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "weight_decay": 0.1, "maximize": True}),
]
STEPS = 6
BOUNDS = {np.float32: 2e-6, np.float64: 1e-13}


def config_id(config: tuple[str, dict]) -> str:
    name, kwargs = config
    return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


def make_pair(dtype: type, seed: int) -> tuple[list, list]:
    """The same values as torch leaves and pk tensors; pk's last one is a transposed view."""
    rng = np.random.default_rng(seed)
    host = [rng.standard_normal(s).astype(dtype) for s in [(3, 5), (), (130,)]]
    base = rng.standard_normal((4, 6)).astype(dtype)
    theirs = [torch.tensor(h, requires_grad=True) for h in host + [base.T.copy()]]
    mine = [pk.asarray(h) for h in host] + [pk.asarray(base).T]
    return theirs, mine


def run_steps(theirs: list, mine: list, topt, popt, dtype: type, seed: int, steps: int) -> None:
    """`steps` steps of both with the same gradients; parameter 1 has none on steps 2 and 4."""
    rng = np.random.default_rng(seed)
    for step in range(steps):
        for k, (t, p) in enumerate(zip(theirs, mine)):
            if k == 1 and step in (2, 4):
                t.grad, p.grad = None, None
                continue
            g = rng.standard_normal(t.shape).astype(dtype)
            t.grad, p.grad = torch.tensor(g), pk.asarray(g)
        topt.step()
        popt.step()


def assert_close(theirs: list, mine: list, dtype: type) -> None:
    for t, p in zip(theirs, mine):
        expected = t.detach().numpy()
        got = p.numpy()
        assert got.dtype == expected.dtype and got.shape == expected.shape
        scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
        np.testing.assert_allclose(got, expected, rtol=0, atol=BOUNDS[dtype] * scale)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_steps_match_torch_f32(config):
    name, kwargs = config
    theirs, mine = make_pair(np.float32, 1)
    topt = getattr(torch.optim, name)(theirs, **kwargs)
    popt = getattr(pk.optim, name)(mine, **kwargs)
    run_steps(theirs, mine, topt, popt, np.float32, 2, STEPS)
    assert_close(theirs, mine, np.float32)
    # the state dicts have torch's keys: the state of each parameter and the groups'
    tsd, psd = topt.state_dict(), popt.state_dict()
    assert sorted(psd["state"]) == sorted(tsd["state"])
    for i, entry in tsd["state"].items():
        assert sorted(psd["state"][i]) == sorted(entry)
        for key, value in entry.items():
            mine_value = psd["state"][i][key]
            np.testing.assert_allclose(np.asarray(mine_value.numpy(), np.float64),
                                       np.asarray(value.numpy(), np.float64),
                                       rtol=1e-5, atol=1e-6, err_msg=key)
    assert [sorted(g) for g in psd["param_groups"]] == [sorted(g) for g in tsd["param_groups"]]


@pytest.mark.parametrize("config", CONFIGS[1::2], ids=config_id)
def test_steps_match_torch_f64(config):
    name, kwargs = config
    theirs, mine = make_pair(np.float64, 3)
    topt = getattr(torch.optim, name)(theirs, **kwargs)
    popt = getattr(pk.optim, name)(mine, **kwargs)
    run_steps(theirs, mine, topt, popt, np.float64, 4, STEPS)
    assert_close(theirs, mine, np.float64)


@pytest.mark.parametrize("config", [CONFIGS[1], CONFIGS[4], CONFIGS[8], CONFIGS[10],
                                    CONFIGS[12]], ids=config_id)
def test_a_torch_state_dict_loads_and_the_steps_go_on_as_torch(config):
    """torch's state dict, as numpy arrays and plain numbers (what a checkpoint converted
    without torch holds), into a fresh pk optimizer over parameters holding torch's values."""
    name, kwargs = config
    theirs, mine = make_pair(np.float32, 5)
    topt = getattr(torch.optim, name)(theirs, **kwargs)
    scratch = getattr(pk.optim, name)(mine, **kwargs)
    run_steps(theirs, mine, topt, scratch, np.float32, 6, 3)
    fresh = [pk.asarray(t.detach().numpy()) for t in theirs]
    popt = getattr(pk.optim, name)(fresh, **kwargs)
    tsd = topt.state_dict()
    popt.load_state_dict({
        "state": {i: {k: v.numpy() for k, v in entry.items()} for i, entry in
                  tsd["state"].items()},
        "param_groups": [dict(g) for g in tsd["param_groups"]]})
    run_steps(theirs, fresh, topt, popt, np.float32, 7, 3)
    assert_close(theirs, fresh, np.float32)


def test_param_groups_and_a_learning_rate_changed_between_steps_match_torch():
    theirs, mine = make_pair(np.float32, 8)
    topt = torch.optim.RMSprop([{"params": theirs[:2]}, {"params": theirs[2:], "lr": 0.05,
                                                          "momentum": 0.5}], lr=0.01)
    popt = pk.optim.RMSprop([{"params": mine[:2]}, {"params": mine[2:], "lr": 0.05,
                                                    "momentum": 0.5}], lr=0.01)
    run_steps(theirs, mine, topt, popt, np.float32, 9, 2)
    for t, p in zip(topt.param_groups, popt.param_groups):
        t["lr"] = p["lr"] = t["lr"] * 0.5
    run_steps(theirs, mine, topt, popt, np.float32, 10, 3)
    assert_close(theirs, mine, np.float32)


def test_one_launch_per_dtype_for_every_rule(launches):
    params = [pk.ones((70,)), pk.ones((3,)), pk.ones((5,), pk.f64)]
    for make in (lambda ps: pk.optim.Adam(ps, amsgrad=True),
                 lambda ps: pk.optim.RMSprop(ps, momentum=0.9, centered=True),
                 pk.optim.Adagrad, pk.optim.Adadelta):
        opt = make(params)
        opt.zero_grad()
        for p in params:
            p.grad = pk.ones(p.shape, p.dtype)
        opt.zero_grad(set_to_none=False)  # the gradients become views of the flat buffer
        for p in params:
            p.grad[...] = 1.0
        opt.step()
        del launches[:]
        opt.step()
        assert len(launches) == 2  # f32 and f64


@pytest.mark.parametrize("call,error,match", [
    (lambda p: pk.optim.SGD([p], lr=0.1, nesterov=True), ValueError, "nesterov"),
    (lambda p: pk.optim.SGD([p], momentum=0.9, dampening=0.1, nesterov=True), ValueError,
     "dampening 0"),
    (lambda p: pk.optim.Adam([p], amsgrad=1), TypeError, "amsgrad must be True or False"),
    (lambda p: pk.optim.Adam([p], differentiable=True), NotImplementedError, "differentiable"),
    (lambda p: pk.optim.RMSprop([p], alpha=-0.5), ValueError, "alpha"),
    (lambda p: pk.optim.Adagrad([p], lr_decay=-1), ValueError, "lr_decay"),
    (lambda p: pk.optim.Adadelta([p], rho=1.5), ValueError, "rho"),
])
def test_bad_hyperparameters_name_themselves(call, error, match):
    with pytest.raises(error, match=match):
        call(pk.zeros((3,)))
