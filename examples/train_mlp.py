"""Trains a small MLP on the digits data set (1,797 8x8 images of handwritten digits, which
scikit-learn ships) with pykern's autograd, pk.nn and pk.optim, and prints the test accuracy.

    python examples/train_mlp.py [--epochs 20] [--device N] [--plot loss.png] [--eager]

Every op of the forward pass, its backward and the optimizer's step are pykern kernels on the
device (the host backend on a machine without a GPU: a few seconds). The training step is
`@pk.compile`d: recorded on its first calls, then replayed with each batch (`--eager` runs its
Python every step instead, to compare); the progress lines show the steady-state time per
step. `--plot PATH` writes the loss of every step as a PNG (examples/plot.py: matplotlib's
plot where it is installed, else a plain line drawn with numpy).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

import numpy as np

import pykern as pk
import pykern.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli import parser_for  # noqa: E402
from plot import save_loss_curve  # noqa: E402
from step_timer import StepTimer  # noqa: E402


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError as e:
        raise SystemExit("this example reads scikit-learn's copy of the digits data: "
                         "pip install scikit-learn (it is in pykern's 'test' extra)") from e
    data = sklearn_digits()
    return (data.data / 16.0).astype(np.float32), data.target.astype(np.int64)


def split(x: np.ndarray, y: np.ndarray, seed: int) -> tuple[np.ndarray, ...]:
    order = np.random.default_rng(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    train, test = order[:cut], order[cut:]
    return x[train], y[train], x[test], y[test]


def accuracy(model: pk.nn.Module, x: pk.Tensor, y: np.ndarray) -> float:
    model.eval()
    with pk.no_grad():
        predicted = pk.argmax(model(x), axis=-1).numpy()
    model.train()
    return float((predicted == y).mean())


def make_model() -> pk.nn.Module:
    return pk.nn.Sequential(pk.nn.Linear(64, 128), pk.nn.ReLU(), pk.nn.Linear(128, 10))


def train(model: pk.nn.Module, x_train: np.ndarray, y_train: np.ndarray, epochs: int,
          batch: int, lr: float, log: bool = True, eager: bool = False,
          on_epoch: Callable[[int], None] | None = None) -> list[float]:
    """AdamW over shuffled minibatches (the order from seed 1); the loss of every step. The
    step is `@pk.compile`d (recorded on its first calls, then replayed) unless `eager`.
    `on_epoch(e)`, when given, is called as epoch `e` starts (a benchmark's clock)."""
    opt = pk.optim.AdamW(model.parameters(), lr=lr)
    xt, yt = pk.asarray(x_train), pk.asarray(y_train.astype(np.int32))

    def step(idx: pk.Tensor) -> pk.Tensor:
        loss = F.cross_entropy(model(pk.take(xt, idx, axis=0)), pk.take(yt, idx))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    run = step if eager else pk.compile(step)
    rng = np.random.default_rng(1)
    losses: list[float] = []
    timer = StepTimer(epochs * -(-len(x_train) // batch))
    for epoch in range(epochs):
        if on_epoch is not None:
            on_epoch(epoch)
        order = rng.permutation(len(x_train))
        total = 0.0
        for i in range(0, len(order), batch):
            loss = run(pk.asarray(order[i:i + batch].astype(np.int32)))
            losses.append(float(loss))
            timer.tick()
            total += losses[-1] * len(order[i:i + batch])
        if log and (epoch % 5 == 4 or epoch == epochs - 1):
            print(f"epoch {epoch + 1:3d}  loss {total / len(order):.4f}  ({timer.summary()})",
                  flush=True)
    return losses


def main() -> float:
    parser = parser_for(__doc__)
    parser.add_argument("--epochs", type=int, default=20, help="passes over the training set")
    parser.add_argument("--batch", type=int, default=64, help="images per step")
    parser.add_argument("--lr", type=float, default=3e-3, help="AdamW's learning rate")
    parser.add_argument("--device", default=None,
                        help="the device, as pk.set_device takes it: an index or a name "
                        "(default: pykern's default device)")
    parser.add_argument("--eager", action="store_true",
                        help="run the training step's Python every step instead of replaying "
                        "the step recorded by pk.compile")
    parser.add_argument("--plot", default=None, metavar="PATH",
                        help="write the loss curve (one point per step) to this PNG file "
                        "(default: none)")
    args = parser.parse_args()
    if args.device is not None:
        pk.set_device(int(args.device) if args.device.isdigit() else args.device)
    x_train, y_train, x_test, y_test = split(*load_digits(), seed=0)
    model = make_model()
    start = time.perf_counter()
    losses = train(model, x_train, y_train, args.epochs, args.batch, args.lr,
                   eager=args.eager)
    acc = accuracy(model, pk.asarray(x_test), y_test)
    print(f"test accuracy {acc:.3f} ({time.perf_counter() - start:.1f} s of training on "
          f"{pk.get_device().info.name})")
    if args.plot:
        drawn_by = save_loss_curve(args.plot, losses, title="digits MLP: training loss")
        print(f"loss curve of {len(losses)} steps written to {args.plot} ({drawn_by})")
    return acc


if __name__ == "__main__":
    main()
