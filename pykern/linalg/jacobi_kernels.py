"""The kernels of the one-sided (Hestenes) Jacobi method that `svd` and `eigh` share.

The working matrix W holds the vectors being orthogonalised as rows: W[b, i, :] (length L) is
column i of the input (or of its transpose), and Vt[b, i, :] (length R) accumulates the plane
rotations applied to row i. A rotation of the pair (p, q) makes rows p and q of W orthogonal;
the parallel (round-robin) ordering pairs every row with every other once per sweep in R - 1
steps of R/2 independent rotations (R even: an odd count is padded with a zero row, which no
rotation touches). Converged rows: W[b, i] = s_i u_i, Vt[b, i] = v_i.

Three variants of the sweep: small matrices in shared memory, several matrices per workgroup
and one invocation per pair, sweeping until no pair rotates (or a sweep budget set by the
device's loop-iteration cap is spent); large ones over global memory, on GPUs one launch per
step of a round-robin over blocks of rows, a workgroup per pair of blocks rotating every pair
of their rows with the rows in registers (its invocations splitting the dot products), on CPU
devices one launch per step of the rows' round-robin, an invocation per pair.

Every kernel is generic over the element dtype D, real or complex (norms, tolerances and
values in D.real_dtype). For complex rows the dot product is γ = Σ conj(x_i) y_i, and the
rotation that makes the pair orthogonal is the real one of (α, β, |γ|) applied to x and to
ph·y, with the unit phase ph = conj(γ)/|γ| (ph = 1 for real rows, which then rotate exactly
as before). The update [[c, -s·ph], [s, c·ph]] is unitary, so Vt stays unitary.
"""


import functools

import pykern as pk

from pykern.lang.dtypes import DType

SHARED_THREADS = 64  # invocations per workgroup of the shared-memory sweeps
SHARED_BYTES = 16 * 1024  # shared memory they use (every Vulkan device has it)


@pk.func
def pair_of(s, k, r):
    """The pair (p, q) that slot `k` of step `s` rotates, of rows 0..r-1 (r even): row 0 stays
    put while the other r - 1 circle (the round-robin tournament)."""
    c = r - 1
    p = 0
    q = 1 + s % c
    if k > 0:
        p = 1 + (s + k) % c
        q = 1 + (s - k + c) % c
    return p, q


@pk.func
def rotation(alpha, beta, gamma, tol):
    """(c, s) of the rotation that makes two rows of squared norms alpha, beta and dot product
    gamma orthogonal, or (1, 0) when they already are to `tol` (relative) — Rutishauser's
    formulas with the smaller angle, overflow-free for nearly orthogonal rows."""
    one = alpha * 0 + 1
    c = one
    s = one * 0
    if abs(gamma) > tol * pk.sqrt(alpha) * pk.sqrt(beta):
        zeta = (beta - alpha) / (2 * gamma)
        az = abs(zeta)
        root = az * pk.sqrt(1 + (1 / az) * (1 / az)) if az > 1 else pk.sqrt(1 + az * az)
        t = one / (az + root)
        if zeta < 0:
            t = -t
        c = one / pk.sqrt(1 + t * t)
        s = c * t
    return c, s


@pk.func
def sq(x):
    """|x|² of a real or complex value, in its real type."""
    return (pk.conj(x) * x).real


@pk.func
def unit_rotation(alpha, beta, gamma, tol):
    """(c, s, ph) for real rows: the rotation of `rotation` and the phase 1."""
    c, s = rotation(alpha, beta, gamma, tol)
    return c, s, c * 0 + 1


@pk.func
def phase_rotation(alpha, beta, gamma, tol):
    """(c, s, ph) for complex rows: the rotation of (alpha, beta, |gamma|) and the unit phase
    ph = conj(gamma)/|gamma| that makes gamma real (1 where gamma is 0)."""
    g = abs(gamma)
    c, s = rotation(alpha, beta, g, tol)
    ph = gamma * 0 + 1
    if s != 0:
        ph = complex(gamma.real / g, -gamma.imag / g)
    return c, s, ph


@pk.func
def rotate(sm, p0, q0, n, c, s, ph):
    """The rotation (c, s, phase ph) of the n-element rows at p0 and q0 of sm, in place."""
    for i in range(n):
        x = sm[p0 + i]
        y = ph * sm[q0 + i]
        sm[p0 + i] = c * x - s * y
        sm[q0 + i] = s * x + c * y


