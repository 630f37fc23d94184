"""pk.linalg.svd, eigh, eigvalsh, svdvals and pinv of complex (c64, c128) matrices against
numpy.linalg: values elementwise, residuals ‖U S Vh − A‖, ‖A V − V Λ‖, ‖UᴴU − I‖, ‖VᴴV − I‖
relative to n·ε·‖A‖, vectors of well-separated values equal to numpy's up to a unit-modulus
phase, over batches, tall, wide and square shapes, full and reduced, repeated and clustered
values and rank-deficient input, on both Jacobi paths (shared memory and one launch per step).

Tolerances as the real tests': values within 10·n·ε·‖A‖ (ε of the real part's dtype),
residuals below BACKWARD_BOUND·n·ε."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.linalg import jacobi
from linalg_matrices import BACKWARD_BOUND, eps

BATCHES = st.sampled_from([(), (2,), (2, 1)])
DTYPES = st.sampled_from([np.complex64, np.complex128])


def cnorm(x: np.ndarray) -> np.ndarray:
    """The Frobenius norm of each matrix of a complex stack (float64)."""
    return np.sqrt((np.abs(x.astype(np.complex128)) ** 2).sum(axis=(-2, -1)))


def cratio(residual: np.ndarray, scale: np.ndarray, n: int, dtype: object) -> float:
    """max over the batch of ‖residual‖ / (scale · max(n, 1) · ε)."""
    return float(np.max(cnorm(residual) / (np.maximum(scale, 1e-300) * max(n, 1) * eps(dtype)),
                        initial=0.0))


def gaussian(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def unitary(rng: np.random.Generator, batch: tuple[int, ...], n: int) -> np.ndarray:
    q, _ = np.linalg.qr(gaussian(rng, batch + (n, n)))
    return q


def of_rank(rng: np.random.Generator, batch: tuple[int, ...], m: int, n: int, rank: int,
            dtype: type) -> np.ndarray:
    """Random complex (batch..., m, n) matrices of the given rank."""
    return (gaussian(rng, batch + (m, rank)) @ gaussian(rng, batch + (rank, n))).astype(dtype)


def hermitian(rng: np.random.Generator, batch: tuple[int, ...], n: int, kind: str,
              dtype: type) -> np.ndarray:
    """Random Hermitian matrices: Gaussian ones, or Q diag(λ) Qᴴ with λ a few values repeated
    (zero among them, signs mixed), or clustered within 1e-6 of 1 and -1."""
    if kind == "random":
        g = gaussian(rng, batch + (n, n))
        return ((g + np.conj(np.swapaxes(g, -1, -2))) / 2).astype(dtype)
    q = unitary(rng, batch, n)
    if kind == "repeated":
        lam = rng.choice(np.array([-2.0, 0.0, 1.0, 3.0]), size=batch + (n,))
    else:
        lam = rng.choice(np.array([-1.0, 1.0]), size=batch + (n,))
        lam = lam + 1e-6 * rng.standard_normal(batch + (n,))
    a = (q * lam[..., None, :]) @ np.conj(np.swapaxes(q, -1, -2))
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def check_unitary_columns(q: np.ndarray, n: int, dtype: object) -> None:
    eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
    qh = np.conj(np.swapaxes(q, -1, -2))
    assert cratio(qh @ q - eye, np.ones(q.shape[:-2]), n, dtype) < BACKWARD_BOUND


def check_svd(a: np.ndarray, res: pk.linalg.SVDResult, full: bool) -> None:
    m, n = a.shape[-2:]
    k = min(m, n)
    real = np.finfo(a.dtype).dtype
    assert res.U.dtype == pk.asarray(a).dtype and res.Vh.dtype == res.U.dtype
    assert res.S.dtype == pk.asarray(np.zeros(1, real)).dtype
    assert res.U.shape == a.shape[:-2] + (m, m if full else k)
    assert res.Vh.shape == a.shape[:-2] + (n if full else k, n)
    u, s, vh = (t.numpy().astype(np.complex128) for t in res)
    s = s.real
    a64 = a.astype(np.complex128)
    scale = cnorm(a64)
    ref = np.linalg.svd(a64, compute_uv=False)
    tol = 10 * max(m, n) * eps(real) * scale[..., None] + 1e-300
    assert np.all(np.abs(s - ref) <= tol), np.abs(s - ref).max()
    assert np.all(np.diff(s, axis=-1) <= 0)  # descending
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    assert cratio(rebuilt - a64, scale, max(m, n), real) < BACKWARD_BOUND
    check_unitary_columns(u, max(m, n), real)
    check_unitary_columns(np.conj(np.swapaxes(vh, -1, -2)), max(m, n), real)


def check_eigh(a: np.ndarray, w: pk.Tensor, v: pk.Tensor) -> None:
    n = a.shape[-1]
    real = np.finfo(a.dtype).dtype
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    assert v.dtype == pk.asarray(a).dtype and w.dtype == pk.asarray(np.zeros(1, real)).dtype
    a64, wn, vn = a.astype(np.complex128), w.numpy().astype(np.float64), v.numpy()
    vn = vn.astype(np.complex128)
    scale = cnorm(a64)
    ref = np.linalg.eigvalsh(a64)
    tol = 10 * max(n, 1) * eps(real) * scale[..., None] + 1e-300
    assert np.all(np.abs(wn - ref) <= tol), np.abs(wn - ref).max()
    assert np.all(np.diff(wn, axis=-1) >= 0)  # ascending
    assert cratio(a64 @ vn - vn * wn[..., None, :], scale, n, real) < BACKWARD_BOUND
    check_unitary_columns(vn, n, real)


def same_up_to_phase(ours: np.ndarray, theirs: np.ndarray, tol: float) -> None:
    """Each column of `ours` is the matching column of `theirs` times some |e^{iθ}| = 1."""
    overlap = np.einsum("...ij,...ij->...j", np.conj(theirs), ours)
    phase = overlap / np.abs(overlap)
    np.testing.assert_allclose(ours, theirs * phase[..., None, :], atol=tol)


@settings(max_examples=15, deadline=None)
@given(m=st.integers(1, 8), n=st.integers(1, 8), batch=BATCHES, dtype=DTYPES,
       full=st.booleans(), deficient=st.booleans(), seed=st.integers(0, 2**16))
def test_complex_svd_matches_numpy(m, n, batch, dtype, full, deficient, seed):
    rank = max(min(m, n) - 2, 0) if deficient else min(m, n)
    a = of_rank(np.random.default_rng(seed), batch, m, n, rank, dtype)
    res = pk.linalg.svd(pk.asarray(a), full_matrices=full)
    check_svd(a, res, full)
    real = np.finfo(dtype).dtype
    np.testing.assert_allclose(pk.linalg.svdvals(pk.asarray(a)).numpy(), res.S.numpy(),
                               atol=10 * max(m, n) * eps(real) * (1 + cnorm(a).max()))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 10), batch=BATCHES, dtype=DTYPES,
       kind=st.sampled_from(["random", "repeated", "clustered"]), seed=st.integers(0, 2**16))
def test_complex_eigh_matches_numpy(n, batch, dtype, kind, seed):
    a = hermitian(np.random.default_rng(seed), batch, n, kind, dtype)
    w, v = pk.linalg.eigh(pk.asarray(a))
    check_eigh(a, w, v)
    np.testing.assert_array_equal(pk.linalg.eigvalsh(pk.asarray(a)).numpy(), w.numpy())


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_vectors_match_numpy_up_to_a_phase(dtype):
    rng = np.random.default_rng(3)
    values = np.array([5.0, 3.0, 2.0, 1.0, 0.5, -1.5])  # well separated
    q = unitary(rng, (2,), 6)
    a = ((q * values) @ np.conj(np.swapaxes(q, -1, -2))).astype(dtype)
    tol = 1e3 * eps(np.finfo(dtype).dtype)
    w, v = pk.linalg.eigh(pk.asarray(a))
    same_up_to_phase(v.numpy(), np.linalg.eigh(a.astype(np.complex128))[1], tol)
    b = (q[..., :, :4] * np.abs(values[:4])) @ np.conj(np.swapaxes(unitary(rng, (2,), 4),
                                                                    -1, -2))
    b = b.astype(dtype)  # (2, 6, 4), singular values 5, 3, 2, 1
    u, _, vh = pk.linalg.svd(pk.asarray(b), full_matrices=False)
    ref_u, _, ref_vh = np.linalg.svd(b.astype(np.complex128), full_matrices=False)
    # the same phase on u_i and v_i: compare the rank-one pieces u_i v_iᴴ, phase-free
    ours = np.einsum("...ik,...kj->...kij", u.numpy(), vh.numpy())
    theirs = np.einsum("...ik,...kj->...kij", ref_u, ref_vh)
    np.testing.assert_allclose(ours, theirs, atol=tol)
    same_up_to_phase(u.numpy(), ref_u, tol)


@pytest.mark.parametrize("dtype, deficient", [(np.complex64, False), (np.complex128, True)])
def test_complex_pinv_matches_numpy(dtype, deficient):
    rng = np.random.default_rng(4)
    a = of_rank(rng, (2,), 5, 3, 2 if deficient else 3, dtype)
    p = pk.linalg.pinv(pk.asarray(a))
    assert p.dtype == pk.asarray(a).dtype and p.shape == (2, 3, 5)
    ref = np.linalg.pinv(a.astype(np.complex128))
    scale = np.abs(ref).max()
    np.testing.assert_allclose(p.numpy(), ref, atol=100 * eps(np.finfo(dtype).dtype) * scale)
    pn = p.numpy().astype(np.complex128)
    a64 = a.astype(np.complex128)
    np.testing.assert_allclose(a64 @ pn @ a64, a64, atol=1e3 * eps(np.finfo(dtype).dtype))
    ranks = pk.linalg.matrix_rank(pk.asarray(a)).numpy()
    np.testing.assert_array_equal(ranks, [2 if deficient else 3] * 2)


@pytest.mark.parametrize("cpu_kernel", [True, False])
def test_complex_global_path(cpu_kernel, monkeypatch):
    # no shared-memory plan: an invocation per pair (CPU devices) or a workgroup per pair of
    # blocks of rows (GPUs); a wide rank-deficient SVD (completion of Vh) and an eigh of
    # repeated eigenvalues
    monkeypatch.setattr(jacobi, "_shared_plan", lambda *args: None)
    monkeypatch.setattr(jacobi, "is_cpu_device", lambda: cpu_kernel)
    monkeypatch.setattr(jacobi, "BLOCK", 2)  # the GPUs' block sweeps, with smaller blocks
    rng = np.random.default_rng(5)
    a = of_rank(rng, (2,), 7, 12, 5, np.complex128)
    check_svd(a, pk.linalg.svd(pk.asarray(a), full_matrices=True), True)
    h = hermitian(rng, (), 12, "repeated", np.complex128)
    check_eigh(h, *pk.linalg.eigh(pk.asarray(h)))


def test_complex_eigh_reads_the_lower_triangle_and_leaves_the_input_intact():
    rng = np.random.default_rng(6)
    full = hermitian(rng, (2,), 5, "random", np.complex128)
    a = np.tril(full) + np.triu(gaussian(rng, (2, 5, 5)), 1)  # junk above the diagonal
    t = pk.asarray(a)
    w, v = pk.linalg.eigh(t)
    ref_w = np.linalg.eigvalsh(a)  # numpy reads the lower triangle too
    np.testing.assert_allclose(w.numpy(), ref_w, atol=1e-12 * cnorm(full).max())
    check_eigh(full, w, v)
    np.testing.assert_array_equal(t.numpy(), a)


def test_complex_input_of_the_wrong_shape_is_refused():
    z = pk.asarray(np.ones((2, 3), np.complex64))
    with pytest.raises(ValueError, match="linalg.eigh: x must be square"):
        pk.linalg.eigh(z)
    with pytest.raises(ValueError, match="linalg.svd: x must have at least 2 dimensions"):
        pk.linalg.svd(pk.asarray(np.ones(3, np.complex64)))
    u, s, vh = pk.linalg.svd(pk.asarray(np.zeros((2, 0, 3), np.complex64)))
    assert u.shape == (2, 0, 0) and s.shape == (2, 0) and vh.shape == (2, 3, 3)
    assert s.dtype == pk.f32 and vh.dtype == pk.c64
    np.testing.assert_array_equal(vh.numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))


def test_complex_in_c64_where_the_device_lacks_fp64(monkeypatch):
    # devices without fp64 compute c64 input in c64 itself: the same kernels in f32 parts
    for module in ("pykern.linalg.svd", "pykern.linalg.eigh"):  # (the modules, not functions)
        monkeypatch.setattr(importlib.import_module(module), "compute_dtype",
                            lambda d, op: pk.c64)
    rng = np.random.default_rng(7)
    a = of_rank(rng, (2,), 6, 4, 4, np.complex64)
    check_svd(a, pk.linalg.svd(pk.asarray(a), full_matrices=False), False)
    h = hermitian(rng, (2,), 6, "repeated", np.complex64)
    check_eigh(h, *pk.linalg.eigh(pk.asarray(h)))
