"""`@pk.compile`: a replayed call gives what the eager call gives (forward passes, training
steps with SGD momentum, Adam, AdamW and a learning-rate scheduler, a small transformer,
autocast, dropout), results of earlier calls stay intact, a new signature records anew, and
what a replay cannot repeat is a `pk.GraphError` naming the user's line.

Every test runs on the host device and on lavapipe (skipped where there is no Vulkan device),
through the `device` fixture of tests/test_graph.py's kind.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import pykern as pk
import pykern.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from gpt_model import GPT, GPTConfig, loss_of  # noqa: E402

THIS = Path(__file__).name


@pytest.fixture(params=["host", "vulkan"])
def device(request):
    """The host device, then the first Vulkan device, made current for the test."""
    if request.param == "vulkan":
        yield request.getfixturevalue("on_vulkan")
        return
    previous = pk.get_device()
    host = pk.set_device("host")
    try:
        yield host
    finally:
        pk.set_device(previous.info.index)


def rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- functions of tensors


def test_a_forward_function_replays_on_new_arguments_and_keeps_old_results(device):
    rng = np.random.default_rng(0)
    w = pk.asarray(rand(rng, 16, 8))

    @pk.compile
    def f(x, y, scale=2.0):
        h = pk.relu(x @ w) * scale
        return h + y, {"sum": h.sum(axis=1)}

    results, expected = [], []
    for _ in range(6):
        x0, y0 = rand(rng, 4, 16), rand(rng, 4, 8)
        results.append(f(pk.asarray(x0), pk.asarray(y0)))
        h = np.maximum(x0 @ w.numpy(), 0) * 2.0
        expected.append((h + y0, h.sum(axis=1)))
    assert f.replays >= 3  # the first calls record, the later ones replay
    for (out, extra), (e_out, e_sum) in zip(results, expected):  # none overwritten since
        np.testing.assert_allclose(out.numpy(), e_out, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(extra["sum"].numpy(), e_sum, rtol=1e-5, atol=1e-4)


def test_a_forward_function_replays_from_its_second_call(device):
    rng = np.random.default_rng(10)
    w, b = rand(rng, 6, 3), rand(rng, 3)
    wt, bt = pk.asarray(w), pk.asarray(b)
    runs = [0]

    @pk.compile
    def forward(x):
        runs[0] += 1  # the Python body: run by the recording only
        return pk.tanh(x @ wt + bt) * 2.75 - 0.125

    inputs = [rand(rng, 5, 6) for _ in range(3)]
    results = [forward(pk.asarray(x)) for x in inputs]
    assert runs[0] == 1 and forward.recorded_calls == 1 and forward.replays == 2
    for x, out in zip(inputs, results):  # each call's own values, none overwritten since
        np.testing.assert_allclose(out.numpy(), np.tanh(x @ w + b) * 2.75 - 0.125,
                                   rtol=1e-5, atol=1e-5)


def test_the_second_call_is_one_submit_on_vulkan(on_vulkan):
    device = on_vulkan
    rng = np.random.default_rng(11)
    w = pk.asarray(rand(rng, 8, 4))

    @pk.compile
    def forward(x, y):
        return F.softmax(pk.relu(x @ w) + y, dim=-1)

    first = forward(pk.asarray(rand(rng, 3, 8)), pk.asarray(rand(rng, 3, 4)))
    x0, y0 = rand(rng, 3, 8), rand(rng, 3, 4)
    x, y = pk.asarray(x0), pk.asarray(y0)
    pk.sync()
    before = device.stats().submits
    out = forward(x, y)
    assert device.stats().submits == before + 1 and forward.replays == 1
    z = np.maximum(x0 @ w.numpy(), 0) + y0
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(axis=-1, keepdims=True), rtol=1e-5,
                               atol=1e-6)
    assert first.numpy().shape == (3, 4)


def test_a_cache_filled_on_the_first_call_is_not_replayed_as_new(device):
    cache: dict = {}
    runs = [0]

    @pk.compile
    def f(x):
        runs[0] += 1
        if "first" not in cache:  # state made by the first call: later calls read it
            cache["first"] = x * 3.0
        return x + cache["first"]

    values = [1.0, 2.0, 5.0, 7.0]
    outs = [f(pk.full(4, v)) for v in values]
    for v, out in zip(values, outs):  # eager: v + 3 * (the first call's x)
        np.testing.assert_array_equal(out.numpy(), np.full(4, v + 3.0))
    assert runs[0] == 2 and f.replays == 2  # the second call (no state made) is replayed on


def test_dropout_replays_from_the_second_call_with_the_eager_masks(device):
    drop = pk.nn.Dropout(0.5)  # in training mode: a new mask on every call

    @pk.compile
    def f(x):
        return drop(x) + 1.0

    x = pk.ones(256)
    pk.random.seed(21)
    compiled = [f(x).numpy() for _ in range(3)]
    pk.random.seed(21)
    eager = [(drop(x) + 1.0).numpy() for _ in range(3)]
    assert f.replays == 2
    for c, e in zip(compiled, eager):
        np.testing.assert_array_equal(c, e)
    assert not np.array_equal(compiled[1], compiled[2])  # the generator moved on


def test_a_new_signature_records_anew(device):
    calls = []

    @pk.compile
    def f(x, k):
        calls.append(x.shape)  # Python runs only while recording
        return x * k

    for _ in range(4):
        np.testing.assert_array_equal(f(pk.ones(5), 3.0).numpy(), np.full(5, 3.0))
    recorded = len(calls)
    assert recorded <= 3 and f.replays == 4 - recorded
    np.testing.assert_array_equal(f(pk.ones((2, 3)), 3.0).numpy(), np.full((2, 3), 3.0))
    np.testing.assert_array_equal(f(pk.ones(5), 4.0).numpy(), np.full(5, 4.0))  # by value
    np.testing.assert_array_equal(f(pk.ones(5, dtype=pk.f64), 3.0).numpy(), np.full(5, 3.0))
    assert len(calls) == recorded + 3
    np.testing.assert_array_equal(f(pk.full(5, 2.0), 3.0).numpy(), np.full(5, 6.0))
    assert len(calls) == recorded + 3  # the first signature replays still


def test_arguments_written_in_place_and_returned_as_they_are(device):
    @pk.compile
    def f(x, y):
        x += y  # eager writes the caller's tensor
        return x, y * 2.0

    for i in range(5):
        x, y = pk.full(4, float(i)), pk.ones(4)
        rx, ry = f(x, y)
        assert rx is x
        np.testing.assert_array_equal(x.numpy(), np.full(4, i + 1.0))
        np.testing.assert_array_equal(ry.numpy(), np.full(4, 2.0))


def test_one_submit_per_replayed_call_on_vulkan(on_vulkan):
    device = on_vulkan

    @pk.compile
    def f(x):
        for _ in range(10):
            x = x * 1.5 + 1.0
        return x

    x = pk.ones(64)
    for _ in range(4):
        f(x)
    pk.sync()
    before = device.stats().submits
    out = f(x)
    assert device.stats().submits == before + 1
    assert float(out[0]) == pytest.approx(_chain(1.0), rel=1e-6)


def _chain(v: float) -> float:
    for _ in range(10):
        v = v * 1.5 + 1.0
    return v


# ---------------------------------------------------------------- training steps


def _mlp(seed: int) -> pk.nn.Module:
    rng = np.random.default_rng(seed)
    model = pk.nn.Sequential(pk.nn.Linear(12, 24), pk.nn.ReLU(), pk.nn.Linear(24, 5))
    with pk.no_grad():
        for p in model.parameters():
            p[...] = pk.asarray(rand(rng, *p.shape) * 0.3)
    return model


def _step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


OPTIMIZERS = {
    "sgd_momentum": lambda ps: (pk.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
                                None),
    "adam": lambda ps: (pk.optim.Adam(ps, lr=1e-2), None),
    "adamw_cosine": lambda ps: _with_schedule(pk.optim.AdamW(ps, lr=1e-2, weight_decay=0.1)),
}


def _with_schedule(opt):
    return opt, pk.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)


@pytest.mark.parametrize("which", sorted(OPTIMIZERS))
def test_compiled_training_gives_the_eager_losses_step_by_step(device, which):
    rng = np.random.default_rng(1)
    models = [_mlp(2), _mlp(2)]
    opts = [OPTIMIZERS[which](m.parameters()) for m in models]
    compiled = pk.compile(_step)
    for _ in range(6):
        x0, y0 = rand(rng, 8, 12), rng.integers(0, 5, 8).astype(np.int32)
        losses = []
        for (model, (opt, sched)), step in zip(zip(models, opts), (compiled, _step)):
            losses.append(float(step(model, opt, pk.asarray(x0), pk.asarray(y0))))
            if sched is not None:
                sched.step()
        # the same launches on the same values: the same bits, not merely close ones
        assert losses[0] == losses[1]
    assert compiled.replays >= 3
    for pc, pe in zip(models[0].parameters(), models[1].parameters()):
        np.testing.assert_allclose(pc.numpy(), pe.numpy(), rtol=1e-6, atol=1e-7)
    # the optimizer's own count of steps moved on with every replay
    assert opts[0][0].state_dict()["state"].keys() == opts[1][0].state_dict()["state"].keys()
    if which != "sgd_momentum":
        assert float(opts[0][0].state_dict()["state"][0]["step"]) == 6.0


@pytest.mark.parametrize("which", ["sgd_momentum", "adamw"])
def test_training_matches_eager_parameters_after_every_step(device, which):
    make = {"sgd_momentum": lambda ps: pk.optim.SGD(ps, lr=0.1, momentum=0.9),
            "adamw": lambda ps: pk.optim.AdamW(ps, lr=1e-2, weight_decay=0.1)}[which]
    rng = np.random.default_rng(12)
    models = [_mlp(13), _mlp(13)]
    opts = [make(m.parameters()) for m in models]
    compiled = pk.compile(_step)
    for _ in range(5):
        x0, y0 = rand(rng, 8, 12), rng.integers(0, 5, 8).astype(np.int32)
        lc = float(compiled(models[0], opts[0], pk.asarray(x0), pk.asarray(y0)))
        le = float(_step(models[1], opts[1], pk.asarray(x0), pk.asarray(y0)))
        assert lc == pytest.approx(le, rel=1e-6)
        for pc, pe in zip(models[0].parameters(), models[1].parameters()):
            np.testing.assert_allclose(pc.numpy(), pe.numpy(), rtol=1e-6, atol=1e-7)
    # the first step made the optimizer's state: it was recorded again, then replayed
    assert compiled.recorded_calls >= 2 and compiled.replays >= 1
    states = [o.state_dict()["state"] for o in opts]
    for key in states[1]:
        for name, value in states[1][key].items():
            np.testing.assert_allclose(np.asarray(states[0][key][name]), np.asarray(value),
                                       rtol=1e-6, atol=1e-7, err_msg=f"{key} {name}")


def test_a_small_transformer_with_adamw_and_a_schedule(device):
    cfg = GPTConfig(vocab=11, context=8, layers=1, d_model=16, heads=2)
    rng = np.random.default_rng(3)
    pk.random.seed(5)
    models = [GPT(cfg), GPT(cfg)]
    models[1].load_state_dict(models[0].state_dict())
    opts = [pk.optim.AdamW(m.parameters(), lr=3e-3) for m in models]
    scheds = [pk.optim.lr_scheduler.LinearLR(o, start_factor=0.2, total_iters=4) for o in opts]

    def step(model, opt, sched, x, y):
        loss = loss_of(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()  # inside: a replay steps the schedule too
        return loss

    compiled = pk.compile(step)
    for _ in range(5):
        ids = rng.integers(0, cfg.vocab, (2, cfg.context + 1)).astype(np.int32)
        x, y = ids[:, :-1], ids[:, 1:]
        lc = compiled(models[0], opts[0], scheds[0], pk.asarray(x), pk.asarray(y))
        le = step(models[1], opts[1], scheds[1], pk.asarray(x), pk.asarray(y))
        assert float(lc) == pytest.approx(float(le), rel=1e-6)
    assert compiled.replays >= 2
    assert opts[0].param_groups[0]["lr"] == opts[1].param_groups[0]["lr"]
    for pc, pe in zip(models[0].parameters(), models[1].parameters()):
        np.testing.assert_allclose(pc.numpy(), pe.numpy(), rtol=1e-6, atol=1e-7)


def test_autocast_dropout_and_a_mode_switch(device):
    rng = np.random.default_rng(4)
    models = [_mlp(6), _mlp(6)]
    nets = [pk.nn.Sequential(m, pk.nn.Dropout(0.25)) for m in models]
    opts = [pk.optim.SGD(n.parameters(), lr=0.05) for n in nets]

    def step(net, opt, x, y):
        with pk.autocast(dtype=pk.bf16):
            out = net(x)
        loss = F.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    compiled = pk.compile(step)
    x0, y0 = rand(rng, 8, 12), rng.integers(0, 5, 8).astype(np.int32)
    for mode in ("train", "train", "train", "eval", "eval", "train", "eval", "eval"):
        losses = []
        for net, opt, fn in zip(nets, opts, (compiled, step)):
            getattr(net, mode)()
            pk.random.seed(9)  # the same dropout masks for both
            losses.append(float(fn(net, opt, pk.asarray(x0), pk.asarray(y0))))
        assert losses[0] == pytest.approx(losses[1], rel=1e-6), mode
    assert compiled.replays >= 2
    for pc, pe in zip(nets[0].parameters(), nets[1].parameters()):
        np.testing.assert_allclose(pc.numpy(), pe.numpy(), rtol=1e-6, atol=1e-7)


def test_gradients_cleared_outside_the_compiled_step(device):
    rng = np.random.default_rng(7)
    models = [_mlp(8), _mlp(8)]
    opts = [pk.optim.SGD(m.parameters(), lr=0.1, momentum=0.5) for m in models]

    def half_step(model, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    compiled = pk.compile(half_step)
    for i in range(10):
        x0, y0 = rand(rng, 8, 12), rng.integers(0, 5, 8).astype(np.int32)
        for model, opt, fn in zip(models, opts, (compiled, half_step)):
            if i % 2 == 0:  # gradients of two calls accumulate, then a step
                opt.zero_grad()
            fn(model, pk.asarray(x0), pk.asarray(y0))
            if i % 2 == 1:
                opt.step()
    assert compiled.replays >= 2  # each pattern of .grad recorded once, then replayed
    for pc, pe in zip(models[0].parameters(), models[1].parameters()):
        np.testing.assert_allclose(pc.numpy(), pe.numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(pc.grad.numpy(), pe.grad.numpy(), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- what is refused


READS = {
    "float": lambda t: float(t.sum()),
    "item": lambda t: t.sum().item(),
    "numpy": lambda t: t.numpy(),
    "print": lambda t: print(t),
    "if": lambda t: 1 if t.sum() > 0 else 0,
}


@pytest.mark.parametrize("how", sorted(READS))
def test_a_host_read_inside_is_refused_at_its_line(device, how):
    read = READS[how]

    @pk.compile
    def f(x):
        y = x * 2.0
        read(y)
        return y

    with pytest.raises(pk.GraphError, match=rf"{THIS}:\d+: .*lambda t") as e:
        f(pk.ones(4))
    assert "host" in str(e.value)
    np.testing.assert_array_equal((pk.ones(4) * 3.0).numpy(), np.full(4, 3.0))  # still works


def test_the_line_of_a_host_read_is_the_users(device):
    @pk.compile
    def f(x):
        y = x + 1.0
        value = float(y[0])  # the line named
        return y * value

    with pytest.raises(pk.GraphError) as e:
        f(pk.ones(4))
    assert f"{THIS}:" in str(e.value) and "value = float(y[0])" in str(e.value)


PER_CALL = {  # a value that changes per call, baked into a call that is recorded twice
    "uploaded": lambda x, n: x * pk.asarray(np.full(4, n, np.float32)),  # host data inside
    "in a training step": lambda x, n: _learn(x, n),
}


def _learn(x, n):
    w = PARAMS[0]
    loss = (x * w).sum() * float(n)  # the scalar is baked into a launch
    w.grad = None
    loss.backward()
    with pk.no_grad():
        w -= 0.1 * w.grad
    return loss


PARAMS: list = []


@pytest.mark.parametrize("how", sorted(PER_CALL))
def test_a_python_value_that_changes_per_call_is_refused(device, how):
    counter = [0]
    PARAMS[:] = [pk.ones(4, requires_grad=True)]

    @pk.compile
    def f(x):
        counter[0] += 1
        return PER_CALL[how](x, counter[0])  # differs on every call

    with pytest.raises(pk.GraphError, match="different on every call") as e:
        for _ in range(3):
            f(pk.ones(4))
    assert f"{THIS}:" in str(e.value)


def test_a_result_that_needs_autograd_is_refused(device):
    w = pk.ones(4, requires_grad=True)

    @pk.compile
    def f(x):
        return (x * w).sum()

    with pytest.raises(pk.GraphError, match="requires grad"):
        f(pk.ones(4))
    with pk.no_grad():  # without gradients it is a plain forward pass
        assert float(f(pk.ones(4))) == 4.0


def test_python_values_among_the_results_must_stay_the_same(device):
    calls = [0]

    @pk.compile
    def constant(x):
        return x * 2.0, "doubled", 2

    for _ in range(4):
        out, what, factor = constant(pk.ones(3))
        assert (what, factor) == ("doubled", 2)
        np.testing.assert_array_equal(out.numpy(), np.full(3, 2.0))

    @pk.compile
    def counting(x):
        calls[0] += 1
        return x * 2.0, calls[0]  # a value a replay could not give

    with pytest.raises(pk.GraphError, match="returns besides tensors"):
        for _ in range(3):
            counting(pk.ones(3))
