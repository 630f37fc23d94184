"""Staging of 128 x 8-word operand slices for the tile kernels of the op library that work in
workgroups of 4 subgroups (conv2d's filters, attention's limits): `staging` and the limits the
kernels share.

The tile kernels take a workgroup of 4 subgroups, of the device's subgroup size (`lanes`: 1024
words of a slice split evenly over 4 * lanes invocations), and shared memory for their stages:
the largest of them (attention_coop at head dimension 128) takes 43 KiB.
"""

import functools

import pykern as pk
from pykern.lang.func import Func

SHARED_BYTES = 48 * 1024
SLICE_WORDS = 1024  # 64-bit words of a staged 128 x 8-word slice


def lanes_fit(lanes: int) -> bool:
    """Whether 4 subgroups of `lanes` split a slice evenly (8 to 256 invocations a
    subgroup)."""
    return 8 <= lanes and SLICE_WORDS % (4 * lanes) == 0


@functools.lru_cache(maxsize=None)
def staging(lanes: int, guarded: bool = False) -> tuple[Func, Func]:
    """The @pk.funcs that move a 128 x 8-word slice of an operand (1024 64-bit words) between
    memory and shared memory for a workgroup of 4 subgroups of `lanes` invocations: each
    invocation carries every NT-th word, NT = 4 * lanes. `fetch(t, z1, z2, r0, w0, tid)` reads
    rows r0.. and words w0.. of the 4-d word array t into a tuple (`guarded`: zero for the
    rows and words past t's end); `stash(s, words, tid)` stores that tuple into the
    (128, 8 + pad) shared array s. Shared by matmul's operands and conv2d's filters."""
    NT = 4 * lanes  # noqa: N806
    LOADS = SLICE_WORDS // NT  # noqa: N806
    GUARDED = guarded  # noqa: N806
    RSTEP = NT // 8  # noqa: N806  (NT is a multiple of 8: each invocation keeps one word)

    @pk.func
    def fetch(t, z1, z2, r0, w0, tid):
        # the invocation's row and word, once: not a floor division per element
        row0 = r0 + tid // 8
        word = w0 + tid % 8
        words = (pk.u64(0),) * LOADS
        for j in pk.static_range(LOADS):
            row = row0 + j * RSTEP
            if GUARDED:
                if row < t.shape[2] and word < t.shape[3]:
                    words[j] = t[z1, z2, row, word]
            else:
                words[j] = t[z1, z2, row, word]
        return words

    @pk.func
    def stash(s, words, tid):
        row0 = tid // 8
        word = tid % 8
        for j in pk.static_range(LOADS):
            s[row0 + j * RSTEP, word] = words[j]

    return fetch, stash


