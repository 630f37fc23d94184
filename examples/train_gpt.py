"""Trains a character-level GPT on the Python standard library's own source code (on every
machine with Python), then prints a sample of generated text and writes the loss curve as a
PNG. Every op of the forward pass, its backward and AdamW's step run as pykern kernels.

    python examples/train_gpt.py                       # the tiny model: a minute or less
    python examples/train_gpt.py --device 0 --amp bf16  # a GPU: the large model

The size defaults to `tiny` (one layer of width 32) where the device is a CPU (the host
device, or a Vulkan CPU implementation such as lavapipe) and to `large` (6 layers of width 384
over 256 characters, batches of 32) on a GPU; `--size small` is in between. `--amp bf16` runs
the matrix products in bf16 on the matrix engine (pk.autocast) with the weights kept in f32.
The training step (forward, backward, AdamW) is `@pk.compile`d: recorded on its first calls,
then replayed with each batch in one submit; `--eager` runs its Python every step instead.
The progress lines show the steady-state time per step, tokens per second and the time left.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
from pathlib import Path

import numpy as np

import pykern as pk
from cli import parser_for
from gpt_model import GPT, GPTConfig, loss_of
from step_timer import StepTimer

SIZES = {  # context, layers, d_model, heads, batch
    "tiny": (32, 1, 32, 2, 8),
    "small": (64, 2, 64, 4, 16),
    "large": (256, 6, 384, 6, 32),
}
ALPHABET = "\n" + "".join(chr(c) for c in range(32, 127))  # other characters read as '?'
CPU_KINDS = ("host", "cpu")  # pk.devices() kinds that compute on the CPU: host, lavapipe


def default_size(kind: str) -> str:
    """The model for a device of this `kind` (`pk.get_device().info.kind`): the tiny one where
    it computes on the CPU (the large one takes ~18 s a step there), the large one on a GPU."""
    return "tiny" if kind in CPU_KINDS else "large"


def corpus(max_chars: int) -> str:
    """The standard library's top-level modules, in name order, up to `max_chars`."""
    parts, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        total += len(text)
        if total >= max_chars:
            break
    return "".join(parts)[:max_chars]


def encode(text: str) -> np.ndarray:
    lookup = np.full(0x110000, ALPHABET.index("?"), np.int32)
    lookup[[ord(c) for c in ALPHABET]] = np.arange(len(ALPHABET), dtype=np.int32)
    return lookup[np.frombuffer(text.encode("utf-32-le"), np.uint32)]


def batch(data: np.ndarray, context: int, size: int,
          rng: np.random.Generator) -> tuple[pk.Tensor, pk.Tensor]:
    """`size` random windows of the data and the same windows one character on."""
    start = rng.integers(0, len(data) - context - 1, size)
    rows = start[:, None] + np.arange(context)
    return pk.asarray(data[rows]), pk.asarray(data[rows + 1])


@pk.no_grad()
def sample(model: GPT, prompt: str, length: int, rng: np.random.Generator,
           temperature: float = 0.8) -> str:
    """`length` characters after `prompt`, each drawn from the model's softmax."""
    model.eval()
    ids = list(encode(prompt))
    for _ in range(length):
        window = pk.asarray(np.array([ids[-model.cfg.context:]], np.int32))
        logits = model(window)[0, -1].numpy().astype(np.float64) / temperature
        p = np.exp(logits - logits.max())
        ids.append(int(rng.choice(len(p), p=p / p.sum())))
    model.train()
    return "".join(ALPHABET[i] for i in ids)


@pk.no_grad()
def evaluate(model: GPT, data: np.ndarray, batches: int, size: int,
             rng: np.random.Generator) -> float:
    model.eval()
    total = sum(float(loss_of(model, *batch(data, model.cfg.context, size, rng)))
                for _ in range(batches))
    model.train()
    return total / batches


def parse() -> argparse.Namespace:
    parser = parser_for(__doc__)
    parser.add_argument("--size", choices=sorted(SIZES), default=None,
                        help="the model (default: tiny where the device is a CPU, the host "
                        "device or lavapipe; large on a GPU)")
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    parser.add_argument("--lr", type=float, default=None,
                        help="AdamW's learning rate (default: 1e-3 for the large model, 3e-3 "
                        "for the others)")
    parser.add_argument("--amp", choices=("bf16", "f16"), default=None,
                        help="run the matrix products in this dtype (pk.autocast; default: "
                        "f32 throughout)")
    parser.add_argument("--chars", type=int, default=2_000_000,
                        help="characters of the corpus, 90%% of them for training")
    parser.add_argument("--sample", type=int, default=200,
                        help="characters to generate after training")
    parser.add_argument("--plot", default="train_gpt_loss.png",
                        help="the PNG file to write the loss curve to ('' for none)")
    parser.add_argument("--log-every", type=int, default=25,
                        help="print the loss every this many steps")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the weights, the batches and the sample")
    parser.add_argument("--eager", action="store_true",
                        help="run the training step's Python every step instead of replaying "
                        "the step recorded by pk.compile")
    parser.add_argument("--device", default=None,
                        help="the device, as pk.set_device takes it: an index or a name "
                        "(default: pykern's default device)")
    return parser.parse_args()


def main() -> list[float]:
    args = parse()
    if args.device is not None:
        pk.set_device(int(args.device) if args.device.isdigit() else args.device)
    if args.size is None:
        args.size = default_size(pk.get_device().info.kind)
    context, layers, d_model, heads, size = SIZES[args.size]
    data = encode(corpus(args.chars))
    cut = int(0.9 * len(data))
    train, val = data[:cut], data[cut:]
    pk.random.seed(args.seed)
    model = GPT(GPTConfig(len(ALPHABET), context, layers, d_model, heads))
    lr = args.lr if args.lr is not None else (1e-3 if args.size == "large" else 3e-3)
    opt = pk.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    rng = np.random.default_rng(args.seed)
    n_params = sum(p.size for p in model.parameters())
    print(f"the {args.size} model, {n_params / 1e6:.2f}M parameters, {len(data):,} characters "
          f"of the standard library, on {pk.get_device().info.name}", flush=True)
    def train_step(x: pk.Tensor, y: pk.Tensor) -> pk.Tensor:
        with pk.autocast(dtype=args.amp or pk.bf16, enabled=args.amp is not None):
            loss = loss_of(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    run = train_step if args.eager else pk.compile(train_step)
    losses: list[float] = []
    timer = StepTimer(args.steps)
    for step in range(1, args.steps + 1):
        loss = run(*batch(train, context, size, rng))
        losses.append(float(loss))
        timer.tick()
        if step % args.log_every == 0 or step in (1, args.steps):
            print(f"step {step:5d}  loss {losses[-1]:.4f}  "
                  f"({timer.summary(size * context)})", flush=True)
    print(f"validation loss {evaluate(model, val, 4, size, rng):.4f}")
    print("sample:\n" + sample(model, "def ", args.sample, rng))
    if args.plot:
        from plot import save_loss_curve

        save_loss_curve(args.plot, losses, title=f"char GPT ({args.size}) on the stdlib")
        print(f"wrote the loss curve to {args.plot}")
    return losses


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
