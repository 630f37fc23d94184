"""`--only torchdev`: one training step (forward, backward, AdamW) of a GPT written in PyTorch,
on the "pykern" PyTorch device (`import pykern.torch`) against torch eager on CUDA where the
process has it (else on PyTorch's CPU backend, for scale), with the same weights and batch.

The model is examples/train_gpt.py's GPT written with torch.nn (benchmarks/training_torch.py),
of the size the plan gives (the "large" one on a GPU: 6 layers, d_model 384, context 256). Two
modes: float32, and bfloat16 autocast (`torch.autocast(device_type="pykern")`). Both devices
start from the same CPU-made weights, so their first losses must agree (a WRONG result
otherwise), and the losses must go down over the timed steps. The figure is wall-clock time per
step, the device drained at the end: it includes the per-operator host cost of each side. Each
side runs in a process of its own (`_steps_elsewhere`: PyTorch cannot run a CUDA backward and a
backward on a device registered later in one process).
"""

from __future__ import annotations

import functools
import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .results import Results, Row

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

MODES = (("f32", None, 2e-4), ("bf16 autocast", "bf16", 3e-2))  # name, amp dtype, loss rtol
WARMUP = 2


def run(plan: Any, results: Results, peers: Any) -> None:
    """Times the step on "pykern", then on CUDA where torch has it."""
    if peers.torch is None:
        results.note("torchdev: PyTorch is not installed (pip install 'pykern-vulkan[torch]')")
        return
    torch = peers.torch
    from gpt_model import GPTConfig
    from train_gpt import ALPHABET

    cases, steps = plan.training
    gpt = next(c for c in cases if c.kind == "gpt")  # the train benchmark's first GPT
    context, layers, d_model, heads, batch = gpt.shape
    size = f"{layers}x{d_model}"
    cfg = GPTConfig(len(ALPHABET), context, layers, d_model, heads)
    rng = np.random.default_rng(0)
    x = rng.integers(0, cfg.vocab, (batch, context)).astype(np.int64)
    data = (x, np.roll(x, -1, axis=1))  # a fixed batch: the loss must fall on it
    for mode, amp, rtol in MODES:
        case = f"gpt {size} {mode}"
        mine = _steps_elsewhere("pykern", cfg, data, amp, steps)
        results.add(Row("torchdev", case, "pykern (torch device)", mine["ms"], "ms/step",
                        False, "wall clock",
                        {"tokens_per_s": batch * context / mine["ms"] * 1e3}))
        _check(results, case, "pykern", mine["losses"])
        peer = "cuda" if peers.cuda else "cpu"
        results.attempt(f"torch {peer} {case}", functools.partial(
            _peer_row, torch, peer, cfg, data, amp, steps, results, case, mine, rtol))


def _model(torch: Any, cfg: Any, device: str) -> Any:
    from .training_torch import torch_gpt

    torch.manual_seed(0)
    model = torch_gpt(torch, cfg)  # made on the CPU: the same weights for every device
    for name, p in model.named_parameters():
        if p.dim() >= 2 and "in_proj" in name:
            torch.nn.init.xavier_uniform_(p)
    return model.to(device)


def _steps(torch: Any, device: str, cfg: Any, data: tuple[np.ndarray, np.ndarray],
           amp: str | None, steps: int) -> dict[str, Any]:
    from .training_torch import timed_steps, torch_loss

    model = _model(torch, cfg, device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = (torch.from_numpy(a).to(device) for a in data)
    kind = device.split(":")[0]
    sync = (torch.pykern.synchronize if kind == "pykern"
            else torch.cuda.synchronize if kind == "cuda" else lambda: None)
    losses: list[Any] = []

    def step() -> None:
        with torch.autocast(kind, dtype=torch.bfloat16, enabled=amp is not None):
            loss = torch_loss(torch, model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())

    ms = timed_steps(torch, step, sync, WARMUP, steps)
    return {"ms": ms, "losses": [float(v) for v in losses]}


def _peer_row(torch: Any, peer: str, cfg: Any, data: tuple[np.ndarray, np.ndarray],
              amp: str | None, steps: int, results: Results, case: str, mine: dict[str, Any],
              rtol: float) -> None:
    theirs = _steps_elsewhere(peer, cfg, data, amp, steps)
    row = results.add(Row("torchdev", case, f"torch {peer}", theirs["ms"], "ms/step", False,
                          "wall clock"))
    print(f"  {'':<10} {case:<22} pykern/torch-{peer} speed {results.ratio(row):.2f}",
          flush=True)
    first, ref = mine["losses"][0], theirs["losses"][0]
    if abs(first - ref) > rtol * abs(ref):
        results.fail(f"torchdev {case}: the first loss on pykern is {first:.5f}, on {peer} "
                     f"{ref:.5f}, from the same weights and batch")


def _steps_elsewhere(device: str, cfg: Any, data: tuple[np.ndarray, np.ndarray],
                     amp: str | None, steps: int) -> dict[str, Any]:
    """`_steps` on `device` in a process of its own, as each side needs: the pykern device
    must be registered before the process's first backward (PyTorch's autograd engine sizes
    its device queues then), and once it is, PyTorch (2.8 on) takes it for the process's
    accelerator and any CUDA backward trips an internal assert (pytorch/pytorch#161129)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "job.pkl"
        path.write_bytes(pickle.dumps((cfg, data, amp, steps)))
        done = subprocess.run([sys.executable, "-m", "benchmarks.torch_device", str(path),
                               device], capture_output=True, text=True, check=False,
                              cwd=Path(__file__).resolve().parents[1])
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else
                               f"exit status {done.returncode}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def _check(results: Results, case: str, who: str, losses: list[float]) -> None:
    if not all(np.isfinite(losses)) or losses[-1] >= losses[0]:
        results.fail(f"torchdev {case}: {who}'s loss did not go down: {losses[0]:.4f} -> "
                     f"{losses[-1]:.4f}")


if __name__ == "__main__":  # `_steps_elsewhere`'s job: one side, in a process of its own
    import torch as _torch

    if sys.argv[2] == "pykern":
        import pykern.torch  # noqa: F401  (registers the device, before any backward)

    _cfg, _data, _amp, _steps_count = pickle.loads(Path(sys.argv[1]).read_bytes())
    print(json.dumps(_steps(_torch, sys.argv[2], _cfg, _data, _amp, _steps_count)))
