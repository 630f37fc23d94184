"""The sizes of the `ops` benchmark (GEMM-class and bandwidth-bound tensor ops), per device.

On a GPU they are the shapes the matrix-engine targets are stated for (issue 10): matmul 4096³
and 8192³ (f32 also 2048³), attention 4×16×4096 with head dims 64 and 128, ResNet-50 layers at
batch 32, 8192×4096 f32 for the bandwidth-bound ops. On lavapipe (two CPU cores here) the same
ops run at sizes a CPU gets through in a few minutes, and `--quick` is a smoke run of every case
in well under a minute. Dtypes are named as pykern spells them (`f16`, `bf16`, `i8`, ...); a
name this pykern or this device lacks skips its cases with a note.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConvShape:
    """One conv2d layer: a batch of `batch` NCHW images of `channels`×`size`×`size`, `out`
    filters of `kernel`×`kernel` at stride 1, padded to keep the size."""

    batch: int
    channels: int
    size: int
    out: int
    kernel: int

    @property
    def label(self) -> str:
        """`32x64x56x56 3x3->64`: the input, the filter size and the number of filters."""
        return (f"{self.batch}x{self.channels}x{self.size}x{self.size} "
                f"{self.kernel}x{self.kernel}->{self.out}")


@dataclass(frozen=True)
class OpsPlan:
    matmul: tuple[tuple[str, int], ...]  # (dtype, n): an n×n×n product
    matmul_ragged: tuple[tuple[str, int, int, int], ...]  # (dtype, M, K, N): (M×K)·(K×N)
    attention: tuple[tuple[int, int, int, int], ...]  # (batch, heads, length, head dim)
    attention_dtypes: tuple[str, ...]
    conv: tuple[ConvShape, ...]
    conv_dtypes: tuple[str, ...]
    rows: int  # softmax, layer_norm, sums and transpose run on a rows×cols f32 matrix
    cols: int
    check_rows: int  # rows of a large result compared with the float64 reference
    budget_s: float  # device time spent timing each case (the number of calls follows)
    most_reps: int  # calls timed per case at most


RESNET50 = (  # the 3×3 layers of ResNet-50's four stages, and a 1×1 reduction of the first
    ConvShape(32, 64, 56, 64, 3),
    ConvShape(32, 128, 28, 128, 3),
    ConvShape(32, 256, 14, 256, 3),
    ConvShape(32, 512, 7, 512, 3),
    ConvShape(32, 256, 56, 64, 1),
)

GPU_OPS = OpsPlan(
    matmul=(("f16", 2048), ("f16", 4096), ("f16", 8192), ("bf16", 4096), ("bf16", 8192),
            ("f32", 2048), ("f32", 4096), ("f32", 8192), ("i8", 4096)),
    # shapes that are not multiples of a block: 4000³, an MNIST-sized layer, the GPT head
    # (tokens × width)·(width × a vocabulary of 65)
    matmul_ragged=(("f16", 4000, 4000, 4000), ("f16", 1000, 784, 4096),
                   ("f16", 8192, 384, 65)),
    attention=((4, 16, 4096, 64), (4, 16, 4096, 128)),
    attention_dtypes=("f16", "f32"),
    conv=RESNET50,
    conv_dtypes=("f16", "f32"),
    rows=8192,
    cols=4096,
    check_rows=16,
    budget_s=0.25,
    most_reps=50,
)

CPU_OPS = OpsPlan(
    matmul=(("f16", 256), ("f16", 512), ("bf16", 256), ("f32", 256), ("f32", 512),
            ("i8", 256)),
    matmul_ragged=(("f16", 250, 250, 250), ("f16", 100, 784, 409), ("f16", 1024, 384, 65)),
    attention=((1, 2, 256, 64), (1, 2, 256, 128)),
    attention_dtypes=("f16", "f32"),
    conv=(ConvShape(1, 64, 56, 64, 3), ConvShape(1, 128, 28, 128, 3),
          ConvShape(1, 256, 14, 256, 3), ConvShape(1, 512, 7, 512, 3),
          ConvShape(1, 256, 56, 64, 1)),
    conv_dtypes=("f16", "f32"),
    rows=1024,
    cols=1024,
    check_rows=16,
    budget_s=0.2,
    most_reps=5,
)

QUICK_OPS = OpsPlan(
    matmul=(("f16", 64), ("bf16", 64), ("f32", 64), ("f32", 96), ("i8", 64)),
    matmul_ragged=(("f16", 37, 45, 70),),
    attention=((1, 2, 64, 64), (1, 2, 64, 128)),
    attention_dtypes=("f16", "f32"),
    conv=(ConvShape(2, 8, 14, 8, 3), ConvShape(2, 16, 7, 8, 1)),
    conv_dtypes=("f16", "f32"),
    rows=128,
    cols=256,
    check_rows=16,
    budget_s=0.02,
    most_reps=2,
)
