"""`pk.graph()`: a replay after the captured inputs' contents change gives what running the
block again eagerly gives (elementwise chains, matmul, reductions, a user kernel, uploads, a
training step), many times over; reading results after a replay waits for it; what cannot be
recorded is refused inside the block with a `pk.GraphError`, and the device stays usable.

Every test runs on the host device and on lavapipe (skipped where there is no Vulkan device).
The synchronisation-validated replay test is tests/runtime/test_graph_replay.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
import pykern.nn.functional as F


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


@pk.kernel
def saxpy(a: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i] + y[i]


def test_an_elementwise_chain_replays_on_new_inputs(device):
    rng = np.random.default_rng(0)
    x0, y0 = rand(rng, 1000), rand(rng, 1000)
    x, y = pk.asarray(x0), pk.asarray(y0)
    with pk.graph() as g:
        z = pk.exp(pk.relu(x * 0.5 - y)) + pk.tanh(y) * x
    assert g.launches >= 5
    expected = lambda a, b: np.exp(np.maximum(a * 0.5 - b, 0)) + np.tanh(b) * a  # noqa: E731
    np.testing.assert_allclose(z.numpy(), expected(x0, y0), rtol=1e-5, atol=1e-6)
    for _ in range(5):  # many replays, each on new contents
        x1, y1 = rand(rng, 1000), rand(rng, 1000)
        x[...] = pk.asarray(x1)
        y[...] = pk.asarray(y1)
        g.replay()
        np.testing.assert_allclose(z.numpy(), expected(x1, y1), rtol=1e-5, atol=1e-6)


def test_matmul_and_reductions_replay(device):
    rng = np.random.default_rng(1)
    a, b = pk.asarray(rand(rng, 48, 40)), pk.asarray(rand(rng, 40, 24))
    with pk.graph() as g:
        c = a @ b
        rows = pk.sum(c, axis=1)
        top = pk.max(c)
        mean = pk.mean(c * c)
    for _ in range(3):
        a0, b0 = rand(rng, 48, 40), rand(rng, 40, 24)
        a[...] = pk.asarray(a0)
        b[...] = pk.asarray(b0)
        g.replay()
        ref = a0.astype(np.float64) @ b0
        np.testing.assert_allclose(c.numpy(), ref, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(rows.numpy(), ref.sum(axis=1), rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(top.numpy(), ref.max(), rtol=1e-5)
        np.testing.assert_allclose(mean.numpy(), (ref * ref).mean(), rtol=1e-4)


def test_a_user_kernel_replays_and_later_launches_see_its_results(device):
    rng = np.random.default_rng(2)
    n = 4096
    x, y, out = pk.asarray(rand(rng, n)), pk.asarray(rand(rng, n)), pk.empty(n)
    with pk.graph() as g:
        saxpy[n](3.0, x, y, out)
        saxpy[n](-1.0, out, x, y)  # reads what the launch before wrote: a barrier in between
    x0, y0 = rand(rng, n), rand(rng, n)
    x[...] = pk.asarray(x0)
    y[...] = pk.asarray(y0)
    g.replay()
    after = out * 2.0  # queued behind the replay, reading what it wrote
    first = 3.0 * x0 + y0
    np.testing.assert_allclose(after.numpy(), 2 * first, rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), -first + x0, rtol=1e-5, atol=1e-6)
    g.replay()  # again, without new inputs: y was overwritten, so the results move on
    second = 3.0 * x0 + (-first + x0)
    np.testing.assert_allclose(out.numpy(), second, rtol=1e-5, atol=1e-5)


@pk.kernel
def fill_seven(x: pk.f32[:]):
    x[pk.global_id(0)] = 7.0


def test_a_launch_past_its_arrays_end_replays_as_it_ran(device):
    """Writes past the end are dropped, in a replay as in the launch recorded, and the launches
    after it replay too (on the host device, the workgroups whose bounds proof fails take the
    checked code in the middle of a replayed run of launches)."""
    b, out = pk.zeros(64), pk.zeros(64)
    neighbour = pk.asarray(np.arange(64, dtype=np.float32))
    with pk.graph() as g:
        fill_seven[256](b)
        saxpy[64](2.0, b, neighbour, out)
    for _ in range(4):  # the later replays, once the host's choices are made, differ
        b[...] = 0.0
        out[...] = 0.0
        g.replay()
        np.testing.assert_array_equal(b.numpy(), np.full(64, 7.0, np.float32))
        np.testing.assert_array_equal(out.numpy(), 14.0 + np.arange(64, dtype=np.float32))
        np.testing.assert_array_equal(neighbour.numpy(), np.arange(64, dtype=np.float32))


def test_replays_queue_without_waiting_and_results_wait_for_the_last(device):
    x = pk.asarray(np.zeros(256, np.float32))
    with pk.graph() as g:
        x += 1.0
    for _ in range(20):
        g.replay()
    np.testing.assert_array_equal(x.numpy(), np.full(256, 21.0, np.float32))


def test_an_upload_inside_the_block_is_replayed_from_the_captured_bytes(device):
    x = pk.asarray(np.arange(6, dtype=np.float32))
    with pk.graph() as g:
        c = pk.asarray(np.array([10, 20, 30, 40, 50, 60], np.float32))
        y = x + c
    c[...] = 0.0  # a replay uploads the captured bytes again before using c
    x[...] = pk.asarray(np.ones(6, np.float32))
    g.replay()
    np.testing.assert_array_equal(c.numpy(), [10, 20, 30, 40, 50, 60])
    np.testing.assert_array_equal(y.numpy(), [11, 21, 31, 41, 51, 61])


def _mlp(seed: int) -> pk.nn.Module:
    rng = np.random.default_rng(seed)
    model = pk.nn.Sequential(pk.nn.Linear(16, 32), pk.nn.ReLU(), pk.nn.Linear(32, 5))
    with pk.no_grad():
        for p in model.parameters():
            p[...] = pk.asarray(rand(rng, *p.shape) * 0.3)
    return model


def _step(model: pk.nn.Module, opt: pk.optim.Optimizer, x: pk.Tensor, y: pk.Tensor
          ) -> pk.Tensor:
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def test_a_training_step_replayed_equals_the_eager_step(device):
    rng = np.random.default_rng(3)
    captured, eager = _mlp(4), _mlp(4)
    opt_c = pk.optim.SGD(captured.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    opt_e = pk.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    x, y = pk.asarray(rand(rng, 8, 16)), pk.asarray(rng.integers(0, 5, 8).astype(np.int32))
    # one eager step first: momentum's first step differs from the later ones, and a replay
    # repeats the captured step's scalars (docs/performance.md, "Recorded graphs")
    _step(captured, opt_c, x, y)
    _step(eager, opt_e, x, y)
    with pk.graph() as g:  # the capture runs the step once, as the eager model does
        loss = _step(captured, opt_c, x, y)
    losses = [float(_step(eager, opt_e, x, y))]
    assert float(loss) == pytest.approx(losses[0], rel=1e-6)
    # six replays: on the host device the later ones make the launches and the gradient
    # gather's copies between them by one native call, once each launch's thread is decided
    for _ in range(6):
        x0, y0 = rand(rng, 8, 16), rng.integers(0, 5, 8).astype(np.int32)
        x[...] = pk.asarray(x0)
        y[...] = pk.asarray(y0)
        g.replay()
        eager_loss = _step(eager, opt_e, pk.asarray(x0), pk.asarray(y0))
        assert float(loss) == pytest.approx(float(eager_loss), rel=1e-5)
        for pc, pe in zip(captured.parameters(), eager.parameters(), strict=True):
            np.testing.assert_allclose(pc.numpy(), pe.numpy(), rtol=1e-5, atol=1e-6)


# ---- what is refused, and the device after it ----


def test_reading_a_result_inside_the_block_is_refused(device):
    x = pk.asarray(np.ones(8, np.float32))
    before = x.numpy()  # an input, not a result of the block: readable
    with pytest.raises(pk.GraphError, match="reads a result of the launches being recorded"):
        with pk.graph() as g:
            y = x + 1.0
            float(y.sum())
    with pytest.raises(pk.GraphError, match="block raised"):
        g.replay()
    np.testing.assert_array_equal((x * 3.0).numpy(), before * 3.0)  # the device still works


def test_sync_nested_graphs_and_device_changes_are_refused(device):
    x = pk.asarray(np.ones(8, np.float32))
    with pytest.raises(pk.GraphError, match="sync"):
        with pk.graph():
            x + 1.0
            pk.sync()
    with pytest.raises(pk.GraphError, match="do not nest"):
        with pk.graph():
            with pk.graph():
                pass
    with pytest.raises(pk.GraphError, match="set_device"):
        with pk.graph():
            pk.set_device("host")
    with pk.graph() as g:  # recording works again afterwards
        y = x * 5.0
    g.replay()
    np.testing.assert_array_equal(y.numpy(), np.full(8, 5.0))


def test_a_kernel_run_by_the_interpreter_is_refused(device):
    x, out = pk.asarray(np.ones(4, np.float32)), pk.empty(4)
    interpreted = pk.kernel(saxpy.__wrapped__, interpret=True)
    with pytest.raises(pk.GraphError, match="'saxpy' runs in the interpreter"):
        with pk.graph():
            interpreted[4](2.0, x, x, out)
    saxpy[4](2.0, x, x, out)
    np.testing.assert_array_equal(out.numpy(), np.full(4, 3.0))


def test_a_graph_records_one_block_and_replays_only_when_recorded(device):
    g = pk.graph()
    with pytest.raises(pk.GraphError, match="before the graph was recorded"):
        g.replay()
    with g:
        pass
    g.replay()  # an empty graph replays nothing
    with pytest.raises(pk.GraphError, match="records one block"):
        with g:
            pass
    g.release()
    with pytest.raises(pk.GraphError, match="released"):
        g.replay()


def test_replay_on_another_current_device_or_a_closed_one_is_refused(device):
    x = pk.asarray(np.ones(8, np.float32))
    with pk.graph() as g:
        x * 2.0
    other = [d for d in pk.devices() if d.index != device.info.index]
    if other:
        pk.set_device(other[0].index)
        try:
            with pytest.raises(pk.GraphError, match="not the current device"):
                g.replay()
        finally:
            pk.set_device(device.info.index)
    device.close()
    try:
        with pytest.raises(pk.GraphError, match="which is closed"):
            g.replay()
        del g  # letting go of a graph of a closed device does nothing
    finally:
        pk.set_device(device.info.index)  # a fresh device in the closed one's place


def test_deleting_a_graph_frees_what_it_held(device):
    x = pk.asarray(np.ones(1 << 16, np.float32))
    pk.exp(x) * 2.0 + 1.0  # what the ops make once (their kernels' own buffers) made here
    pk.sync()
    before = device.memory_stats().used_bytes
    with pk.graph() as g:
        y = pk.exp(x) * 2.0 + 1.0  # temporaries the graph holds after the ops let go of them
    g.replay()
    del y
    pk.sync()
    assert device.memory_stats().used_bytes > before
    del g
    pk.sync()
    assert device.memory_stats().used_bytes == before