def rotation_for(dtype: DType) -> object:
    """The (c, s, ph) rotation device function for rows of `dtype`."""
    return phase_rotation if dtype.is_complex else unit_rotation


@functools.lru_cache(maxsize=None)
def shared_sweeps(dtype: DType, with_v: bool) -> pk.Kernel:
    """Sweeps over matrices held in shared memory, one invocation per pair: `per_group`
    matrices of r rows (r even) of length `ln` per workgroup of SHARED_THREADS, their W and Vt
    in one shared array of SHARED_BYTES (the host sizes `per_group` to fit). Runs at most
    `sweeps` sweeps; `flags[b]` is set to 1 where the last one still rotated (the host then
    launches more). With `identity`, Vt starts as the identity instead of being read."""
    D, R, ROT = dtype, dtype.real_dtype, rotation_for(dtype)  # noqa: N806
    T, WITH_V = SHARED_THREADS, with_v  # noqa: N806
    CAP = SHARED_BYTES // dtype.itemsize  # noqa: N806

    @pk.kernel(workgroup=(T, 1, 1))
    def jacobi_shared(w: D[:, :, :], vt: D[:, :, :], flags: pk.i32[:], r: int, ln: int,
                      count: int, per_group: int, sweeps: int, tol: R, identity: int):
        sm = pk.shared(D, CAP)
        busy = pk.shared(pk.i32, 1)
        t = pk.local_id(0)
        pb = r // 2
        g = t // pb
        k = t % pb
        b = pk.group_id(0) * per_group + g
        live = g < per_group and b < count
        bw = g * r * ln  # this matrix's W rows in sm, then its Vt rows after all the W
        bv = per_group * r * ln + g * r * r
        if live:
            for e in range(k, r * ln, pb):
                sm[bw + e] = w[b, e // ln, e % ln]
            if WITH_V:
                for e in range(k, r * r, pb):
                    if identity != 0:  # the first launch starts the rotations from I
                        sm[bv + e] = 1 if e // r == e % r else 0
                    else:
                        sm[bv + e] = vt[b, e // r, e % r]
        rotated = 1
        sweep = 0
        while sweep < sweeps and rotated != 0:  # uniform: every invocation reads one busy
            sweep += 1
            if t == 0:
                busy[0] = 0
            pk.barrier()
            for step in range(r - 1):
                if live:
                    p, q = pair_of(step, k, r)
                    wp = bw + p * ln
                    wq = bw + q * ln
                    alpha: R = 0
                    beta: R = 0
                    gamma: D = 0
                    for i in range(ln):
                        x = sm[wp + i]
                        y = sm[wq + i]
                        alpha += sq(x)
                        beta += sq(y)
                        gamma += pk.conj(x) * y
                    c, s, ph = ROT(alpha, beta, gamma, tol)
                    if s != 0:
                        pk.atomic_add(busy, 0, 1)
                        rotate(sm, wp, wq, ln, c, s, ph)
                        if WITH_V:
                            rotate(sm, bv + p * r, bv + q * r, r, c, s, ph)
                pk.barrier()
            rotated = busy[0]
            pk.barrier()
        if live:
            for e in range(k, r * ln, pb):
                w[b, e // ln, e % ln] = sm[bw + e]
            if WITH_V:
                for e in range(k, r * r, pb):
                    vt[b, e // r, e % r] = sm[bv + e]
            if k == 0:
                flags[b] = 1 if rotated != 0 else 0

    return jacobi_shared


@functools.lru_cache(maxsize=None)
def step_by_invocations(dtype: DType, with_v: bool) -> pk.Kernel:
    """One step of a sweep over global memory for CPU devices (lavapipe, the host), where an
    invocation per pair keeps the SIMD lanes busy on different pairs without barriers
    (measured 1.6 to 3 times faster there than a workgroup or a subgroup per pair): invocation
    (k, b) rotates pair k of matrix b. Sets flags[b] = 1 when it rotates."""
    D, R, ROT = dtype, dtype.real_dtype, rotation_for(dtype)  # noqa: N806
    WITH_V = with_v  # noqa: N806

    @pk.kernel
    def jacobi_step_lanes(w: D[:, :, :], vt: D[:, :, :], flags: pk.i32[:], r: int, step: int,
                          tol: R):
        b = pk.global_id(1)
        ln = w.shape[2]
        p, q = pair_of(step, pk.global_id(0), r)
        alpha: R = 0
        beta: R = 0
        gamma: D = 0
        for i in range(ln):
            x = w[b, p, i]
            y = w[b, q, i]
            alpha += sq(x)
            beta += sq(y)
            gamma += pk.conj(x) * y
        c, s, ph = ROT(alpha, beta, gamma, tol)
        if s != 0:
            flags[b] = 1
            for i in range(ln):
                x = w[b, p, i]
                y = ph * w[b, q, i]
                w[b, p, i] = c * x - s * y
                w[b, q, i] = s * x + c * y
            if WITH_V:
                for i in range(r):
                    x = vt[b, p, i]
                    y = ph * vt[b, q, i]
                    vt[b, p, i] = c * x - s * y
                    vt[b, q, i] = s * x + c * y

    return jacobi_step_lanes


@functools.lru_cache(maxsize=None)
def row_norms(dtype: DType) -> pk.Kernel:
    """norms[b, i] = ‖W[b, i, :]‖, scaled against overflow and underflow."""
    D, R = dtype, dtype.real_dtype  # noqa: N806

    @pk.kernel
    def jacobi_norms(w: D[:, :, :], norms: R[:, :]):
        i = pk.global_id(0)
        b = pk.global_id(1)
        big: R = 0
        for j in range(w.shape[2]):
            big = max(big, abs(w[b, i, j]))
        total: R = 0
        if big > 0:
            for j in range(w.shape[2]):
                x = w[b, i, j] / big
                total += sq(x)
        norms[b, i] = big * pk.sqrt(total)

    return jacobi_norms


@functools.lru_cache(maxsize=None)
def sorted_outputs(dtype: DType) -> pk.Kernel:
    """Invocation (i, b) finds the rank of row i among the first n norms (descending or
    ascending, ties by index) and writes its value minus shift[b], its normalised W row (as
    long[b, rank, :], zeros where the norm is 0; where `with_long`) and its Vt row (short[b,
    rank, :], the first short.shape[2] entries, conjugated: rows of Vᴴ; where `with_short`)
    to their sorted places."""
    D, R = dtype, dtype.real_dtype  # noqa: N806

    @pk.kernel
    def jacobi_sorted(norms: R[:, :], w: D[:, :, :], vt: D[:, :, :], shift: R[:],
                      values: R[:, :], long: D[:, :, :], short: D[:, :, :], descending: int,
                      with_long: int, with_short: int):
        i = pk.global_id(0)
        b = pk.global_id(1)
        n = values.shape[1]
        key = norms[b, i]
        rank = 0
        for j in range(n):
            other = norms[b, j]
            before = other > key
            if descending == 0:
                before = other < key
            if before or (other == key and j < i):
                rank += 1
        values[b, rank] = key - shift[b]
        if with_long != 0:
            scale: R = 0
            if key > 0:
                scale = 1 / key
            for j in range(long.shape[2]):
                long[b, rank, j] = w[b, i, j] * scale
        if with_short != 0:
            for j in range(short.shape[2]):
                short[b, rank, j] = pk.conj(vt[b, i, j])

    return jacobi_sorted


@functools.lru_cache(maxsize=None)
def completed_rows(dtype: DType) -> pk.Kernel:
    """Rows r ≥ k_b of `long` (k_b: the count of nonzero values of matrix b) taken from the
    rows of `basis` (an orthonormal basis of what the first k_b rows leave out): long[b, r] =
    basis[b, r - k_b]."""
    D, R = dtype, dtype.real_dtype  # noqa: N806

    @pk.kernel
    def jacobi_complete(values: R[:, :], basis: D[:, :, :], long: D[:, :, :]):
        r = pk.global_id(0)
        b = pk.global_id(1)
        kept = 0
        for j in range(values.shape[1]):
            if values[b, j] > 0:
                kept += 1
        if r >= kept:
            for j in range(long.shape[2]):
                long[b, r, j] = basis[b, r - kept, j]

    return jacobi_complete


@functools.lru_cache(maxsize=None)
def symmetric_rows(dtype: DType) -> pk.Kernel:
    """Invocation (i, b): row i of the symmetric (Hermitian) matrix whose lower triangle is
    a[b]'s, into w[b, i, :] (the upper triangle mirrored and conjugated, the diagonal's real
    part: the imaginary part of a Hermitian diagonal is ignored, as LAPACK does), and its
    Gershgorin bound on -λ_min, Σ_j≠i |a_ij| - a_ii, into g[b, i]."""
    D, R = dtype, dtype.real_dtype  # noqa: N806

    @pk.kernel
    def jacobi_symmetric(a: pk.Array, w: D[:, :, :], g: R[:, :]):
        i = pk.global_id(0)
        b = pk.global_id(1)
        total: R = 0
        diagonal = D(a[b, i, i]).real
        for j in range(w.shape[2]):
            x = D(a[b, i, j]) if j < i else pk.conj(D(a[b, j, i]))
            if j == i:
                x = D(diagonal)
            w[b, i, j] = x
            if j != i:
                total += abs(x)
        g[b, i] = total - diagonal

    return jacobi_symmetric


@functools.lru_cache(maxsize=None)
def shifted_diagonal(dtype: DType) -> pk.Kernel:
    """Invocation (i, b): σ_b = max(0, max_j g[b, j]) added to w[b, i, i]; σ_b into shift[b]."""
    D, R = dtype, dtype.real_dtype  # noqa: N806

    @pk.kernel
    def jacobi_shift(g: R[:, :], w: D[:, :, :], shift: R[:]):
        i = pk.global_id(0)
        b = pk.global_id(1)
        sigma: R = 0
        for j in range(g.shape[1]):
            sigma = max(sigma, g[b, j])
        w[b, i, i] = w[b, i, i] + sigma
        if i == 0:
            shift[b] = sigma

    return jacobi_shift


def block_schedule(rows: int) -> tuple[int, ...]:
    """The round-robin ordering of `rows` (even) rows, flattened: for step s and slot k, the
    pair's rows at [2 (s·rows/2 + k)] and [2 (s·rows/2 + k) + 1] (constants for the kernel)."""
    flat: list[int] = []
    c = rows - 1
    for s in range(c):
        for k in range(rows // 2):
            p, q = (0, 1 + s % c) if k == 0 else (1 + (s + k) % c, 1 + (s - k + c) % c)
            flat += [p, q]
    return tuple(flat)


@functools.lru_cache(maxsize=None)
def block_rows(dtype: DType, with_v: bool, threads: int, per_w: int, per_v: int, half: int
               ) -> tuple[pk.Func, pk.Func]:
    """step_by_blocks's moves of its 2·half rows between memory and registers: invocation t
    holds the columns t, t + T, ... (`per_w` of W's, `per_v` of Vt's), row j < half of block
    bp's rows at j, of block bq's at half + j. `load_rows(w, vt, xw, xv, acc, b, t, bp, bq, ln,
    r)` reads them (zeros past the ln columns of W and r of Vt), each row's squared norm over
    the invocation's columns into acc; `store_rows(w, vt, xw, xv, b, t, bp, bq, ln, r)` writes
    them back."""
    D, R = dtype, dtype.real_dtype  # noqa: N806
    T, CW, CV, H, WITH_V = threads, per_w, per_v, half, with_v  # noqa: N806
    RB = 2 * half  # noqa: N806

    @pk.func
    def load_rows(w, vt, xw, xv, acc, b, t, bp, bq, ln, r):
        for j in pk.static_range(RB):
            row = bp * H + j if j < H else bq * H + j - H
            a: R = 0
            for c in pk.static_range(CW):
                col = t + c * T
                x = w[b, row, col] if col < ln else D(0)
                xw[j, c] = x
                a += sq(x)
            acc[j] = D(a)
            if WITH_V:
                for c in pk.static_range(CV):
                    col = t + c * T
                    xv[j, c] = vt[b, row, col] if col < r else D(0)

    @pk.func
    def store_rows(w, vt, xw, xv, b, t, bp, bq, ln, r):
        for j in pk.static_range(RB):
            row = bp * H + j if j < H else bq * H + j - H
            for c in pk.static_range(CW):
                col = t + c * T
                if col < ln:
                    w[b, row, col] = xw[j, c]
            if WITH_V:
                for c in pk.static_range(CV):
                    col = t + c * T
                    if col < r:
                        vt[b, row, col] = xv[j, c]

    return load_rows, store_rows


@functools.lru_cache(maxsize=None)
def step_by_blocks(dtype: DType, with_v: bool, threads: int, per_w: int, per_v: int,
                   half: int, groups: int) -> pk.Kernel:
    """One step of a sweep over blocks of `half` rows for GPUs: workgroup (k, b) takes the
    pair of blocks (P, Q) that slot k of the blocks' round-robin step `step` pairs, and
    rotates every pair of their 2·half rows once (the rows' own round-robin, 2·half - 1 inner
    steps), with the rows' entries held in registers: invocation t keeps the columns t, t + T,
    ... (`per_w` of W's, `per_v` of Vt's; one kernel per count). The rows' squared norms are
    summed once, then carried through the rotations (‖x'‖² = c²α + s²β - 2cs·Re(ph γ), as LAPACK's
    gesvj updates them); an inner step sums only its pairs' products γ, through subgroup
    operations and shared memory (`groups` subgroups, two barriers); everything else is the
    invocation's own columns. A sweep is `blocks` - 1 launches instead of the rows' R - 1.
    Sets flags[b] = 1 when it rotates."""
    D, R, ROT = dtype, dtype.real_dtype, rotation_for(dtype)  # noqa: N806
    T, CW, CV, H, G, WITH_V = threads, per_w, per_v, half, groups, with_v  # noqa: N806
    RB = 2 * half  # noqa: N806
    PAIRS = block_schedule(RB)  # noqa: N806
    load_rows, store_rows = block_rows(dtype, with_v, threads, per_w, per_v, half)

    @pk.func
    def summed(acc, part, total, t, count):
        """total[e] = the workgroup's sum of acc[e], for e < count (≤ RB)."""
        size = pk.subgroup_size()
        for e in pk.static_range(RB):
            if e < count:
                sums = pk.subgroup_add(acc[e])
                if pk.subgroup_lane() == 0:
                    part[t // size, e] = sums
        pk.barrier()
        if t < count:
            sums = D(0)
            for g in range(T // size):
                sums += part[g, t]
            total[t] = sums
        pk.barrier()

    @pk.kernel(workgroup=(T, 1, 1))
    def jacobi_block_step(w: D[:, :, :], vt: D[:, :, :], flags: pk.i32[:], blocks: int,
                          step: int, tol: R):
        part = pk.shared(D, (G, RB))
        total = pk.shared(D, RB)
        xw = pk.local(D, (RB, CW))
        xv = pk.local(D, (RB, CV))
        acc = pk.local(D, RB)
        norms = pk.local(R, RB)  # the rows' squared norms, carried through the rotations
        t = pk.local_id(0)
        b = pk.global_id(1)
        bp, bq = pair_of(step, pk.group_id(0), blocks)
        ln = w.shape[2]
        r = vt.shape[2]
        load_rows(w, vt, xw, xv, acc, b, t, bp, bq, ln, r)
        summed(acc, part, total, t, RB)
        for j in pk.static_range(RB):
            norms[j] = total[j].real
        rotated = 0
        for s in pk.static_range(RB - 1):
            for k in pk.static_range(H):
                p = PAIRS[2 * (s * H + k)]
                q = PAIRS[2 * (s * H + k) + 1]
                gamma: D = 0
                for c in pk.static_range(CW):
                    gamma += pk.conj(xw[p, c]) * xw[q, c]
                acc[k] = gamma
            summed(acc, part, total, t, H)
            for k in pk.static_range(H):
                p = PAIRS[2 * (s * H + k)]
                q = PAIRS[2 * (s * H + k) + 1]
                alpha = norms[p]
                beta = norms[q]
                g = total[k]
                c_, s_, ph = ROT(alpha, beta, g, tol)
                if s_ != 0:
                    rotated = 1
                    cross = 2 * c_ * s_ * (ph * g).real  # ⟨x, ph·y⟩, real
                    norms[p] = max(c_ * c_ * alpha + s_ * s_ * beta - cross, R(0))
                    norms[q] = max(s_ * s_ * alpha + c_ * c_ * beta + cross, R(0))
                    for c in pk.static_range(CW):
                        x = xw[p, c]
                        y = ph * xw[q, c]
                        xw[p, c] = c_ * x - s_ * y
                        xw[q, c] = s_ * x + c_ * y
                    if WITH_V:
                        for c in pk.static_range(CV):
                            x = xv[p, c]
                            y = ph * xv[q, c]
                            xv[p, c] = c_ * x - s_ * y
                            xv[q, c] = s_ * x + c_ * y
        store_rows(w, vt, xw, xv, b, t, bp, bq, ln, r)
        if t == 0 and rotated != 0:
            flags[b] = 1

    return jacobi_block_step
