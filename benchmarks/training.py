"""`--only train`: one training step (forward, backward, optimizer) of examples/train_gpt.py's GPT
and of an MLP, pykern eager and `@pk.compile`d against torch eager on the same model, weights,
batch and dtype, in one process (benchmarks/training_cases.py lists the cases).

The GPT trains with AdamW, in f32 and with the matrix products in bf16 (`pk.autocast` /
`torch.autocast`, f32 weights); the MLP with SGD. All three sides start from pykern's initial
weights and train on one fixed batch: pykern's eager and compiled losses must be the same step
by step, torch's first loss the same as pykern's (else WRONG), and every loss must go down.
torch runs on CUDA where it has it, else on the CPU. The figure is wall-clock time per step
with the device drained at the end, so it includes each side's per-op host cost (which decides
small models); pykern's device time of the same steps, and for the eager step the host and
device time of each phase, are kept beside it.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from .results import Results, Row
from .training_cases import TrainCase

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

WARMUP = 3  # steps before the timed ones: a compiled step records its first calls
SAME_LOSS_RTOL = 1e-5  # eager and compiled pykern run the same kernels


def run(plan: Any, results: Results, peers: Any) -> None:
    cases, steps = plan.training
    for case in cases:
        results.attempt(f"train {case.name}",
                        functools.partial(_run_case, case, steps, results, peers))


def _run_case(case: TrainCase, steps: int, results: Results, peers: Any) -> None:
    import pykern as pk

    data = _batch(case)
    runs = {}
    for mode in ("eager", "compiled"):
        model, loss_fn, opt = _pykern_model(pk, case)
        if mode == "eager":
            state = {k: v.numpy() for k, v in model.state_dict().items()}  # before any step
        runs[mode] = _pykern_steps(pk, case, model, loss_fn, opt, data, steps,
                                   compiled=mode == "compiled")
        extra = {"gpu_ms": runs[mode]["gpu_ms"], "tokens_per_s": case.tokens / runs[mode]["ms"]
                 * 1e3, **runs[mode].get("phases", {})}
        results.add(Row("train", case.name, f"pykern {mode}", runs[mode]["ms"], "ms/step",
                        False, "wall clock", extra))
        _check(results, case.name, f"pykern {mode}", runs[mode]["losses"])
    eager, compiled = runs["eager"]["losses"], runs["compiled"]["losses"]
    worst = max(abs(a - b) / abs(a) for a, b in zip(eager, compiled))
    print(f"  {'':<10} {case.name:<22} eager/compiled speed "
          f"{runs['eager']['ms'] / runs['compiled']['ms']:.2f}, losses agree to {worst:.1e}",
          flush=True)
    if worst > SAME_LOSS_RTOL:
        results.fail(f"train {case.name}: compiled losses differ from eager ones by {worst:.2g} "
                     f"(eager {eager}, compiled {compiled})")
    if peers.torch is not None:
        device = "cuda" if peers.cuda else "cpu"
        results.attempt(f"torch {device} {case.name}", functools.partial(
            _torch_row, peers.torch, device, case, state, data, steps, results, eager[0]))


def _batch(case: TrainCase) -> tuple[np.ndarray, np.ndarray]:
    """The fixed batch of the case: the loss must fall on it."""
    rng = np.random.default_rng(0)
    if case.kind == "gpt":
        context, batch = case.shape[0], case.shape[-1]
        x = rng.integers(0, _vocab(), (batch, context)).astype(np.int32)
        return x, np.roll(x, -1, axis=1)
    n_in, _, classes, batch = case.shape
    return (rng.standard_normal((batch, n_in)).astype(np.float32),
            rng.integers(0, classes, batch).astype(np.int32))


def _vocab() -> int:
    from train_gpt import ALPHABET

    return len(ALPHABET)


def _pykern_model(pk: Any, case: TrainCase) -> tuple[Any, Any, Any]:
    """The model (pykern's initial weights from seed 0), its loss and its optimizer."""
    pk.random.seed(0)
    if case.kind == "gpt":
        from gpt_model import GPT, GPTConfig, loss_of

        context, layers, d_model, heads, _ = case.shape
        model = GPT(GPTConfig(_vocab(), context, layers, d_model, heads))
        return model, loss_of, pk.optim.AdamW(model.parameters(), lr=1e-3)
    n_in, hidden, classes, _ = case.shape
    model = pk.nn.Sequential(pk.nn.Linear(n_in, hidden), pk.nn.ReLU(),
                             pk.nn.Linear(hidden, classes))

    def loss_of(m: Any, x: Any, y: Any) -> Any:
        return pk.nn.functional.cross_entropy(m(x), y)

    return model, loss_of, pk.optim.SGD(model.parameters(), lr=0.05)


def _pykern_steps(pk: Any, case: TrainCase, model: Any, loss_fn: Any, opt: Any,
                  data: tuple[np.ndarray, np.ndarray], steps: int, compiled: bool
                  ) -> dict[str, Any]:
    x, y = pk.asarray(data[0]), pk.asarray(data[1])
    amp = case.amp

    def step(x: Any, y: Any) -> Any:
        with pk.autocast(dtype=amp or pk.bf16, enabled=amp is not None):
            loss = loss_fn(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()  # the graph goes, as in a training loop

    run = pk.compile(step) if compiled else step
    losses = [run(x, y) for _ in range(WARMUP)]
    pk.sync()
    dev = pk.get_device()
    start = time.perf_counter()
    with dev.timer() as timer:
        for _ in range(steps):
            losses.append(run(x, y))
        pk.sync()
    ms = (time.perf_counter() - start) / steps * 1e3
    out = {"ms": ms, "gpu_ms": timer.elapsed_s / steps * 1e3,
           "losses": [float(v) for v in losses]}
    if not compiled:
        out["phases"] = _phases(pk, model, loss_fn, opt, x, y, amp)
    return out


def _phases(pk: Any, model: Any, loss_fn: Any, opt: Any, x: Any, y: Any,
            amp: str | None) -> dict[str, float]:
    """One more eager step, each phase drained apart: its host time (recording the launches)
    and its GPU time (the device alone, from timestamps), in ms, and the launches of the
    step."""
    dev, out, launches = pk.get_device(), {}, [0]
    real = dev.launch

    def counting(*args: Any, **kwargs: Any) -> Any:
        launches[0] += 1
        return real(*args, **kwargs)

    def forward() -> Any:
        with pk.autocast(dtype=amp or pk.bf16, enabled=amp is not None):
            return loss_fn(model, x, y)

    def timed(name: str, work: Any) -> Any:
        start = time.perf_counter()
        with dev.timer() as timer:
            result = work()
            out[f"{name} host ms"] = (time.perf_counter() - start) * 1e3
        pk.sync()
        out[f"{name} gpu ms"] = timer.elapsed_s * 1e3
        return result

    dev.launch = counting
    try:
        loss = timed("forward", forward)
        opt.zero_grad()
        timed("backward", loss.backward)
        timed("step", opt.step)
    finally:
        del dev.launch
    out["launches"] = launches[0]
    return out


def _torch_row(torch: Any, device: str, case: TrainCase, state: dict[str, np.ndarray],
               data: tuple[np.ndarray, np.ndarray], steps: int, results: Results,
               first_loss: float) -> None:
    from .training_torch import timed_steps, torch_gpt, torch_loss, torch_mlp

    if case.kind == "gpt":
        from gpt_model import GPTConfig

        context, layers, d_model, heads, _ = case.shape
        model = torch_gpt(torch, GPTConfig(_vocab(), context, layers, d_model, heads))
        loss_fn = functools.partial(torch_loss, torch)
    else:
        model = torch_mlp(torch, *case.shape[:3])
        loss_fn = lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y)  # noqa: E731
    model = model.to(device)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    opt = (torch.optim.AdamW(model.parameters(), lr=1e-3) if case.kind == "gpt"
           else torch.optim.SGD(model.parameters(), lr=0.05))
    x = torch.from_numpy(data[0] if case.kind == "mlp" else data[0].astype(np.int64)).to(device)
    y = torch.from_numpy(data[1].astype(np.int64)).to(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    losses: list[Any] = []

    def step() -> None:
        with torch.autocast(device, dtype=torch.bfloat16, enabled=case.amp is not None):
            loss = loss_fn(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())

    ms = timed_steps(torch, step, sync, WARMUP, steps)
    theirs = [float(v) for v in losses]
    results.add(Row("train", case.name, f"torch {device}", ms, "ms/step", False,
                    "wall clock", {"tokens_per_s": case.tokens / ms * 1e3}))
    speeds = ", ".join(f"{r.impl} {ms / r.value:.2f}" for r in results.rows
                       if r.group == "train" and r.case == case.name and r.is_pykern)
    print(f"  {'':<10} {case.name:<22} speed against torch: {speeds} (first losses: pykern "
          f"{first_loss:.5f}, torch {theirs[0]:.5f})", flush=True)
    if abs(theirs[0] - first_loss) > case.rtol * abs(theirs[0]):
        results.fail(f"train {case.name}: pykern's first loss {first_loss:.5f}, torch's "
                     f"{theirs[0]:.5f} from the same weights and batch")
    _check(results, case.name, f"torch {device}", theirs)


def _check(results: Results, case: str, who: str, losses: list[float]) -> None:
    if not all(np.isfinite(losses)) or losses[-1] >= losses[0]:
        results.fail(f"train {case}: {who}'s loss did not go down: {losses[0]:.4f} -> "
                     f"{losses[-1]:.4f}")
