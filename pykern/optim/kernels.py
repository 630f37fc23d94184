"""The fused step kernel: one launch updates every parameter of one dtype.

The kernel runs over the flat buffers of a `FlatStore` (see `pykern.optim.flat`), chunk by
chunk of `CHUNK` elements (segments start on chunk boundaries): the chunk's row of the chunk
table (`chunks[c] = (segment, lanes in use)`) names its parameter (its "segment") and how many
of its elements are not padding. Padding, and segments whose row says inactive (no gradient
this step), are skipped; the hyperparameters are read from the row `hyper[segment]`,
computed on the host in float64 as PyTorch computes its scalars in Python. Arithmetic is in
the compute dtype C (f64 for f64 parameters, f32 otherwise); for f16/bf16 parameters the
C-valued master weights are updated and their rounding is written to the parameter.

Two shapes of one computation (`update`): for a GPU (and lavapipe) an invocation per element,
a workgroup per chunk; for the host device an invocation per chunk, whose loop over the
chunk's elements LLVM vectorises (the row's values are the same all along it). The segment is
clamped to the table's rows, so that the host backend proves every access inside its array
at launch (an index read from memory could be anything) and runs the code unchecked.

What every optimizer does the same way is in the kernel: read the parameter and its
gradient, negate the gradient when maximizing, add the L2 term `weight_decay · p` (PyTorch's
`grad.add(param, alpha=weight_decay)`), write the result back. The update rule itself is a
`@pk.func` of `pykern.optim.rules`, a compile-time argument (one variant per rule, dtype and
set of state slots in use): it gets the parameter, the gradient, up to three flat state
buffers (the optimizer decides which; an unused one is bound to a one-element placeholder,
which the rule's variant never accesses) and the row, and returns the new parameter.
Columns past `FIRST_RULE_COLUMN` of a row are the rule's own.

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
STATE_SLOTS = 3  # flat state buffers a rule may use
SEGMENT, LANES = range(2)  # the columns of the chunk table

# the columns every row starts with: 1.0 when the parameter has a gradient this step, 1.0
# when maximizing, the L2 weight decay added to the gradient
ACTIVE, MAXIMIZE, WEIGHT_DECAY = range(3)
FIRST_RULE_COLUMN = 3


def compute_dtype(dtype: DType) -> DType:
    """The dtype the optimizer state is kept and the step computed in."""
    return dt.f64 if dtype == dt.f64 else dt.f32


def has_master(dtype: DType) -> bool:
    """Whether parameters of `dtype` get master weights in the compute dtype (f16, bf16)."""
    return compute_dtype(dtype) != dtype


@functools.lru_cache(maxsize=None)
def step_kernel(P: DType, rule: pk.Func, host: bool = False) -> pk.Kernel:  # noqa: N803
    """The step of the update `rule` for parameters of dtype `P`: for a GPU (and lavapipe), an
    invocation per element; for the host device (`host`), an invocation per chunk, whose loop
    over the chunk's elements LLVM vectorises (the row's values are the same for the loop)."""
    C = compute_dtype(P)  # noqa: N806
    LOW = has_master(P)  # noqa: N806
    RULE = rule  # noqa: N806

    @pk.func
    def update(P, C, values, grads, master, state0, state1, state2, hyper, s, i):  # noqa: N803
        """Element `i` of segment `s`, whose row says it is active (parameters of dtype `P`,
        computed in `C`)."""
        p: C = 0.0
        if LOW:
            p = master[i]
            if P(p) != values[i]:
                p = C(values[i])
        else:
            p = values[i]
        g = C(grads[i])
        if hyper[s, MAXIMIZE] != 0.0:
            g = -g
        wd = hyper[s, WEIGHT_DECAY]
        if wd != 0.0:
            g = g + wd * p
        p = RULE(p, g, state0, state1, state2, hyper, s, i)
        if LOW:
            master[i] = p
        values[i] = P(p)

    @pk.kernel(workgroup=(CHUNK, 1, 1))
    def optimizer_step(values: P[:], grads: P[:], master: C[:], state0: C[:], state1: C[:],
                       state2: C[:], chunks: pk.i32[:, :], hyper: C[:, :]):
        i = pk.global_id(0)
        c = pk.group_id(0)
        s = min(max(chunks[c, SEGMENT], 0), hyper.shape[0] - 1)
        if pk.local_id(0) < chunks[c, LANES] and hyper[s, ACTIVE] != 0.0:
            update(P, C, values, grads, master, state0, state1, state2, hyper, s, i)

    @pk.kernel(workgroup=(1, 1, 1))
    def optimizer_step_host(values: P[:], grads: P[:], master: C[:], state0: C[:],
                            state1: C[:], state2: C[:], chunks: pk.i32[:, :], hyper: C[:, :]):
        c = pk.global_id(0)
        s = min(max(chunks[c, SEGMENT], 0), hyper.shape[0] - 1)
        if hyper[s, ACTIVE] != 0.0:
            first = c * CHUNK
            for i in range(first, first + min(max(chunks[c, LANES], 0), CHUNK)):
                update(P, C, values, grads, master, state0, state1, state2, hyper, s, i)

    return optimizer_step_host if host else optimizer_step
