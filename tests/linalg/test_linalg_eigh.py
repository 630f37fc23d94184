"""pk.linalg.eigh and eigvalsh against numpy.linalg: eigenvalues elementwise, residuals
‖A V − V Λ‖ and ‖VᵀV − I‖ relative to n·ε·‖A‖, over random, clustered (repeated eigenvalues)
and ill-conditioned symmetric matrices, batches and dtypes, on both paths (shared memory for
small n, global memory beyond).

Tolerances: eigenvalues within 10·n·ε·‖A‖ (ε of the input dtype; f32 input is computed in f64
where the device has it, which every test device has), residuals below BACKWARD_BOUND·n·ε."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.linalg import jacobi
from linalg_matrices import BACKWARD_BOUND, eps, norm, ratio

BATCHES = st.sampled_from([(), (3,), (2, 2)])
DTYPES = st.sampled_from([np.float32, np.float64])
KINDS = st.sampled_from(["random", "clustered", "ill"])


def symmetric(rng: np.random.Generator, batch: tuple[int, ...], n: int, kind: str,
              dtype: type) -> np.ndarray:
    """Random symmetric matrices: Gaussian ones, ones with repeated eigenvalues (a few values
    each repeated, signs mixed, zero among them) or with eigenvalues spread over 1 to 1e-9."""
    if kind == "random":
        g = rng.standard_normal(batch + (n, n))
        return ((g + np.swapaxes(g, -1, -2)) / 2).astype(dtype)
    q, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    if kind == "clustered":
        lam = rng.choice(np.array([-2.0, 0.0, 1.0, 3.0]), size=batch + (n,))
    else:
        lam = np.logspace(0, -9, n) * rng.choice(np.array([-1.0, 1.0]), size=batch + (n,))
    a = (q * lam[..., None, :]) @ np.swapaxes(q, -1, -2)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


def check_eigh(a: np.ndarray, w: pk.Tensor, v: pk.Tensor) -> None:
    n = a.shape[-1]
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    assert w.dtype == pk.asarray(a).dtype and v.dtype == w.dtype
    a64, wn, vn = a.astype(np.float64), w.numpy().astype(np.float64), v.numpy().astype(np.float64)
    scale = norm(a64)
    ref = np.linalg.eigvalsh(a64)
    tol = 10 * max(n, 1) * eps(a.dtype) * scale[..., None] + 1e-300
    assert np.all(np.abs(wn - ref) <= tol), np.abs(wn - ref).max()
    assert np.all(np.diff(wn, axis=-1) >= 0)  # ascending
    assert ratio(a64 @ vn - vn * wn[..., None, :], scale, n, a.dtype) < BACKWARD_BOUND
    eye = np.broadcast_to(np.eye(n), a.shape)
    assert ratio(np.swapaxes(vn, -1, -2) @ vn - eye, np.ones(a.shape[:-2]), n,
                 a.dtype) < BACKWARD_BOUND


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 9), batch=BATCHES, dtype=DTYPES, kind=KINDS, seed=st.integers(0, 2**16))
def test_eigh_small_matches_numpy(n, batch, dtype, kind, seed):
    a = symmetric(np.random.default_rng(seed), batch, n, kind, dtype)
    w, v = pk.linalg.eigh(pk.asarray(a))
    check_eigh(a, w, v)
    np.testing.assert_array_equal(pk.linalg.eigvalsh(pk.asarray(a)).numpy(), w.numpy())


@pytest.mark.parametrize("kind, cpu_kernel", [("random", True), ("clustered", False)])
def test_eigh_large_runs_the_global_path(kind, cpu_kernel, monkeypatch):
    # 40 rows of f64 with their rotations exceed the shared-memory sweeps' 16 KiB; both step
    # kernels (an invocation per pair, for CPU devices; a workgroup per pair of blocks of rows,
    # for GPUs) run here
    monkeypatch.setattr(jacobi, "is_cpu_device", lambda: cpu_kernel)
    monkeypatch.setattr(jacobi, "BLOCK", 2)  # the GPUs' block sweeps, with smaller blocks
    a = symmetric(np.random.default_rng(1), (2,), 40, kind, np.float64)
    w, v = pk.linalg.eigh(pk.asarray(a))
    check_eigh(a, w, v)


def test_eigh_reads_the_lower_triangle_and_leaves_the_input_intact():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 5, 5))
    t = pk.asarray(a)
    w, v = pk.linalg.eigh(t)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(a, UPLO="L"), atol=1e-12)
    np.testing.assert_array_equal(t.numpy(), a)


def test_eigh_named_tuple_and_dtypes():
    a = np.array([[2, 1], [1, 2]], dtype=np.int32)
    res = pk.linalg.eigh(pk.asarray(a))
    assert res.eigenvalues is res[0] and res.eigenvectors is res[1]
    assert res.eigenvalues.dtype == pk.f32
    np.testing.assert_allclose(res.eigenvalues.numpy(), [1.0, 3.0], atol=1e-6)
    h = pk.linalg.eigvalsh(pk.asarray(a.astype(np.float16)))
    assert h.dtype == pk.f16
    np.testing.assert_allclose(h.numpy(), [1.0, 3.0], atol=1e-3)
    # a ±λ pair: singular values alone cannot tell the two apart
    w, v = pk.linalg.eigh(pk.asarray(np.array([[0.0, 1.0], [1.0, 0.0]])))
    np.testing.assert_allclose(w.numpy(), [-1.0, 1.0], atol=1e-15)
    assert pk.linalg.eigh(pk.zeros((0, 3, 3))).eigenvectors.shape == (0, 3, 3)


def test_eigh_of_tiny_huge_and_non_finite_matrices():
    # each matrix is scaled by the largest magnitude of its lower triangle first: entries of
    # 1e-200 gave wrong eigenvalues (the sweeps' sums of squares underflowed) and of 1e160 nan
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 4))
    x = x + x.T
    for scale in (1e-300, 1e-200, 1e160, 1e300):
        for dtype in (np.float64, np.complex128):
            a = (x * scale).astype(dtype)
            w, v = pk.linalg.eigh(pk.asarray(a))
            np.testing.assert_allclose(w.numpy() / scale, np.linalg.eigvalsh(x), atol=1e-13)
            np.testing.assert_allclose(x @ v.numpy(), v.numpy() * (w.numpy() / scale),
                                       atol=1e-13)
    upper = x.copy()
    upper[0, 3] = np.inf  # outside the triangle read: no effect
    np.testing.assert_allclose(pk.linalg.eigvalsh(pk.asarray(upper)).numpy(),
                               np.linalg.eigvalsh(x), atol=1e-13)
    bad = np.stack([x, x])
    bad[0, 3, 1] = np.nan
    w, v = pk.linalg.eigh(pk.asarray(bad))
    assert np.isnan(w.numpy()[0]).all() and np.isnan(v.numpy()[0]).all()
    np.testing.assert_allclose(w.numpy()[1], np.linalg.eigvalsh(x), atol=1e-13)


@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 3, 2)])
def test_eigh_refuses_non_square(shape):
    with pytest.raises(ValueError, match="x must"):
        pk.linalg.eigh(pk.zeros(shape))
    with pytest.raises(ValueError, match="x must"):
        pk.linalg.eigvalsh(pk.zeros(shape))
