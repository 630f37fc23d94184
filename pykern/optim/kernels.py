"""The fused step kernels: one launch updates every parameter of one dtype.

Each kernel runs over the flat buffers of a `FlatStore` (see `pykern.optim.flat`): invocation
`i` handles element `i`, finds its parameter (its "segment") through the chunk table
(`chunk_segment[i // CHUNK]`: segments start on chunk boundaries), skips the padding after a
segment's end and the segments whose row says inactive (no gradient this step), and reads its
hyperparameters from the row `hyper[segment]`, computed on the host in float64 as PyTorch
computes its scalars in Python. Arithmetic is in the compute dtype C (f64 for f64 parameters,
f32 otherwise); for f16/bf16 parameters the C-valued master weights are updated and their
rounding is written to the parameter.

A master weight is trusted only while the parameter still holds its rounding: a parameter
written from outside since the last step (a model's `load_state_dict`, a manual
re-initialisation) has a value that is not, and then the parameter's value is taken.
"""

from __future__ import annotations

import functools

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType

CHUNK = 64  # elements per chunk-table entry; segments are padded to a multiple of it

# the columns of the SGD hyperparameter table (one row per parameter)
SGD_ACTIVE, SGD_LR, SGD_WEIGHT_DECAY, SGD_MOMENTUM, SGD_FIRST = range(5)
SGD_COLUMNS = 5

# the columns of the AdamW table: ADAM_WEIGHT1 is 1 - beta1 (the lerp weight), ADAM_DECAY
# is 1 - lr * weight_decay, ADAM_STEP_SIZE lr / (1 - beta1**step), ADAM_BC2_SQRT
# sqrt(1 - beta2**step)
(ADAM_ACTIVE, ADAM_DECAY, ADAM_WEIGHT1, ADAM_BETA2, ADAM_WEIGHT2, ADAM_EPS, ADAM_STEP_SIZE,
 ADAM_BC2_SQRT) = range(8)
ADAM_COLUMNS = 8


def compute_dtype(dtype: DType) -> DType:
    """The dtype the optimizer state is kept and the step computed in."""
    return dt.f64 if dtype == dt.f64 else dt.f32


def has_master(dtype: DType) -> bool:
    """Whether parameters of `dtype` get master weights in the compute dtype (f16, bf16)."""
    return compute_dtype(dtype) != dtype


@functools.lru_cache(maxsize=None)
def sgd_kernel(P: DType) -> pk.Kernel:  # noqa: N803
    """torch.optim.SGD's update (dampening 0, no Nesterov) for parameters of dtype `P`:
    d = g + wd * p; with momentum, b = d on a buffer's first step, else momentum * b + d, and
    d = b; then p = p - lr * d."""
    C = compute_dtype(P)  # noqa: N806
    LOW = has_master(P)  # noqa: N806

    @pk.kernel(workgroup=(CHUNK, 1, 1))
    def sgd_step(values: P[:], grads: P[:], master: C[:], momentum_buffer: C[:],
                 chunk_segment: pk.i32[:], segment_end: pk.i32[:], hyper: C[:, :]):
        i = pk.global_id(0)
        s = chunk_segment[i // CHUNK]
        if i < segment_end[s] and hyper[s, SGD_ACTIVE] != 0.0:
            p: C = 0.0
            if LOW:
                p = master[i]
                if P(p) != values[i]:
                    p = C(values[i])
            else:
                p = values[i]
            d = C(grads[i])
            wd = hyper[s, SGD_WEIGHT_DECAY]
            if wd != 0.0:
                d = d + wd * p
            momentum = hyper[s, SGD_MOMENTUM]
            if momentum != 0.0:
                if hyper[s, SGD_FIRST] == 0.0:
                    d = momentum * momentum_buffer[i] + d
                momentum_buffer[i] = d
            p = p - hyper[s, SGD_LR] * d
            if LOW:
                master[i] = p
            values[i] = P(p)

    return sgd_step


@functools.lru_cache(maxsize=None)
def adamw_kernel(P: DType) -> pk.Kernel:  # noqa: N803
    """torch.optim.AdamW's update (no amsgrad) for parameters of dtype `P`:
    p = p * (1 - lr * wd); m = lerp(m, g, 1 - beta1); v = beta2 * v + (1 - beta2) * g * g;
    p = p - step_size * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)."""
    C = compute_dtype(P)  # noqa: N806
    LOW = has_master(P)  # noqa: N806

    @pk.kernel(workgroup=(CHUNK, 1, 1))
    def adamw_step(values: P[:], grads: P[:], master: C[:], exp_avg: C[:], exp_avg_sq: C[:],
                   chunk_segment: pk.i32[:], segment_end: pk.i32[:], hyper: C[:, :]):
        i = pk.global_id(0)
        s = chunk_segment[i // CHUNK]
        if i < segment_end[s] and hyper[s, ADAM_ACTIVE] != 0.0:
            p: C = 0.0
            if LOW:
                p = master[i]
                if P(p) != values[i]:
                    p = C(values[i])
            else:
                p = values[i]
            g = C(grads[i])
            p = p * hyper[s, ADAM_DECAY]
            # torch's lerp: the form that is exact at its nearer end
            w = hyper[s, ADAM_WEIGHT1]
            m = exp_avg[i]
            if w < 0.5:
                m = m + w * (g - m)
            else:
                m = g - (g - m) * (1.0 - w)
            v = exp_avg_sq[i] * hyper[s, ADAM_BETA2] + hyper[s, ADAM_WEIGHT2] * g * g
            exp_avg[i] = m
            exp_avg_sq[i] = v
            denom = pk.sqrt(v) / hyper[s, ADAM_BC2_SQRT] + hyper[s, ADAM_EPS]
            p = p - hyper[s, ADAM_STEP_SIZE] * (m / denom)
            if LOW:
                master[i] = p
            values[i] = P(p)

    return adamw_step
