"""`--only train`: one training step (forward, backward, AdamW) of examples/train_gpt.py's GPT,
pykern against torch eager on the same model, weights, batch and dtype, in one process.

Two modes: f32 throughout, and mixed precision (matrix products in bf16 under `pk.autocast` /
`torch.autocast`, f32 weights). Both sides start from pykern's initial weights, so their first
losses must agree (a WRONG result otherwise) and the losses must go down over the timed steps.
The figure is wall-clock time per step with the device drained at the end, so it includes each
side's per-op host cost (which decides small models); pykern's GPU time of the same steps is
kept beside it.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from .ops_torch import like_for_like
from .results import Results, Row

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

MODES = (("f32", None, 2e-4), ("bf16 autocast", "bf16", 3e-2))  # name, amp dtype, loss rtol
WARMUP = 2


def run(plan: Any, results: Results, peers: Any) -> None:
    import pykern as pk
    from gpt_model import GPT, GPTConfig
    from train_gpt import ALPHABET, SIZES

    size, steps = plan.training
    context, layers, d_model, heads, batch = SIZES[size]
    cfg = GPTConfig(len(ALPHABET), context, layers, d_model, heads)
    rng = np.random.default_rng(0)
    x = rng.integers(0, cfg.vocab, (batch, context)).astype(np.int32)
    data = (x, np.roll(x, -1, axis=1))  # a fixed batch: the loss must fall on it
    for mode, amp, rtol in MODES:
        case = f"gpt {size} {mode}"
        pk.random.seed(0)
        model = GPT(cfg)
        state = {k: v.numpy() for k, v in model.state_dict().items()}  # before any step
        mine = _pykern_steps(pk, model, data, amp, steps)
        row = results.add(Row("train", case, "pykern", mine["ms"], "ms/step", False,
                              "wall clock", {"gpu_ms": mine["gpu_ms"],
                                             "tokens_per_s": batch * context / mine["ms"] * 1e3,
                                             **mine["phases"]}))
        print("  " + " ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in mine["phases"].items()), flush=True)
        _check(results, case, "pykern", mine["losses"])
        if peers.torch is None or not peers.cuda:
            continue
        results.attempt(f"torch {case}", functools.partial(
            _torch_row, peers.torch, cfg, state, data, amp, steps, results, case,
            mine["losses"][0], rtol, row))


def _pykern_steps(pk: Any, model: Any, data: tuple[np.ndarray, np.ndarray], amp: str | None,
                  steps: int) -> dict[str, Any]:
    from gpt_model import loss_of

    opt = pk.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = pk.asarray(data[0]), pk.asarray(data[1])
    losses: list[Any] = []

    def step() -> None:
        with pk.autocast(dtype=amp or pk.bf16, enabled=amp is not None):
            loss = loss_of(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())  # the graph goes, as in a training loop

    for _ in range(WARMUP):
        step()
    pk.sync()
    dev = pk.get_device()
    start = time.perf_counter()
    with dev.timer() as timer:
        for _ in range(steps):
            step()
        pk.sync()
    ms = (time.perf_counter() - start) / steps * 1e3
    return {"ms": ms, "gpu_ms": timer.elapsed_s / steps * 1e3,
            "losses": [float(v) for v in losses], "phases": _phases(pk, model, opt, x, y, amp)}


def _phases(pk: Any, model: Any, opt: Any, x: Any, y: Any, amp: str | None) -> dict[str, float]:
    """One more step, each phase drained apart: its host time (recording the launches) and
    its GPU time (the device alone, from timestamps), in ms, and the launches of the step."""
    from gpt_model import loss_of

    dev, out, launches = pk.get_device(), {}, [0]
    real = dev.launch

    def counting(*args: Any, **kwargs: Any) -> Any:
        launches[0] += 1
        return real(*args, **kwargs)

    def forward() -> Any:
        with pk.autocast(dtype=amp or pk.bf16, enabled=amp is not None):
            return loss_of(model, x, y)

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


def _torch_row(torch: Any, cfg: Any, state: dict[str, np.ndarray],
               data: tuple[np.ndarray, np.ndarray], amp: str | None, steps: int,
               results: Results, case: str, first_loss: float, rtol: float, mine: Row) -> None:
    from .training_torch import torch_gpt, torch_loss

    model = torch_gpt(torch, cfg).cuda()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = (torch.from_numpy(a.astype(np.int64)).cuda() for a in data)
    losses: list[Any] = []

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp is not None):
            loss = torch_loss(torch, model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())

    with like_for_like(torch):
        for _ in range(WARMUP):
            step()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        ms = (time.perf_counter() - start) / steps * 1e3
    theirs = [float(v) for v in losses]
    row = results.add(Row("train", case, "torch cuda", ms, "ms/step", False, "wall clock"))
    print(f"  {'':<10} {case:<22} pykern/torch speed {results.ratio(row):.2f} "
          f"(pykern GPU time {mine.extra['gpu_ms']:.1f} ms/step)", flush=True)
    if abs(theirs[0] - first_loss) > rtol * abs(theirs[0]):
        results.fail(f"train {case}: pykern's first loss {first_loss:.5f}, torch's "
                     f"{theirs[0]:.5f} from the same weights and batch")


def _check(results: Results, case: str, who: str, losses: list[float]) -> None:
    if not all(np.isfinite(losses)) or losses[-1] >= losses[0]:
        results.fail(f"train {case}: {who}'s loss did not go down: {losses[0]:.4f} -> "
                     f"{losses[-1]:.4f}")
