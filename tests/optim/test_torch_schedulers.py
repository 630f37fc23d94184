"""pk.optim.lr_scheduler against torch.optim.lr_scheduler: the learning rates (and, for
OneCycleLR, the momenta) of every epoch, for two parameter groups of different rates, equal
as floats (both compute the same Python expressions); resuming from a state dict; errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pykern as pk

torch = pytest.importorskip("torch")

SCHEDULES = {
    "StepLR": lambda L, o: L.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.3),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=12),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4),
    "LambdaLR": lambda L, o: L.LambdaLR(o, lambda e: 0.95 ** e),
    "SequentialLR": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=5), L.CosineAnnealingLR(o, T_max=20)],
        milestones=[5]),
    "SequentialLR-3": lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, 0.1, 3), L.ExponentialLR(o, 0.9), L.StepLR(o, 4, 0.5)],
        milestones=[4, 12]),
    "two-chained": lambda L, o: (L.StepLR(o, 5, 0.5), L.ExponentialLR(o, 0.97))[1],
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=40),
    "OneCycleLR-3-linear": lambda L, o: L.OneCycleLR(
        o, max_lr=0.5, epochs=4, steps_per_epoch=10, three_phase=True,
        anneal_strategy="linear"),
}


def optimizer(lib: object, name: str = "SGD", **kwargs: object) -> object:
    if lib is torch:
        a, b = torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)
    else:
        a, b = pk.zeros((2,)), pk.zeros((3,))
    return getattr(lib.optim, name)([{"params": [a]}, {"params": [b], "lr": 0.03}], lr=0.1,
                                    **kwargs)


def trace(lib: object, build, opt_name: str = "SGD", steps: int = 40, **kwargs: object
          ) -> tuple[list, list]:
    """The rates after creation and after each step, and each step's momenta (or beta1)."""
    opt = optimizer(lib, opt_name, **kwargs)
    schedule = build(lib.optim.lr_scheduler, opt)
    rates, momenta = [schedule.get_last_lr()], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note on the first step
        for _ in range(steps):
            opt.step()
            schedule.step()
            rates.append(schedule.get_last_lr())
            momenta.append([g["betas"][0] if "betas" in g else g["momentum"]
                            for g in opt.param_groups])
            assert [g["lr"] for g in opt.param_groups] == rates[-1]
    return rates, momenta


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_rates_match_torch(name):
    theirs = trace(torch, SCHEDULES[name], momentum=0.5)
    mine = trace(pk, SCHEDULES[name], momentum=0.5)
    assert mine == theirs


def test_one_cycle_cycles_adams_beta1_as_torch():
    build = SCHEDULES["OneCycleLR"]
    assert trace(pk, build, "Adam") == trace(torch, build, "Adam")
    with pytest.raises(ValueError, match="momentum or betas"):
        pk.optim.lr_scheduler.OneCycleLR(optimizer(pk, "Adagrad"), max_lr=0.1, total_steps=5)
    schedule = pk.optim.lr_scheduler.OneCycleLR(optimizer(pk), max_lr=0.1, total_steps=2)
    schedule.step()
    schedule.step()
    with pytest.raises(ValueError, match="total_steps is 2"):
        schedule.step()


def test_step_with_an_epoch_takes_the_closed_form_as_torch():
    for build in (SCHEDULES["StepLR"], SCHEDULES["CosineAnnealingLR"]):
        rates = []
        for lib in (torch, pk):
            schedule = build(lib.optim.lr_scheduler, optimizer(lib))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated in torch
                schedule.step(13)
            rates.append(schedule.get_last_lr())
        assert rates[0] == rates[1]


@pytest.mark.parametrize("name", ["CosineAnnealingLR", "SequentialLR", "MultiStepLR"])
def test_resumed_from_a_saved_state_dict_goes_on_as_uninterrupted(name, tmp_path):
    build = SCHEDULES[name]
    opt = optimizer(pk)
    schedule = build(pk.optim.lr_scheduler, opt)
    for _ in range(7):
        schedule.step()
    pk.save({"optimizer": opt.state_dict(), "schedule": schedule.state_dict()},
            tmp_path / "ckpt.safetensors")
    saved = pk.load(tmp_path / "ckpt.safetensors")
    again = optimizer(pk)
    resumed = build(pk.optim.lr_scheduler, again)
    again.load_state_dict(saved["optimizer"])
    resumed.load_state_dict(saved["schedule"])
    for _ in range(10):
        schedule.step()
        resumed.step()
        assert resumed.get_last_lr() == schedule.get_last_lr()
        assert [g["lr"] for g in again.param_groups] == [g["lr"] for g in opt.param_groups]


def test_a_schedule_drives_the_optimizers_steps():
    """SGD under StepLR(gamma=0.5): p after three epochs of unit gradients."""
    p = pk.zeros((4,))
    opt = pk.optim.SGD([p], lr=1.0)
    schedule = pk.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(3):
        p.grad = pk.ones((4,))
        opt.step()
        schedule.step()
    np.testing.assert_array_equal(p.numpy(), np.full(4, -1.75, np.float32))


@pytest.mark.parametrize("call,error,match", [
    (lambda L, o: L.StepLR(o, step_size=0), ValueError, "step_size"),
    (lambda L, o: L.LinearLR(o, start_factor=0.0), ValueError, "start_factor"),
    (lambda L, o: L.ConstantLR(o, factor=2.0), ValueError, "factor"),
    (lambda L, o: L.OneCycleLR(o, max_lr=0.1), ValueError, "total_steps"),
    (lambda L, o: L.OneCycleLR(o, max_lr=[0.1], total_steps=4), ValueError, "max_lr"),
    (lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2)], milestones=[3]), ValueError,
     "milestone"),
    (lambda L, o: L.SequentialLR(o, [L.StepLR(optimizer(pk), 2)], milestones=[]), ValueError,
     "another optimizer"),
    (lambda L, o: L.ExponentialLR("opt", 0.5), TypeError, "optimizer must be"),
    (lambda L, o: L.StepLR(o, 3, last_epoch=5), KeyError, "initial_lr"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call(pk.optim.lr_scheduler, optimizer(pk))
