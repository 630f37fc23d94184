"""Data-parallel training: the MLP of examples/train_mlp.py on the digits data set, one
process per device, gradients averaged across processes by DistributedDataParallel.

    mpiexec -n 2 python examples/train_ddp.py [--epochs 20] [--batch 32] [--check]

Every process reads the same data and draws the same shuffled order (seed 1); each global
minibatch of `batch × world size` samples is cut into one shard per rank, and each rank
trains on its shard. After backward() every rank holds the average of all ranks' gradients,
so every rank makes the same AdamW step: the result is that of one process training on the
global minibatches (`--check` trains that process too, on rank 0, and prints the largest
difference between the two models' weights). Rank 0 prints the loss and the test accuracy.
Each process picks its device from its local rank (see docs/distributed.md); PYKERN_DEVICE
overrides that for every rank (PYKERN_DEVICE=host trains on the CPU cores).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import pykern as pk
import pykern.distributed as dist
import pykern.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_mlp import accuracy, load_digits, make_model, split  # noqa: E402


def shards(order: np.ndarray, batch: int, rank: int, world: int) -> list[np.ndarray]:
    """The sample indices of this rank's shard of each global minibatch of `order`. The
    samples past the last full global minibatch are left out of this epoch (as PyTorch's
    DistributedSampler with drop_last): with unequal shards, the average of the ranks' mean
    losses would weigh samples unequally, and differ from the mean over the whole batch."""
    out = []
    for start in range(0, len(order) - batch * world + 1, batch * world):
        out.append(order[start + rank * batch:start + (rank + 1) * batch])
    return out


def train(model: pk.nn.Module, x: pk.Tensor, y: pk.Tensor, n: int, epochs: int, batch: int,
          lr: float, rank: int, world: int, log: bool) -> pk.nn.Module:
    """AdamW over the global minibatches; `model` is the DDP wrapper (or, for --check, a plain
    module with rank 0 and world 1 standing for the whole batch)."""
    opt = pk.optim.AdamW(model.parameters(), lr=lr)
    rng = np.random.default_rng(1)
    for epoch in range(epochs):
        order = rng.permutation(n)
        total = 0.0
        steps = shards(order, batch, rank, world)
        for shard in steps:
            idx = pk.asarray(shard.astype(np.int32))
            loss = F.cross_entropy(model(pk.take(x, idx, axis=0)), pk.take(y, idx))
            opt.zero_grad()
            loss.backward()  # DDP: returns with every rank's average gradient
            opt.step()
            total += float(loss)
        if log and (epoch % 5 == 4 or epoch == epochs - 1):
            print(f"epoch {epoch + 1:3d}  loss (rank 0's shards) {total / len(steps):.4f}",
                  flush=True)
    return model


def main() -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32, help="samples per rank and step")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--check", action="store_true",
                        help="also train one process on the global minibatches (rank 0) and "
                             "compare the weights")
    args = parser.parse_args()
    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    x_train, y_train, x_test, y_test = split(*load_digits(), seed=0)
    x, y = pk.asarray(x_train), pk.asarray(y_train.astype(np.int32))
    pk.random.seed(0)
    model = pk.nn.parallel.DistributedDataParallel(make_model())
    start = time.perf_counter()
    train(model, x, y, len(x_train), args.epochs, args.batch, args.lr, rank, world,
          log=rank == 0)
    seconds = time.perf_counter() - start
    acc = accuracy(model.module, pk.asarray(x_test), y_test)
    if rank == 0:
        print(f"test accuracy {acc:.3f} ({seconds:.1f} s of training on {world} processes, "
              f"rank 0 on {pk.get_device().info.name})")
        if args.check:
            pk.random.seed(0)
            single = train(make_model(), x, y, len(x_train), args.epochs, args.batch * world,
                           args.lr, 0, 1, log=False)
            diff = max(float(np.abs(a.numpy() - b.numpy()).max())
                       for a, b in zip(model.module.parameters(), single.parameters()))
            print(f"one process on the global minibatches: largest weight difference {diff:.2e}")
    dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
