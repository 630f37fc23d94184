"""The cases of the `train` benchmark (benchmarks/training.py): examples/train_gpt.py's GPT at
the sizes the issue measured on the GPU (6 layers × 384 over 256 tokens, batch 32, in f32 and
under bf16 autocast; 2 × 128 over 64 tokens, batch 16, where the host's per-op cost decides)
and an MLP 784-256-10 with SGD, batch 64; smaller GPTs on a CPU device, where the large one
takes many seconds a step."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainCase:
    """One training step to time: a GPT (`shape` = context, layers, d_model, heads, batch) or
    an MLP (`shape` = inputs, hidden, classes, batch), `amp` the autocast dtype or None, and
    how close the first losses of pykern and torch must be (`rtol`)."""

    kind: str  # "gpt" or "mlp"
    shape: tuple[int, ...]
    amp: str | None = None
    rtol: float = 2e-4

    @property
    def name(self) -> str:
        if self.kind == "mlp":
            n_in, hidden, classes, batch = self.shape
            return f"mlp {n_in}-{hidden}-{classes} b{batch} sgd"
        context, layers, d_model, _, batch = self.shape
        mode = "bf16 autocast" if self.amp else "f32"
        return f"gpt {layers}x{d_model} ctx{context} b{batch} {mode}"

    @property
    def tokens(self) -> int:
        """Tokens (GPT) or samples (MLP) per step."""
        return self.shape[-1] * (self.shape[0] if self.kind == "gpt" else 1)


MLP = TrainCase("mlp", (784, 256, 10, 64))
GPU_TRAINING = (
    TrainCase("gpt", (256, 6, 384, 6, 32)),
    TrainCase("gpt", (256, 6, 384, 6, 32), "bf16", 3e-2),
    TrainCase("gpt", (64, 2, 128, 4, 16)),
    MLP,
)
CPU_TRAINING = (
    TrainCase("gpt", (32, 1, 32, 2, 8)),
    TrainCase("gpt", (32, 1, 32, 2, 8), "bf16", 3e-2),
    TrainCase("gpt", (64, 2, 128, 4, 16)),
    MLP,
)
QUICK_TRAINING = (
    TrainCase("gpt", (32, 1, 32, 2, 8)),
    TrainCase("gpt", (32, 1, 32, 2, 8), "bf16", 3e-2),
    MLP,
)
