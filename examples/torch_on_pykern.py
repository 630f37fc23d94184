"""Trains a small PyTorch model on the "pykern" device: ordinary PyTorch code (torch.nn,
torch.optim, PyTorch's autograd) whose only pykern-specific lines are `import pykern.torch`
and the device string.

    python examples/torch_on_pykern.py [--steps 300] [--device pykern] [--seed 0]

The model classifies points of three interleaved spirals with an MLP (Linear, BatchNorm1d,
GELU, Dropout), trained with AdamW and a cosine learning-rate schedule; every ATen operator of
the forward pass, the backward pass and the optimizer runs as pykern kernels on pykern's
device (a GPU through Vulkan, or the host CPU). `--device cpu` runs the same program on
PyTorch's CPU backend: from the same seed the two print the same losses (within float
rounding), since pykern draws PyTorch's CPU random numbers.
"""

from __future__ import annotations

import math
import os
import sys
import time

import torch
from torch import nn

import pykern.torch  # noqa: F401  (registers the "pykern" device)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli import parser_for  # noqa: E402


def spirals(n: int, classes: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """n points per class on `classes` noisy spiral arms, and their labels."""
    t = torch.linspace(0.2, 1.0, n).repeat(classes)
    label = torch.arange(classes).repeat_interleave(n)
    angle = 4.0 * t + label * (2 * math.pi / classes) + 0.15 * torch.randn(n * classes)
    points = torch.stack([t * torch.cos(angle), t * torch.sin(angle)], dim=1)
    return points, label


def model(classes: int = 3, hidden: int = 64) -> nn.Module:
    return nn.Sequential(nn.Linear(2, hidden), nn.BatchNorm1d(hidden), nn.GELU(),
                         nn.Linear(hidden, hidden), nn.GELU(), nn.Dropout(0.1),
                         nn.Linear(hidden, classes))


def main(argv: list[str] | None = None) -> None:
    parser = parser_for(__doc__)
    parser.add_argument("--steps", type=int, default=300, help="optimizer steps")
    parser.add_argument("--device", default="pykern", help="a PyTorch device string")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    x, y = spirals(200)
    net = model().to(args.device)
    opt = torch.optim.AdamW(net.parameters(), lr=0.02, weight_decay=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)
    x, y = x.to(args.device), y.to(args.device)
    start = time.perf_counter()
    for step in range(args.steps):
        batch = torch.randint(0, len(y), (128,)).to(args.device)
        loss = nn.functional.cross_entropy(net(x[batch]), y[batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % max(args.steps // 10, 1) == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    seconds = time.perf_counter() - start
    net.eval()
    with torch.no_grad():
        accuracy = (net(x).argmax(dim=1) == y).float().mean().item()
    print(f"device {x.device}: accuracy {accuracy:.3f} on the training points, "
          f"{1e3 * seconds / args.steps:.1f} ms per step")


if __name__ == "__main__":
    main()
