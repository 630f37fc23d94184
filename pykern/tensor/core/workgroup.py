"""What the op library's workgroup kernels share: merging the partial results that the
invocations of a workgroup leave in shared memory."""

import pykern as pk


@pk.func
def merge_halving(merge, parts, t, wg):
    """Merges the partial results of a workgroup of `wg` invocations (a power of two) into
    column 0 of the shared array `parts` (a column per invocation `t`, a row per quantity
    kept) by halving: `merge(parts, i, j)`, a `@pk.func`, folds column j into column i. Every
    invocation calls it after writing its column; column 0 then holds the workgroup's
    result, which every invocation may read."""
    pk.barrier()
    step = wg >> 1
    while step > 0:
        if t < step:
            merge(parts, t, t + step)
        pk.barrier()
        step = step >> 1


@pk.func
def add_columns(parts, i, j):
    """Column j added into column i (a `merge` of `merge_halving` for sums)."""
    for q in range(parts.shape[0]):
        parts[q, i] = parts[q, i] + parts[q, j]
