"""pk.optim beyond the update rules: one step kernel launch per dtype, zero_grad, the state
dict round trip, parameters moved into the flat storage (and back in when replaced), and
bad arguments."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.optim.grads import get_grad, set_grad


def params_of_two_dtypes() -> list[pk.Tensor]:
    rng = np.random.default_rng(0)
    shapes = [(4, 4), (10,), (3, 70), (), (5,)]
    f32 = [pk.asarray(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    f16 = [pk.asarray(rng.standard_normal(s).astype(np.float16)) for s in shapes]
    return f32 + f16


@pytest.mark.parametrize("make", [lambda ps: pk.optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: pk.optim.AdamW(ps)])
def test_one_step_launch_per_dtype_with_gradients_in_place(make, launches):
    params = params_of_two_dtypes()
    opt = make(params)
    for p in params:
        set_grad(p, pk.zeros(p.shape, p.dtype))
    opt.zero_grad(set_to_none=False)  # gradients become views of the flat gradient buffers
    for p in params:
        get_grad(p)[...] = 1.0
    opt.step()  # the first step also zero-fills the state buffers it creates
    before = [p.numpy() for p in params]
    del launches[:]
    opt.step()
    assert len(launches) == 2  # f32 and f16: one fused kernel each, nothing else
    assert len(set(map(id, launches))) == 2
    for p, b in zip(params, before):
        assert not np.array_equal(p.numpy(), b)


def test_separate_gradients_cost_one_gather_copy_each(launches, copies):
    params = params_of_two_dtypes()
    opt = pk.optim.SGD(params, lr=0.1)
    grads = [pk.ones(p.shape, p.dtype) for p in params]
    for p, g in zip(params, grads):
        set_grad(p, g)
    set_grad(params[1], None)
    with_values = [p for p in params if p.size and p is not params[1]]
    for _ in range(2):  # the same gradients again: gathered again (they may have changed)
        del launches[:], copies[:]
        opt.step()  # SGD without momentum has no state to create
        assert len(launches) == 2  # the step kernels, f32 and f16
        # a plain buffer copy per gradient (same dtype, contiguous)
        assert sorted(copies) == sorted(p.nbytes for p in with_values)
        for p in params:
            if p is not params[1]:
                np.testing.assert_array_equal(get_grad(p).numpy(), np.ones(p.shape, p.dtype.numpy))


def test_a_strided_or_other_dtype_gradient_is_gathered_by_the_assignment():
    p = pk.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    opt = pk.optim.SGD([p], lr=1.0)
    for g in (pk.asarray(np.ones((4, 3), np.float32)).mT,  # strided
              pk.asarray(np.ones((3, 4), np.float16))):  # another dtype
        before = p.numpy()
        set_grad(p, g)
        opt.step()
        np.testing.assert_array_equal(p.numpy(), before - 1.0)


def test_no_gradient_at_all_launches_nothing(launches):
    params = params_of_two_dtypes()
    opt = pk.optim.AdamW(params)
    before = [p.numpy() for p in params]
    del launches[:]
    opt.step()
    assert launches == []
    assert all(np.array_equal(p.numpy(), b) for p, b in zip(params, before))
    assert opt.state_dict()["state"] == {}


def test_zero_grad_sets_gradients_to_none_or_zero():
    params = params_of_two_dtypes()
    opt = pk.optim.SGD(params, lr=0.1)
    for p in params[:3]:
        set_grad(p, pk.ones(p.shape, p.dtype))
    opt.zero_grad(set_to_none=False)
    for p in params[:3]:
        g = get_grad(p)
        assert g.shape == p.shape and g.dtype == p.dtype
        np.testing.assert_array_equal(g.numpy(), np.zeros(p.shape))
    assert all(get_grad(p) is None for p in params[3:])  # as torch: None stays None
    opt.zero_grad()
    assert all(get_grad(p) is None for p in params)


def test_parameters_keep_their_values_shapes_and_identity():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 4)).astype(np.float32)
    p = pk.asarray(base)[:, 1:3]  # non-contiguous
    q = pk.asarray(base[0])
    opt = pk.optim.SGD([p, q], lr=1.0)
    assert p.buffer is q.buffer and p.is_contiguous  # moved into the flat storage
    np.testing.assert_array_equal(p.numpy(), base[:, 1:3])
    np.testing.assert_array_equal(q.numpy(), base[0])
    set_grad(p, pk.ones(p.shape))
    opt.step()
    np.testing.assert_array_equal(p.numpy(), base[:, 1:3] - 1)
    np.testing.assert_array_equal((p * 2).numpy(), (base[:, 1:3] - 1) * 2)


def test_parameter_given_new_storage_is_moved_back_in():
    p = pk.asarray(np.zeros(5, np.float32))
    opt_a = pk.optim.SGD([p], lr=1.0)
    opt_b = pk.optim.SGD([p], lr=2.0)  # re-points p into opt_b's storage
    set_grad(p, pk.ones(5))
    opt_a.step()  # must update p, not opt_a's stale copy
    np.testing.assert_array_equal(p.numpy(), np.full(5, -1.0, np.float32))
    opt_b.step()
    np.testing.assert_array_equal(p.numpy(), np.full(5, -3.0, np.float32))


@pytest.mark.parametrize("make", [
    lambda ps: pk.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01),
    lambda ps: pk.optim.AdamW([{"params": ps[:5]}, {"params": ps[5:], "lr": 0.01}]),
])
def test_state_dict_round_trip_continues_identically(make):
    rng = np.random.default_rng(2)
    grads = [[rng.standard_normal(p.shape).astype(p.dtype.numpy) for p in
              params_of_two_dtypes()] for _ in range(6)]

    def step(opt, params, k):
        for p, g in zip(params, grads[k]):
            set_grad(p, pk.asarray(g))
        set_grad(params[2], None if k == 1 else get_grad(params[2]))
        opt.step()

    one = params_of_two_dtypes()
    opt = make(one)
    for k in range(3):
        step(opt, one, k)
    saved = opt.state_dict()
    snapshot = {i: {k: v.numpy() for k, v in s.items()} for i, s in saved["state"].items()}
    groups = [dict(g) for g in saved["param_groups"]]
    two = [pk.asarray(p.numpy()) for p in one]
    again = make(two)
    again.load_state_dict({"state": snapshot, "param_groups": groups})
    for k in range(3, 6):
        step(opt, one, k)
        step(again, two, k)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert again.state_dict()["param_groups"] == opt.state_dict()["param_groups"]


def test_state_dict_layout_is_torchs():
    p = pk.asarray(np.ones((2, 3), np.float32))
    opt = pk.optim.AdamW([p], lr=0.5)
    set_grad(p, pk.ones((2, 3)))
    opt.step()
    opt.step()
    sd = opt.state_dict()
    assert sd["param_groups"] == [{"lr": 0.5, "betas": (0.9, 0.999), "eps": 1e-8,
                                   "weight_decay": 0.01, "amsgrad": False, "maximize": False,
                                   "foreach": None, "capturable": False,
                                   "differentiable": False, "fused": None,
                                   "decoupled_weight_decay": True, "params": [0]}]
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    assert sd["state"][0]["step"].item() == 2.0
    np.testing.assert_allclose(sd["state"][0]["exp_avg"].numpy(), np.full((2, 3), 0.19),
                               rtol=1e-6)
    sgd = pk.optim.SGD([pk.asarray(np.ones(3, np.float32))], lr=0.1)
    assert sgd.state_dict()["state"] == {}  # no momentum: no state, as torch


def test_load_state_dict_rejects_a_mismatch():
    p = pk.asarray(np.ones(3, np.float32))
    opt = pk.optim.SGD([p], lr=0.1, momentum=0.5)
    with pytest.raises(ValueError, match="parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    bad = {"state": {0: {"momentum_buffer": np.ones(4, np.float32)}},
           "param_groups": [{"lr": 0.1, "momentum": 0.5, "weight_decay": 0.0, "params": [0]}]}
    with pytest.raises(ValueError, match="momentum_buffer of parameter 0 has shape"):
        opt.load_state_dict(bad)


@pytest.mark.parametrize("call,error,match", [
    (lambda p: pk.optim.SGD([p], lr=-0.1), ValueError, "SGD: lr must be >= 0"),
    (lambda p: pk.optim.SGD([p], lr=0.1, momentum=-1), ValueError, "momentum"),
    (lambda p: pk.optim.SGD([p], lr=0.1, weight_decay=float("nan")), ValueError,
     "weight_decay"),
    (lambda p: pk.optim.SGD([p], lr="fast"), TypeError, "lr must be a number"),
    (lambda p: pk.optim.AdamW([p], lr=-1e-3), ValueError, "AdamW: lr"),
    (lambda p: pk.optim.AdamW([p], betas=(1.0, 0.999)), ValueError, r"betas\[0\]"),
    (lambda p: pk.optim.AdamW([p], betas=(0.9, -0.1)), ValueError, r"betas\[1\]"),
    (lambda p: pk.optim.AdamW([p], betas=0.9), TypeError, "betas must be a pair"),
    (lambda p: pk.optim.AdamW([p], eps=-1.0), ValueError, "eps"),
    (lambda p: pk.optim.AdamW([p, np.ones(3)]), TypeError, r"params\[1\] is a ndarray"),
    (lambda p: pk.optim.AdamW(p), TypeError, "params must be an iterable"),
    (lambda p: pk.optim.AdamW([]), ValueError, "empty"),
    (lambda p: pk.optim.AdamW([p, p]), ValueError, "more than once"),
    (lambda p: pk.optim.AdamW([pk.asarray(np.ones(3, np.int32))]), TypeError, "i32"),
    (lambda p: pk.optim.SGD([{"params": [p], "lr": -2}], lr=0.1), ValueError, "lr"),
])
def test_bad_arguments_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(pk.asarray(np.ones(3, np.float32)))


def test_gradient_of_the_wrong_shape_is_refused():
    p = pk.asarray(np.ones(3, np.float32))
    opt = pk.optim.SGD([p], lr=0.1)
    set_grad(p, pk.ones(4))
    with pytest.raises(ValueError, match=r"shape \(3,\) has shape \(4,\)"):
        opt.step()


def test_a_dtype_past_the_buffer_limit_gets_several_stores(monkeypatch, launches):
    # 1,280 bytes per store; segments are padded to 64 elements (256 bytes of f32)
    monkeypatch.setattr(pk.optim.optimizer, "store_limit", lambda: 1280)
    rng = np.random.default_rng(3)
    host = [rng.standard_normal(s).astype(np.float32) for s in [(256,), (200,), (64,), (100,)]]
    params = [pk.asarray(h) for h in host]
    opt = pk.optim.SGD(params, lr=0.5)
    for p in params:
        set_grad(p, pk.ones(p.shape))
    opt.zero_grad(set_to_none=False)
    for p in params:
        get_grad(p)[...] = 1.0
    del launches[:]
    opt.step()
    assert len(launches) == 3  # stores [256] [200, 64] [100]: 1024, 1024 + 256, 512 bytes
    for p, h in zip(params, host):
        np.testing.assert_array_equal(p.numpy(), h - 0.5)
    with pytest.raises(ValueError, match="exceeds the device's buffer limit"):
        pk.optim.SGD([pk.zeros(1000)], lr=0.1)


def test_zero_size_parameters_and_group_extras_are_kept():
    empty = pk.zeros((2, 0))
    p = pk.asarray(np.ones(3, np.float32))
    opt = pk.optim.SGD([{"params": [empty, p], "initial_lr": 0.3}], lr=0.1)
    set_grad(empty, pk.zeros((2, 0)))
    set_grad(p, pk.ones(3))
    opt.step()
    assert empty.shape == (2, 0) and empty.numpy().shape == (2, 0)
    np.testing.assert_allclose(p.numpy(), np.full(3, 0.9, np.float32))
    assert opt.param_groups[0]["initial_lr"] == 0.3
    assert opt.state_dict()["param_groups"][0]["initial_lr"] == 0.3


def test_step_calls_the_closure_first_and_returns_its_loss():
    p = pk.asarray(np.zeros(2, np.float32))
    opt = pk.optim.SGD([p], lr=1.0)
    calls = []

    def closure():
        calls.append(p.numpy().copy())
        set_grad(p, pk.ones(2))
        return 7.5

    assert opt.step(closure) == 7.5
    np.testing.assert_array_equal(calls[0], [0, 0])  # before the update
    np.testing.assert_array_equal(p.numpy(), [-1, -1])


def test_load_state_dict_from_json_like_keys():
    # a state dict read back from JSON metadata: string keys, lists for tuples
    p = pk.asarray(np.ones(3, np.float32))
    opt = pk.optim.AdamW([p])
    opt.load_state_dict({"state": {"0": {"step": 4.0, "exp_avg": np.full(3, 0.5),
                                         "exp_avg_sq": np.full(3, 0.25)}},
                         "param_groups": [{"lr": 0.1, "betas": [0.5, 0.75], "eps": 1e-8,
                                           "weight_decay": 0.0, "params": [0]}]})
    assert opt.param_groups[0]["betas"] == (0.5, 0.75)
    sd = opt.state_dict()["state"][0]
    assert sd["step"].item() == 4.0
    np.testing.assert_array_equal(sd["exp_avg"].numpy(), np.full(3, 0.5, np.float32))
    set_grad(p, pk.zeros(3))
    opt.step()  # step 5: m = 0.25, v = 0.1875
    m, v = 0.25, 0.1875
    expected = 1 - 0.1 / (1 - 0.5**5) * m / (np.sqrt(v) / np.sqrt(1 - 0.75**5) + 1e-8)
    np.testing.assert_allclose(p.numpy(), np.full(3, expected), rtol=1e-6)
