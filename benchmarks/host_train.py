"""The MLP training example (examples/train_mlp.py: `make_model`, `train` on scikit-learn's
digits, or random images of their shape at --quick) on the host device and on lavapipe, with
numpy's version of the same training (benchmarks/numpy_mlp.py), in ms per step.

Each side starts from the weights of `pk.random.seed(0); make_model()` (the same on every
device), trains `WARMUP_EPOCHS` untimed epochs (compiling, and recording the `@pk.compile`d
step), then `plan.train_epochs` timed epochs in the same call of `train` (so that the timed
ones replay what the first ones recorded), by the wall clock from the start of the first timed
epoch (`train`'s `on_epoch`): the example reads every step's loss back
(`float(loss)`), so each step ends drained. Each device trains with the example's compiled step
(`who` the device) and with its eager step (`who` "<device> eager").
Every loss of both calls must agree with numpy's within LOSS_RTOL (else WRONG), and go down.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import pykern as pk

from . import numpy_mlp
from .results import Results, Row

GROUP = "host"
BATCH, LR = 64, 3e-3  # the example's defaults
LOSS_RTOL = 1e-3  # f32 sums in another order over the steps
# a training step is recorded on its first three calls of a signature (docs/performance.md),
# and the last batch of an epoch, smaller, is a signature of its own, called once per epoch
WARMUP_EPOCHS = 3

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def run(hp: Any, results: Results, devices: dict[str, int]) -> None:
    import train_mlp

    data = _data(results, train_mlp, hp.train_samples)
    if data is None:
        return
    case, x, y = data
    pk.set_device(devices["host"])
    pk.random.seed(0)
    state = {k: np.array(v.numpy(), copy=True)
             for k, v in train_mlp.make_model().state_dict().items()}
    reference = _numpy(hp, results, case, state, x, y)
    for name, index in devices.items():
        pk.set_device(index)
        for eager in (False, True):
            pk.random.seed(0)
            model = train_mlp.make_model()
            starts: list[float] = []
            losses = train_mlp.train(model, x, y, WARMUP_EPOCHS + hp.train_epochs, BATCH, LR,
                                     log=False, eager=eager,
                                     on_epoch=lambda _, s=starts: s.append(time.perf_counter()))
            who = f"{name} eager" if eager else name
            _add(results, case, f"pykern {who}", who, _ms_per_timed_step(starts, losses),
                 losses, reference)


def _data(results: Results, train_mlp: Any,
          samples: int | None) -> tuple[str, np.ndarray, np.ndarray] | None:
    """The case's name and the training images and labels: the digits' training split, or
    `samples` random images of their shape (pixels in [0, 1], ten classes)."""
    if samples is not None:
        rng = np.random.default_rng(5)
        x = rng.random((samples, 64), dtype=np.float32)
        return f"train_mlp random b{BATCH}", x, rng.integers(0, 10, samples)
    try:
        x, y, _, _ = train_mlp.split(*train_mlp.load_digits(), seed=0)
    except SystemExit as e:  # the example exits so without scikit-learn
        results.note(f"host: train_mlp skipped: {e}")
        return None
    return f"train_mlp digits b{BATCH}", x, y


def _numpy(hp: Any, results: Results, case: str, state: dict[str, np.ndarray], x: np.ndarray,
           y: np.ndarray) -> list[float]:
    params = {k: v.copy() for k, v in state.items()}
    starts: list[float] = []
    losses = numpy_mlp.train(params, x, y, WARMUP_EPOCHS + hp.train_epochs, BATCH, LR,
                             on_epoch=lambda _: starts.append(time.perf_counter()))
    _add(results, case, "numpy", "numpy", _ms_per_timed_step(starts, losses), losses, losses)
    return losses


def _ms_per_timed_step(starts: list[float], losses: list[float]) -> float:
    """ms per step of the epochs after the warm-up ones, from the epochs' start times
    (`starts`) to now; every epoch has the same number of steps."""
    per_epoch = len(losses) // len(starts)
    timed = len(losses) - WARMUP_EPOCHS * per_epoch
    return (time.perf_counter() - starts[WARMUP_EPOCHS]) / timed * 1e3


def _add(results: Results, case: str, impl: str, who: str, ms: float, losses: list[float],
         reference: list[float]) -> None:
    got, want = np.array(losses), np.array(reference)
    error = float(np.max(np.abs(got - want) / np.abs(want))) if got.shape == want.shape \
        else float("nan")
    falls = bool(np.all(np.isfinite(got)) and got[-1] < got[0])
    ok = error <= LOSS_RTOL and falls
    results.add(Row(GROUP, case, impl, ms, "ms/step", False, "wall clock",
                    {"case": "train", "who": who, "status": "ok" if ok else "WRONG",
                     "steps": len(losses), "first_loss": losses[0], "last_loss": losses[-1],
                     "max_rel_loss_diff": error}))
    if not ok:
        results.fail(f"{impl} {case} WRONG: losses {losses[0]:.4f} -> {losses[-1]:.4f}, "
                     f"{error:.3g} from numpy's at most (bound {LOSS_RTOL:g})")
