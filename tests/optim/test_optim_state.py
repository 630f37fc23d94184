"""pk.optim's state across interruptions and changes, as torch.optim users rely on: the state
dict through pk.save / pk.load (the run continues exactly as an uninterrupted one),
`add_param_group` (the new group joins the one launch per dtype, the old state carries on),
and `lr_scheduler.LambdaLR`, each against the numpy references of optim_reference.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk

import optim_reference as ref

BOUNDS = {pk.f32: (1e-6, 1e-5), pk.f16: (2e-3, 2**-10)}  # as test_optim_updates.py


def host_params(seed: int, dtype: pk.DType = pk.f32,
                shapes=((4, 3), (70,), (), (2, 2, 2))) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(ref.NUMPY[dtype]) for s in shapes]


def host_grads(host: list[np.ndarray], steps: int, seed: int) -> list[list[np.ndarray]]:
    """grads[step][k]: the gradient of parameter k at that step."""
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(h.shape).astype(h.dtype) for h in host] for _ in range(steps)]


def step_with(opt: pk.optim.Optimizer, params: list[pk.Tensor], grads: list[np.ndarray]) -> None:
    opt.zero_grad()
    for p, g in zip(params, grads):
        p.grad = pk.asarray(g)
    opt.step()


def check(params: list[pk.Tensor], expected: list[np.ndarray], dtype: pk.DType) -> None:
    atol, rtol = BOUNDS[dtype]
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.numpy().astype(np.float64), e.astype(np.float64),
                                   atol=atol, rtol=rtol)


# ---------------------------------------------------------------- pk.save / pk.load


MAKERS = [
    lambda ps: pk.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01),
    lambda ps: pk.optim.AdamW([{"params": ps[:4]}, {"params": ps[4:], "lr": 0.02,
                                                    "betas": (0.5, 0.9)}], lr=0.01),
]


@pytest.mark.parametrize("make", MAKERS, ids=["SGD", "AdamW"])
def test_state_saved_to_a_file_continues_as_an_uninterrupted_run(make, tmp_path):
    host = host_params(1) + host_params(2, pk.f16)  # two dtypes: f16 carries master weights
    grads = host_grads(host, 6, seed=3)
    straight = [pk.asarray(h) for h in host]
    opt = make(straight)
    for k in range(3):
        step_with(opt, straight, grads[k])
    pk.save({"optimizer": opt.state_dict(), "params": straight}, tmp_path / "run.safetensors")
    for k in range(3, 6):  # the uninterrupted run goes on
        step_with(opt, straight, grads[k])

    saved = pk.load(tmp_path / "run.safetensors")
    resumed = [pk.asarray(p.numpy()) for p in saved["params"]]
    again = make(resumed)
    again.load_state_dict(saved["optimizer"])
    assert again.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    for k in range(3, 6):
        step_with(again, resumed, grads[k])
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_saved_adamw_state_matches_numpys_moments(tmp_path):
    host = host_params(4)
    grads = host_grads(host, 3, seed=5)
    params = [pk.asarray(h) for h in host]
    opt = pk.optim.AdamW(params, lr=0.01, betas=(0.8, 0.99))
    for g in grads:
        step_with(opt, params, g)
    pk.save(opt.state_dict(), tmp_path / "adamw.safetensors")
    state = pk.load(tmp_path / "adamw.safetensors")["state"]
    for k, h in enumerate(host):
        m = v = np.zeros(h.shape, np.float64)
        for g in grads:
            m = 0.8 * m + 0.2 * g[k]
            v = 0.99 * v + 0.01 * g[k].astype(np.float64) ** 2
        assert float(state[k]["step"]) == 3.0
        np.testing.assert_allclose(state[k]["exp_avg"].numpy(), m, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(state[k]["exp_avg_sq"].numpy(), v, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- add_param_group


def test_add_param_group_joins_the_fused_step_and_keeps_the_old_state(launches):
    first, later = host_params(6), host_params(7, shapes=((5,), (3, 65)))
    grads = host_grads(first + later, 6, seed=8)
    a = [pk.asarray(h) for h in first]
    b = [pk.asarray(h) for h in later]
    opt = pk.optim.AdamW(a, lr=0.01)
    for k in range(3):
        step_with(opt, a, grads[k][:4])
    opt.add_param_group({"params": b, "lr": 0.05, "weight_decay": 0.0})
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)  # the defaults fill the rest
    for k in range(3, 6):
        step_with(opt, a + b, grads[k])
    check(a, [ref.adamw(h, [g[i] for g in grads], pk.f32, 0.01) for i, h in enumerate(first)],
          pk.f32)
    check(b, [ref.adamw(h, [g[4 + i] for g in grads[3:]], pk.f32, 0.05, weight_decay=0.0)
              for i, h in enumerate(later)], pk.f32)
    for p in a + b:
        p.grad = pk.ones(p.shape)
    opt.zero_grad(set_to_none=False)
    pk.sync()
    del launches[:]
    opt.step()
    assert len(launches) == 1  # all six f32 parameters in one kernel launch
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1, 2, 3], [4, 5]]
    assert float(sd["state"][0]["step"]) == 7.0 and float(sd["state"][4]["step"]) == 4.0


def test_add_param_group_carries_sgd_momentum_and_master_weights():
    host = host_params(9, pk.f16, shapes=((6,), (70,)))
    grads = host_grads(host + host_params(10, shapes=((3,),)), 4, seed=11)
    old = [pk.asarray(h) for h in host]
    new = pk.asarray(np.ones(3, np.float32))
    opt = pk.optim.SGD(old, lr=0.1, momentum=0.9)
    for k in range(2):
        step_with(opt, old, grads[k][:2])
    opt.add_param_group({"params": [new], "momentum": 0.0})
    for k in range(2, 4):
        step_with(opt, old + [new], grads[k])
    check(old, [ref.sgd(h, [g[i] for g in grads], pk.f16, 0.1, 0.9) for i, h in enumerate(host)],
          pk.f16)
    check([new], [ref.sgd(np.ones(3, np.float32), [g[2] for g in grads[2:]], pk.f32, 0.1)],
          pk.f32)


def test_add_param_group_refuses_what_torch_refuses():
    p, q = pk.zeros((3,)), pk.zeros((2,))
    opt = pk.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than once"):
        opt.add_param_group({"params": [p]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([q])
    with pytest.raises(ValueError, match="lr must be >= 0"):
        opt.add_param_group({"params": [q], "lr": -1.0})
    assert len(opt.param_groups) == 1  # nothing was added by the failed calls
    opt.add_param_group({"params": q})  # one tensor, as torch accepts
    assert opt.param_groups[1]["params"] == [q]


# ---------------------------------------------------------------- LambdaLR


def test_lambda_lr_sets_the_rate_of_each_epoch():
    x = np.linspace(-1, 1, 10).astype(np.float32)
    p = pk.asarray(x)
    opt = pk.optim.SGD([p], lr=0.5)
    schedule = pk.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 ** epoch)
    assert opt.param_groups[0]["initial_lr"] == 0.5 and schedule.get_last_lr() == [0.5]
    rng = np.random.default_rng(12)
    expected = x.copy()
    for epoch in range(5):
        g = rng.standard_normal(10).astype(np.float32)
        p.grad = pk.asarray(g)
        opt.step()
        expected = expected - np.float32(0.5 * 0.5 ** epoch) * g
        schedule.step()
        assert schedule.get_last_lr() == [0.5 * 0.5 ** (epoch + 1)]
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-6, atol=1e-7)


def test_lambda_lr_per_group_and_resumed_from_a_file(tmp_path):
    a, b = pk.zeros((2,)), pk.zeros((3,))
    opt = pk.optim.AdamW([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=0.01)
    warmup = [lambda e: min(1.0, (e + 1) / 4), lambda e: math.cos(e / 10)]
    schedule = pk.optim.lr_scheduler.LambdaLR(opt, warmup)
    for _ in range(3):
        schedule.step()
    assert schedule.get_last_lr() == [0.01 * 1.0, 0.1 * math.cos(0.3)]
    pk.save({"optimizer": opt.state_dict(), "schedule": schedule.state_dict()},
            tmp_path / "s.safetensors")
    saved = pk.load(tmp_path / "s.safetensors")
    a2, b2 = pk.zeros((2,)), pk.zeros((3,))
    opt2 = pk.optim.AdamW([{"params": [a2]}, {"params": [b2], "lr": 0.1}], lr=0.01)
    opt2.load_state_dict(saved["optimizer"])  # brings back lr and initial_lr
    schedule2 = pk.optim.lr_scheduler.LambdaLR(opt2, warmup, last_epoch=3)
    schedule2.load_state_dict(saved["schedule"])
    assert schedule2.last_epoch == 3
    schedule.step()
    schedule2.step()
    assert schedule2.get_last_lr() == schedule.get_last_lr()
    assert [g["lr"] for g in opt2.param_groups] == [g["lr"] for g in opt.param_groups]


@pytest.mark.parametrize("call,error,match", [
    (lambda opt: pk.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0] * 2), ValueError,
     "2 lr_lambdas for 1 parameter groups"),
    (lambda opt: pk.optim.lr_scheduler.LambdaLR(opt, 0.5), TypeError, "not a function"),
    (lambda opt: pk.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0, last_epoch=4), KeyError,
     "initial_lr"),
    (lambda opt: pk.optim.lr_scheduler.LambdaLR("opt", lambda e: 1.0), TypeError,
     "optimizer must be"),
])
def test_lambda_lr_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call(pk.optim.SGD([pk.zeros((2,))], lr=0.1))


@pytest.mark.parametrize("zero_to_none", [True, False])
def test_model_converted_to_another_dtype_after_the_optimizer_was_made(zero_to_none):
    # model.to(dtype) after the optimizer was built: the step re-pointed each f64 parameter at
    # its segment of the f32 flat buffer and read that memory as f64 (garbage weights, then a
    # read past the buffer's end). The stores now follow the new dtype, state carried over.
    rng = np.random.default_rng(7)
    model = pk.nn.Linear(3, 2)
    opt = pk.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.1)
    w = [model.weight.numpy().astype(np.float64), model.bias.numpy().astype(np.float64)]
    m = [np.zeros_like(p) for p in w]
    v = [np.zeros_like(p) for p in w]
    for t in range(1, 5):
        if t == 3:
            model.to(pk.f64)
        dtype = np.float32 if t < 3 else np.float64
        x = rng.standard_normal((4, 3)).astype(dtype)
        opt.zero_grad(set_to_none=zero_to_none)
        model(pk.asarray(x)).sum().backward()
        opt.step()
        grads = [np.tile(x.sum(0).astype(np.float64), (2, 1)), np.full(2, 4.0)]
        for k in range(2):
            m[k] = 0.9 * m[k] + 0.1 * grads[k]
            v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
            w[k] = w[k] * (1 - 0.1 * 0.1) - 0.1 * (m[k] / (1 - 0.9 ** t)) / (
                np.sqrt(v[k] / (1 - 0.999 ** t)) + 1e-8)
    assert model.weight.dtype == pk.f64 and model.bias.dtype == pk.f64
    np.testing.assert_allclose(model.weight.numpy(), w[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.bias.numpy(), w[1], rtol=1e-5, atol=1e-6)
    assert opt.state_dict()["state"][0]["exp_avg"].dtype == pk.f64
