"""The sizes of the `host` benchmark: the host backend against numpy, lavapipe, Numba and Taichi.

The full sizes are those the issue states its targets for (2^24-element add and saxpy, 4096×4096
reductions, a 1024³ matmul). Lavapipe runs the reductions and the matmul on smaller inputs (a
1024×4096 matrix, a 512³ product: at the full sizes one call takes seconds there); its figures
are rates (GB/s, GFLOP/s), so they stay comparable. `--quick` is a smoke run of every case
(the MLP on random images of the digits' shape: importing scikit-learn alone takes seconds).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HostPlan:
    n: int  # elements of add and saxpy (on both devices)
    rows: int  # sums, softmax and layer_norm run on a rows×cols f32 matrix
    cols: int
    lavapipe_rows: int  # the rows of that matrix on lavapipe
    matmul: int  # an n×n×n f32 product
    lavapipe_matmul: int
    compile_kernels: int  # distinct new kernels compiled cold, then warm in a fresh process
    train_epochs: int  # epochs of examples/train_mlp.py timed (after the untimed warm-up)
    train_samples: int | None  # None: the digits data set; else that many random 8x8 images
    budget_s: float  # time spent timing each implementation of a case (calls follow)
    most_reps: int  # calls timed at most


HOST_FULL = HostPlan(n=2**24, rows=4096, cols=4096, lavapipe_rows=1024, matmul=1024,
                     lavapipe_matmul=512, compile_kernels=5, train_epochs=2,
                     train_samples=None, budget_s=0.6, most_reps=20)

HOST_QUICK = HostPlan(n=2**16, rows=256, cols=256, lavapipe_rows=256, matmul=128,
                      lavapipe_matmul=128, compile_kernels=2, train_epochs=1,
                      train_samples=256, budget_s=0.03, most_reps=3)
