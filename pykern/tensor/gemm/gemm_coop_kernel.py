"""The cooperative-matrix GEMM kernel (see gemm_coop), built for a `CoopTiling`.

The operands arrive as 64-bit words (four 16-bit or eight 8-bit elements each) along their
contiguous dimension: A as (.., M, K/EPW); B as (.., K, N/EPW), or, when B is the transposed
view of a row-major matrix, as (.., N, K/EPW). Each k slice of `k_words` words of every row is
copied into shared memory by 8-byte loads, one slice ahead through registers so that the loads
overlap the multiplies. Loads past an operand's end read zeros (`ragged` kernels only), so that
any M, N and K multiply as if padded with zeros; results go to C straight from the tiles where
a block lies wholly inside C and C's rows are 16-byte aligned, else through shared memory (one
16 x 16 tile per subgroup at a time) to plain stores of the elements that exist.
"""

import functools

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.gemm.coop_tiling import PAD_WORDS, CoopTiling


@functools.lru_cache(maxsize=None)
def rect_staging(rows: int, words: int, threads: int, guarded: bool, split: bool
                 ) -> tuple[Func, Func]:
    """The @pk.funcs that move a rows x words rectangle of 64-bit words between a 4-d word
    array and a shared array, split over `threads` invocations (each carries every
    threads-th word, so neighbouring invocations read neighbouring words).
    `fetch(t, z1, z2, r0, w0, tid, check)` reads rows r0.. and words w0.. of t into a tuple
    (`guarded` kernels, where `check` is true: zeros past t's rows or words);
    `stash(s, s0, values, tid)` stores the tuple into rows s0.. of the shared array s, of
    64-bit words, or with `split` of 32-bit ones (two per word, low half first)."""
    LOADS = rows * words // threads  # noqa: N806
    NT, W, GUARDED, SPLIT = threads, words, guarded, split  # noqa: N806
    # where the threads are a whole number of rows, invocation tid carries the same word of
    # every row it touches: its row and word are worked out once per slice (a division and a
    # remainder), not once per element (Python's floor semantics on signed integers cost
    # several instructions each, and the copies are the kernel's integer work)
    WHOLE = threads % words == 0  # noqa: N806
    RSTEP = threads // words  # noqa: N806  (rows between one invocation's elements)

    @pk.func
    def place(tid, j):
        """(row, word) of element j of invocation tid's share, from the rectangle's corner."""
        if WHOLE:
            return tid // W + j * RSTEP, tid % W
        e = tid + j * NT
        return e // W, e % W

    @pk.func
    def fetch(t, z1, z2, r0, w0, tid, check):
        values = (pk.u64(0),) * LOADS
        guard = False
        if GUARDED:
            guard = check  # a block at an edge of t, or the last slice of K
        if guard:
            for j in pk.static_range(LOADS):
                dr, dw = place(tid, j)
                row = r0 + dr
                word = w0 + dw
                if row < t.shape[2] and word < t.shape[3]:
                    values[j] = t[z1, z2, row, word]
        else:
            for j in pk.static_range(LOADS):
                dr, dw = place(tid, j)
                values[j] = t[z1, z2, r0 + dr, w0 + dw]
        return values

    @pk.func
    def stash(s, s0, values, tid):
        for j in pk.static_range(LOADS):
            dr, dw = place(tid, j)
            if SPLIT:
                s[s0 + dr, 2 * dw] = pk.u32(values[j] & 0xFFFFFFFF)
                s[s0 + dr, 2 * dw + 1] = pk.u32(values[j] >> 32)
            else:
                s[s0 + dr, dw] = values[j]

    return fetch, stash


