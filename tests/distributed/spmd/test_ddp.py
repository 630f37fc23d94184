"""DistributedDataParallel: each rank trains on its shard of a batch; after several steps the
weights equal those of one process trained on the whole batch (computed here, on every rank,
with the same data), and are the same on every rank."""

from __future__ import annotations

import time

import numpy as np
import pytest

import pykern as pk
import pykern.nn.functional as F

BATCH = 4  # samples per rank
STEPS = 4


def _model(seed: int, hidden: int = 16) -> pk.nn.Module:
    pk.random.seed(seed)
    return pk.nn.Sequential(pk.nn.Linear(8, hidden), pk.nn.GELU(), pk.nn.Linear(hidden, 5))


def _batches(world: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    return [(rng.standard_normal((BATCH * world, 8)).astype(np.float32),
             rng.integers(0, 5, BATCH * world).astype(np.int32)) for _ in range(STEPS)]


def _weights(model: pk.nn.Module) -> list[np.ndarray]:
    return [p.numpy() for p in model.parameters()]


def _loss(model, x: np.ndarray, y: np.ndarray) -> pk.Tensor:
    return F.cross_entropy(model(pk.asarray(x)), pk.asarray(y))


def _train_single(make_opt, batches) -> list[np.ndarray]:
    """One process on the concatenated batches, from rank 0's initial weights."""
    model = _model(0)
    opt = make_opt(model.parameters())
    for x, y in batches:
        loss = _loss(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return _weights(model)


def _shard(dist, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = dist.get_rank()
    return x[r * BATCH:(r + 1) * BATCH], y[r * BATCH:(r + 1) * BATCH]


def _same_on_every_rank(dist, arrays: list[np.ndarray]) -> None:
    for a in arrays:
        gathered = [pk.zeros(a.shape, pk.f32) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, pk.asarray(a))
        for g in gathered:
            np.testing.assert_array_equal(g.numpy(), a)


def test_rank_0_parameters_win_at_construction(dist):
    model = _model(100 + dist.get_rank())  # different weights on every rank
    ddp = pk.nn.parallel.DistributedDataParallel(model)
    expected = _weights(_model(100))
    for got, want in zip(_weights(model), expected):
        np.testing.assert_array_equal(got, want)
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]


@pytest.mark.parametrize("optimizer", ["SGD", "AdamW"])
def test_ddp_equals_one_process_on_the_concatenated_batch(dist, optimizer):
    if optimizer == "SGD":
        def make_opt(params):
            return pk.optim.SGD(params, lr=0.1, momentum=0.9)
    else:
        def make_opt(params):
            return pk.optim.AdamW(params, lr=1e-2, weight_decay=0.01)
    batches = _batches(dist.get_world_size())
    expected = _train_single(make_opt, batches)
    model = _model(0 if dist.get_rank() == 0 else 55)
    ddp = pk.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0005)  # many buckets
    assert len(ddp._reducer.buckets) > 1
    opt = make_opt(ddp.parameters())
    for x, y in batches:
        loss = _loss(ddp, *_shard(dist, x, y))
        opt.zero_grad()
        loss.backward()
        opt.step()
    got = _weights(model)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    _same_on_every_rank(dist, got)


def test_no_sync_accumulates_locally_then_averages_everything(dist):
    """Two micro-batches: the first under no_sync (no communication), the second outside;
    the step equals one process's on the whole batch with the two halves' losses summed
    (each half a mean over its samples of every rank)."""
    world = dist.get_world_size()
    x, y = _batches(world)[0]
    reference = _model(0)
    ref_opt = pk.optim.SGD(reference.parameters(), lr=0.1)
    half = BATCH // 2
    ref_opt.zero_grad()
    for part in range(2):
        idx = np.concatenate([np.arange(r * BATCH + part * half, r * BATCH + (part + 1) * half)
                              for r in range(world)])
        _loss(reference, x[idx], y[idx]).backward()
    ref_opt.step()
    model = _model(0)
    ddp = pk.nn.parallel.DistributedDataParallel(model)
    opt = pk.optim.SGD(ddp.parameters(), lr=0.1)
    xs, ys = _shard(dist, x, y)
    opt.zero_grad()
    with ddp.no_sync():
        _loss(ddp, xs[:half], ys[:half]).backward()
    own = _model(0)  # this rank's gradient alone: no_sync did not average
    _loss(own, xs[:half], ys[:half]).backward()
    np.testing.assert_allclose(model[0].weight.grad.numpy(), own[0].weight.grad.numpy(),
                               rtol=1e-6, atol=1e-7)
    _loss(ddp, xs[half:], ys[half:]).backward()
    opt.step()
    for g, e in zip(_weights(model), _weights(reference)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_ddp_under_autocast(dist):
    batches = _batches(dist.get_world_size())[:2]
    reference = _model(0)
    ref_opt = pk.optim.SGD(reference.parameters(), lr=0.1)
    model = _model(0)
    ddp = pk.nn.parallel.DistributedDataParallel(model)
    opt = pk.optim.SGD(ddp.parameters(), lr=0.1)
    for x, y in batches:
        with pk.autocast(dtype=pk.f16):
            ref_loss = _loss(reference, x, y)
            loss = _loss(ddp, *_shard(dist, x, y))
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
        opt.zero_grad()
        loss.backward()
        opt.step()
    for g, e in zip(_weights(model), _weights(reference)):
        np.testing.assert_allclose(g, e, rtol=2e-2, atol=2e-3)
    _same_on_every_rank(dist, _weights(model))


class _TwoHeads(pk.nn.Module):
    """A trunk and two heads; `forward` uses head b only where asked."""

    def __init__(self) -> None:
        super().__init__()
        pk.random.seed(3)
        self.trunk = pk.nn.Linear(4, 4)
        self.a = pk.nn.Linear(4, 1)
        self.b = pk.nn.Linear(4, 1)
        self.never = pk.nn.Linear(4, 1)

    def forward(self, x, use_b: bool):
        h = self.trunk(x)
        out = self.a(h)
        return out + self.b(h) if use_b else out


def test_parameters_a_pass_does_not_reach(dist):
    """Head b is used on rank 0 only: its gradient is rank 0's divided by the world size on
    every rank; `never` is used nowhere: its .grad stays None, as in one process."""
    model = _TwoHeads()
    ddp = pk.nn.parallel.DistributedDataParallel(model)
    x = pk.ones((2, 4))
    loss = pk.sum(ddp(x, use_b=dist.get_rank() == 0))
    loss.backward()
    single = _TwoHeads()
    pk.sum(single(x, use_b=True)).backward()
    expected = single.b.weight.grad.numpy() / dist.get_world_size()
    np.testing.assert_allclose(model.b.weight.grad.numpy(), expected, rtol=1e-6)
    assert model.never.weight.grad is None


def test_different_models_on_the_ranks_are_refused(dist):
    model = _model(0, hidden=16 + dist.get_rank())
    with pytest.raises(pk.DistributedError, match="DistributedDataParallel"):
        pk.nn.parallel.DistributedDataParallel(model)
    dist.barrier()


def test_gradient_of_a_backward_without_a_ddp_forward_is_local(dist):
    """Only a forward through the wrapper arms the averaging (as in PyTorch)."""
    model = _model(0)
    pk.nn.parallel.DistributedDataParallel(model)
    x = pk.full((1, 8), float(dist.get_rank() + 1))
    pk.sum(model(x)).backward()  # the wrapped module called directly
    single = _model(0)
    pk.sum(single(x)).backward()
    np.testing.assert_array_equal(model[0].weight.grad.numpy(), single[0].weight.grad.numpy())


def test_average_gradients_outside_backward(dist):
    """Backward under no_sync, then average_gradients(): the same step as backward() with
    averaging."""
    batches = _batches(dist.get_world_size())[:1]
    expected = _train_single(lambda ps: pk.optim.SGD(ps, lr=0.1), batches)
    model = _model(0)
    ddp = pk.nn.parallel.DistributedDataParallel(model)
    opt = pk.optim.SGD(ddp.parameters(), lr=0.1)
    for x, y in batches:
        opt.zero_grad()
        with ddp.no_sync():
            _loss(ddp, *_shard(dist, x, y)).backward()
        ddp.average_gradients()
        opt.step()
    for g, e in zip(_weights(model), expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_buckets_leave_while_backward_still_runs(dist):
    """With a bucket per parameter, the last layer's bucket is handed to the communication
    thread before the first layer's weight has its gradient."""
    model = _model(0)
    ddp = pk.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1e-6)
    buckets = ddp._reducer.buckets
    assert [b.params[0] for b in buckets] == list(model.parameters())[::-1]
    seen = []
    model[0].bias.register_post_accumulate_grad_hook(
        lambda p: seen.append((buckets[0].launched, buckets[-1].launched)))
    pk.sum(ddp(pk.ones((2, 8)))).backward()
    assert seen == [(True, False)]  # 0.bias's hook runs before 0.weight has a gradient
    assert model[0].weight.grad is not None


def test_a_dropped_wrapper_and_model_free_their_thread(dist):
    import gc
    import threading

    def threads() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name == "pykern-ddp-comm"}

    gc.collect()
    before = threads()  # earlier tests' wrappers may still be letting theirs go
    model = _model(0)
    ddp = pk.nn.parallel.DistributedDataParallel(model)
    pk.sum(ddp(pk.ones((2, 8)))).backward()
    mine = threads() - before
    assert len(mine) == 1
    del model, ddp
    gc.collect()
    for _ in range(100):
        if not any(t.is_alive() for t in mine):
            break
        time.sleep(0.01)
    assert not any(t.is_alive() for t in mine)


def test_zzz_a_backward_that_raises_mid_pass_leaves_the_group_unusable(dist):
    """A backward() that ends on an exception after some buckets left: the next one refuses
    (the ranks are out of step) instead of mixing two passes. Last: it breaks DDP's group."""
    model = _model(0)
    ddp = pk.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0005)
    x = pk.ones((2, 8))

    def broken(t):
        raise ValueError("a hook of the user's")

    handle = model[0].weight.register_post_accumulate_grad_hook(broken)
    with pytest.raises(ValueError):
        pk.sum(ddp(x)).backward()
    handle.remove()
    with pytest.raises(pk.DistributedError, match="out of step"):
        pk.sum(ddp(x)).backward()
    dist.barrier()  # the default group is another communicator: still usable
