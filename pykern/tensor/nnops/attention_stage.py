"""How the attention kernels (the fused forward in nn_ops.py, the two backward passes in
attention_backward.py) stage rows of an operand in shared memory, the workgroup's invocations
reading it together."""

from __future__ import annotations

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.core.strided import cdiv


def row_stager(cf: DType, width: int, rows: int, wg: int, cols: int | None = None,
               repeat_last: bool = False) -> Func:
    """`stage(st, src, z1, z2, r0, n, t)`: st[j, c] = src[z1, z2, r0 + j, c] (as `cf`) for the
    stage's `rows` rows and `width` columns, read by invocation t of the `wg` that fill it
    together. Past row n (or column `cols`, the width by default) the stage holds zeros; with
    `repeat_last`, row n - 1 again (every column then in range of src)."""
    CF, W, CELLS, WG = cf, width, rows * width, wg  # noqa: N806
    COLS, REPEAT = width if cols is None else cols, repeat_last  # noqa: N806
    LOADS = cdiv(rows * width, wg)  # noqa: N806

    @pk.func
    def stage(st, src, z1, z2, r0, n, t):
        for r in range(LOADS):
            e = t + r * WG
            if e < CELLS:
                j = e // W
                c = e % W
                if REPEAT:
                    st[j, c] = CF(src[z1, z2, min(r0 + j, n - 1), c])
                else:
                    value: CF = 0.0
                    if r0 + j < n and c < COLS:
                        value = CF(src[z1, z2, r0 + j, c])
                    st[j, c] = value

    return stage