@functools.lru_cache(maxsize=None)
def edge_store(lanes: int, out: DType) -> Func:
    """`put(c, z1, z2, stage, sr, row0, col0, lane)`: the 16 x 16 tile staged in
    stage[sr:sr + 16, :] written to c at (row0, col0) where its elements exist in c, each lane
    writing every lanes-th element (16 consecutive lanes one row)."""
    PER_LANE, SG, OUT = 256 // lanes, lanes, out  # noqa: N806

    @pk.func
    def put(c, z1, z2, stage, sr, row0, col0, lane):
        for j in pk.static_range(PER_LANE):
            e = lane + j * SG
            row = row0 + e // 16
            col = col0 + e % 16
            if row < c.shape[2] and col < c.shape[3]:
                c[z1, z2, row, col] = OUT(stage[sr + e // 16, e % 16])

    return put


@functools.lru_cache(maxsize=None)
def store_tile(out: DType) -> Func:
    """`store(c, z1, z2, row, col, tile)`: the tile, converted to `out`, stored into c at
    (row, col) straight from the registers (c's rows 16-byte aligned)."""
    OUT = out  # noqa: N806

    @pk.func
    def store(c, z1, z2, row, col, tile):
        pk.coop_store(c, (z1, z2, row), col, pk.coop_convert(tile, OUT))

    return store


@pk.func
def store_nothing(c, z1, z2, row, col, tile):
    """The direct store of a kernel whose C rows are not aligned (never called there): it
    leaves c free of tile accesses, which a launch would check for alignment."""
    return


@functools.lru_cache(maxsize=None)
def b_access(ab: DType, b_transposed: bool, tiling: CoopTiling, fetch: Func
             ) -> tuple[Func, Func]:
    """B's two device functions, for B transposed or not: `fetch_b(b, z1, z2, k, c0, tid,
    last)` reads B's slice at word k of the k dimension for the columns c0.. through `fetch`
    (rect_staging's; `last`: K's last slice), `b_tile(sb, stage, col, kw)` loads B's k-step
    tile (k words kw.., columns col..) of shared stage `stage`."""
    AB, TB, FETCH_B = ab, b_transposed, fetch  # noqa: N806
    EPW = 8 // ab.itemsize  # noqa: N806  (elements per 64-bit word)
    TK = 4 * EPW  # noqa: N806  (the k of one tile multiply: 4 words)
    BN, BK = tiling.bn, tiling.k_words * EPW  # noqa: N806
    X = 2 if tiling.word_bits == 32 else 1  # noqa: N806  (shared words per 64-bit word)

    @pk.func
    def fetch_b(b, z1, z2, k, c0, tid, last):
        if TB:
            return FETCH_B(b, z1, z2, c0, k, tid, last or c0 + BN > b.shape[2])
        return FETCH_B(b, z1, z2, k * EPW, c0 // EPW, tid,
                       last or (c0 + BN) // EPW > b.shape[3])

    @pk.func
    def b_tile(sb, stage, col, kw):
        if TB:
            return pk.coop_load(sb, stage * BN + col, kw * X, TK, 16, pk.MATRIX_B, dtype=AB,
                                transpose=True)
        return pk.coop_load(sb, stage * BK + kw * EPW, (col // EPW) * X, TK, 16, pk.MATRIX_B,
                            dtype=AB)

    return fetch_b, b_tile


@functools.lru_cache(maxsize=None)
def block_origin_func(tiling: CoopTiling) -> Func:
    """`block_origin()`: the first row and column of this workgroup's block of C: workgroups
    in order of their index walk the blocks a column of `group_m` block rows at a time (1:
    row by row)."""
    BM, BN, GROUP = tiling.bm, tiling.bn, tiling.group_m  # noqa: N806

    @pk.func
    def block_origin():
        if GROUP == 1:
            return pk.group_id(1) * BM, pk.group_id(0) * BN
        nbx = pk.num_groups(0)
        nby = pk.num_groups(1)
        pid = pk.group_id(1) * nbx + pk.group_id(0)
        per_group = GROUP * nbx
        first = (pid // per_group) * GROUP
        rows = min(nby - first, GROUP)
        within = pid % per_group
        return (first + within % rows) * BM, (within // rows) * BN

    return block_origin


@functools.lru_cache(maxsize=None)
def build(ab: DType, out: DType, b_transposed: bool, lanes: int, tiling: CoopTiling,
          ragged: bool, c_aligned: bool) -> pk.Kernel:
    """The kernel for operands of `ab` into results of `out`, B transposed or not, subgroups
    of `lanes`; `ragged` adds the zero-filling guards to the loads (shapes that are not
    multiples of the block), `c_aligned` False sends every result through shared memory."""
    AB, TB = ab, b_transposed  # noqa: N806
    ACC = pk.f32 if ab.is_float else (pk.i32 if ab.is_signed else pk.u32)  # noqa: N806
    EPW = 8 // ab.itemsize  # noqa: N806  (elements per 64-bit word)
    TK = 4 * EPW  # noqa: N806  (the k of one tile multiply: 4 words)
    KW = tiling.k_words  # noqa: N806  (words of a row per k slice)
    BM, BN, BK = tiling.bm, tiling.bn, KW * EPW  # noqa: N806
    BW = BN // EPW  # noqa: N806  (words of B's block along N)
    SG, NSG = lanes, tiling.subgroups  # noqa: N806
    SGN, TM, TN = tiling.sg_n, tiling.tiles_m, tiling.tiles_n  # noqa: N806
    ST = tiling.stages  # noqa: N806
    NT = SG * NSG  # noqa: N806
    SPLIT = tiling.word_bits == 32  # noqa: N806
    X = 2 if SPLIT else 1  # noqa: N806  (shared words per 64-bit word)
    WORD = pk.u32 if SPLIT else pk.u64  # noqa: N806
    FETCH_A, STASH_A = rect_staging(BM, KW, NT, ragged, SPLIT)  # noqa: N806
    if TB:
        FETCH_B, STASH_B = rect_staging(BN, KW, NT, ragged, SPLIT)  # noqa: N806
        B_ROWS, B_WORDS = BN, KW  # noqa: N806
    else:
        FETCH_B, STASH_B = rect_staging(BK, BW, NT, ragged, SPLIT)  # noqa: N806
        B_ROWS, B_WORDS = BK, BW  # noqa: N806
    PUT = edge_store(lanes, out)  # noqa: N806
    EDGES = ragged or not c_aligned  # noqa: N806
    DIRECT = c_aligned  # noqa: N806
    STORE = store_tile(out) if c_aligned else store_nothing  # noqa: N806

    fetch_b, b_tile = b_access(ab, b_transposed, tiling, FETCH_B)
    block_origin = block_origin_func(tiling)

    @pk.kernel(workgroup=(SG, NSG, 1))
    def matmul_coop(a: pk.u64[:, :, :, :], b: pk.u64[:, :, :, :], c: out[:, :, :, :],
                    nb2: pk.i32):
        # sa: ST stages of A's BM x KW-word slice; sb: of B's (BK x BW words, or BN x KW when
        # B is transposed); rows padded against bank conflicts. edge: one result tile per
        # subgroup on its way to C at the edges. Subgroup s computes the (TM x TN)-tile part
        # (s // SGN, s % SGN) of the block, acc[TN * r + t] at its rows 16 r, columns 16 t.
        sa = pk.shared(WORD, (ST * BM, (KW + PAD_WORDS) * X))
        sb = pk.shared(WORD, (ST * B_ROWS, (B_WORDS + PAD_WORDS) * X))
        edge = pk.shared(ACC, (NSG * 16, 16))
        s = pk.local_id(1)
        lane = pk.local_id(0)
        tid = s * SG + lane
        r0, c0 = block_origin()
        z1 = pk.group_id(2) // nb2
        z2 = pk.group_id(2) % nb2
        wr = (s // SGN) * (TM * 16)
        wc = (s % SGN) * (TN * 16)
        nk = a.shape[3]
        acc = (pk.coop_fill(ACC, 16, 16, pk.ACCUMULATOR, 0),) * (TM * TN)
        ta = (pk.coop_fill(AB, 16, TK, pk.MATRIX_A, 0),) * TM
        edge_a = r0 + BM > a.shape[2]
        xa = FETCH_A(a, z1, z2, r0, 0, tid, edge_a or KW >= nk)
        xb = fetch_b(b, z1, z2, 0, c0, tid, KW >= nk)
        if ST == 2:
            STASH_A(sa, 0, xa, tid)
            STASH_B(sb, 0, xb, tid)
            pk.barrier()
        for k in range(KW, nk + KW, KW):
            cur = 0
            if ST == 2:
                cur = (k // KW - 1) % 2
            else:
                STASH_A(sa, 0, xa, tid)
                STASH_B(sb, 0, xb, tid)
                pk.barrier()
            if k < nk:  # the next slice, in registers while this one is multiplied
                xa = FETCH_A(a, z1, z2, r0, k, tid, edge_a or k + KW >= nk)
                xb = fetch_b(b, z1, z2, k, c0, tid, k + KW >= nk)
            for kw in pk.static_range(0, KW, 4):  # k steps of TK elements (4 words)
                for r in pk.static_range(TM):
                    ta[r] = pk.coop_load(sa, cur * BM + wr + 16 * r, kw * X, 16, TK,
                                         pk.MATRIX_A, dtype=AB)
                for t in pk.static_range(TN):
                    tb = b_tile(sb, cur, wc + 16 * t, kw)
                    for r in pk.static_range(TM):
                        acc[TN * r + t] = pk.coop_mma(ta[r], tb, acc[TN * r + t])
            if ST == 2:
                if k < nk:  # into the other stage, read last before the previous barrier
                    STASH_A(sa, (1 - cur) * BM, xa, tid)
                    STASH_B(sb, (1 - cur) * B_ROWS, xb, tid)
            pk.barrier()
        inside = r0 + BM <= c.shape[2] and c0 + BN <= c.shape[3]
        if DIRECT and (not EDGES or inside):
            for r in pk.static_range(TM):
                for t in pk.static_range(TN):
                    STORE(c, z1, z2, r0 + wr + 16 * r, c0 + wc + 16 * t, acc[TN * r + t])
        elif EDGES:  # the same branch for the whole workgroup: its barriers are reached
            for r in pk.static_range(TM):
                for t in pk.static_range(TN):
                    pk.coop_store(edge, s * 16, 0, acc[TN * r + t])
                    pk.barrier()
                    PUT(c, z1, z2, edge, s * 16, r0 + wr + 16 * r, c0 + wc + 16 * t, lane)
                    pk.barrier()

    return matmul_coop
