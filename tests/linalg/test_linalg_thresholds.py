"""pk.linalg at the sizes where its algorithms change path: just below, at and above each
threshold, against numpy.linalg (backward errors, orthogonality, reconstruction).

Thresholds:
- the block widths: cholesky factors diagonal blocks of `cholesky.tiles` (G·TS columns: 64 on
  CPU devices, 128/64/32 on GPUs by dtype), LU (solve, inv, det, slogdet) panels of
  `lu.panel_width` (64, narrower where shared memory is small), the back substitution
  diagonal blocks of `triangular.block_rows` (64 on CPU devices, 256 on GPUs), QR panels of
  `qr_panel.WIDEST` (32). Forced narrow here (FORCE_*), so that small matrices take several
  blocks, and once at the device's own widths.
- `lu_small`: matrices up to CPU_LARGEST (32, CPU devices) or GPU_LARGEST (8, GPUs) columns
  are factored one invocation per matrix, larger ones by the panel kernel (the GPUs' variant
  holds its rows in registers with its loops unrolled).
- `pk.matmul`'s split of a long K (`tensor.linalg._split_k`: GPUs only, one matrix, K ≥ 2048,
  few output blocks): QR's products X₂ conj(V) are such products once a panel has 2048 rows.
  This path raised "too many values to unpack" for QR of a 4096×4096 matrix on an H100 (the
  (1, m, k) stacks of linalg were taken for 2-d matrices).
- `jacobi._shared_plan`: eigh and svd sweep a matrix in shared memory while it (and its
  rotations) fit in 16 KiB and a sweep fits the loop-iteration budget, over global memory
  beyond; the boundary is computed for the current device.

The GPU-only choices are reached here by making the modules' device predicates answer GPU:
the kernels then chosen run for real on the CPU device and are checked as any other.
Bounds: residuals below BACKWARD_BOUND · n · ε relative to the data (see linalg_matrices).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import pykern as pk
import pykern.tensor.gemm.matmul as tensor_linalg
import importlib

from pykern.linalg import jacobi, lu, lu_panel, qr_panel, triangular
from pykern.linalg.lu_small import CPU_LARGEST, GPU_LARGEST
from linalg_matrices import BACKWARD_BOUND, norm, ratio, spd, with_condition

# a GPU of 132 compute units (an H100's SMs), for matmul's sizing
H100 = SimpleNamespace(kind="discrete", limits=SimpleNamespace(compute_units=132))

cholesky_module = importlib.import_module("pykern.linalg.cholesky")  # (the name is the function)
NARROW = 16  # the forced block width
AROUND_PANEL = [NARROW - 1, NARROW, NARROW + 1, 2 * NARROW, 2 * NARROW + 1]
PANEL = qr_panel.WIDEST


@pytest.fixture
def narrow(monkeypatch):
    """Blocks of NARROW columns in every factorization (and back substitution)."""
    monkeypatch.setattr(cholesky_module, "FORCE_TILES", (NARROW // 4, 4))
    monkeypatch.setattr(lu, "FORCE_WIDTH", NARROW)
    monkeypatch.setattr(qr_panel, "FORCE_WIDTH", NARROW)
    monkeypatch.setattr(triangular, "CPU_BLOCK", NARROW)
    monkeypatch.setattr(triangular, "GPU_BLOCK", NARROW)


def _f64(x: pk.Tensor) -> np.ndarray:
    return x.numpy().astype(np.float64)


def check_lu_family(a: np.ndarray, b: np.ndarray) -> None:
    """solve, inv, det and slogdet of the stack `a` against their backward errors / numpy."""
    n, dtype = a.shape[-1], a.dtype
    a64 = a.astype(np.float64)
    x = _f64(pk.linalg.solve(pk.asarray(a), pk.asarray(b)))
    assert ratio(a64 @ x - b, norm(a64) * norm(x), n, dtype) < BACKWARD_BOUND
    inv = _f64(pk.linalg.inv(pk.asarray(a)))
    assert ratio(a64 @ inv - np.eye(n), norm(a64) * norm(inv), n, dtype) < BACKWARD_BOUND
    sign, logabs = pk.linalg.slogdet(pk.asarray(a))
    s2, l2 = np.linalg.slogdet(a64)
    np.testing.assert_array_equal(_f64(sign), s2)
    # a backward error of n·ε·‖A‖ moves log|det| by at most about n·ε·κ; κ ≤ 1e3 here
    tol = 1e3 * BACKWARD_BOUND * n * np.finfo(dtype).eps
    np.testing.assert_allclose(_f64(logabs), l2, rtol=0, atol=tol)
    # det itself of the matrices scaled to |det| near 1 (theirs underflows f32)
    unit = (a / np.exp(l2 / n)[..., None, None]).astype(dtype)
    np.testing.assert_allclose(_f64(pk.linalg.det(pk.asarray(unit))),
                               np.linalg.det(unit.astype(np.float64)), rtol=2 * tol)


def check_qr(a: np.ndarray, mode: str = "reduced") -> None:
    q, r = pk.linalg.qr(pk.asarray(a), mode=mode)
    q2, r2 = np.linalg.qr(a.astype(np.float64), mode=mode)
    assert q.shape == q2.shape and r.shape == r2.shape
    qn, rn = _f64(q), _f64(r)
    assert np.array_equal(rn, np.triu(rn))
    size = max(a.shape[-2:])
    a64 = a.astype(np.float64)
    assert ratio(qn @ rn - a64, norm(a64), size, a.dtype) < BACKWARD_BOUND
    qtq = np.swapaxes(qn, -1, -2) @ qn - np.eye(qn.shape[-1])
    assert ratio(qtq, np.ones(qtq.shape[:-2]), size, a.dtype) < BACKWARD_BOUND


def check_all(n: int, dtype: type) -> None:
    rng = np.random.default_rng(n)
    a = with_condition(rng, (2,), n, 1e3, dtype)
    check_lu_family(a, rng.standard_normal((2, n, 3)).astype(dtype))
    # cholesky's block column is a product with the inverted diagonal block: check it on an
    # ill-conditioned matrix as well
    s = spd(rng, (2,), n, 1e3 if n % 2 else 1e6, dtype)
    for upper in (False, True):
        f = _f64(pk.linalg.cholesky(pk.asarray(s), upper=upper))
        low = np.swapaxes(f, -1, -2) if upper else f
        assert np.array_equal(low, np.tril(low))
        s64 = s.astype(np.float64)
        assert ratio(low @ np.swapaxes(low, -1, -2) - s64, norm(s64), n, dtype) < BACKWARD_BOUND
    check_qr(rng.standard_normal((2, n, n)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", AROUND_PANEL)
def test_factorizations_around_the_panel_width(n, dtype, narrow):
    check_all(n, dtype)


def test_factorizations_at_the_devices_own_widths():
    """One size past every default width of this device (LU 64, back substitution 64 or
    256, QR 32, cholesky 64 on CPU devices), with several panels of each."""
    check_all(3 * 64 + 5, np.float32)


@pytest.mark.parametrize("shape", [(NARROW + 1, NARROW - 1), (NARROW - 1, NARROW + 1),
                                   (2 * NARROW + 1, NARROW + 1), (NARROW + 1, 2 * NARROW + 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_of_tall_and_wide_matrices_around_the_panel_width(shape, mode, narrow):
    a = np.random.default_rng(sum(shape)).standard_normal((2,) + shape).astype(np.float32)
    check_qr(a, mode)


@pytest.mark.parametrize("gpu", [False, True])
def test_lu_around_the_one_invocation_threshold(gpu, monkeypatch, narrow):
    largest = GPU_LARGEST if gpu else CPU_LARGEST
    if gpu:  # the GPUs' choices: fewer columns per invocation, the unrolled panel kernel
        monkeypatch.setattr(lu, "is_cpu_device", lambda: False)
        monkeypatch.setattr(lu_panel, "is_cpu_device", lambda: False)
        monkeypatch.setattr(lu_panel, "GPU_THREADS", 32)
        monkeypatch.setattr(triangular, "is_cpu_device", lambda: False)
    sizes = [largest, largest + 1]
    rng = np.random.default_rng(largest)
    for n in sizes:
        a = with_condition(rng, (3,), n, 1e3, np.float64)
        check_lu_family(a, rng.standard_normal((3, n, 2)))


def test_split_k_is_taken_by_the_products_below():
    """The products of the next tests would split K on a GPU (else they prove nothing)."""
    assert tensor_linalg._split_k(PANEL, PANEL, 2048, 1, pk.f32, H100) > 1
    assert tensor_linalg._split_k(PANEL, 40 - PANEL, 2560, 1, pk.f32, H100) > 1
    assert tensor_linalg._split_k(PANEL, PANEL, 2047, 1, pk.f32, H100) == 1


@pytest.mark.parametrize("rows", [2047, 2048, 2560])
def test_qr_with_the_gpus_split_k_products(rows, monkeypatch):
    monkeypatch.setattr(tensor_linalg, "on_gpu", lambda info: True)
    a = np.random.default_rng(rows).standard_normal((rows, 40)).astype(np.float32)
    check_qr(a)


@pytest.mark.parametrize("a_shape, b_shape", [((1, 24, 2048), (1, 2048, 40)),
                                              ((24, 2048), (1, 2048, 40)),
                                              ((1, 1, 24, 2048), (2048, 40)),
                                              ((1, 24, 2048), (2048,))])
def test_matmul_split_k_of_a_batch_of_one(a_shape, b_shape, monkeypatch):
    monkeypatch.setattr(tensor_linalg, "on_gpu", lambda info: True)
    rng = np.random.default_rng(7)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    got = pk.matmul(pk.asarray(a), pk.asarray(b)).numpy()
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert got.shape == want.shape
    # f32 sums of 2048 products: within a few 2048·ε of Σ|a||b|
    bound = 4 * 2048 * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b))
    assert np.all(np.abs(got - want) <= bound)


def _largest_shared(length_of, with_v: bool) -> int:
    """The largest n whose Jacobi sweeps (rows padded_rows(n), length length_of(n)) run in
    shared memory on the current device (f64: both test devices have it)."""
    n = 2
    while jacobi._shared_plan(pk.f64, jacobi.padded_rows(n + 1), length_of(n + 1),
                              with_v) is not None:
        n += 1
    return n


def _symmetric(rng: np.random.Generator, n: int) -> np.ndarray:
    g = rng.standard_normal((2, n, n))
    return (g + np.swapaxes(g, -1, -2)) / 2


@pytest.mark.parametrize("vectors", [True, False])
def test_eigh_around_the_shared_memory_threshold(vectors):
    top = _largest_shared(lambda n: n, vectors)
    assert jacobi._shared_plan(pk.f64, jacobi.padded_rows(top + 1), top + 1, vectors) is None
    rng = np.random.default_rng(top)
    for n in (top - 1, top, top + 1):
        a = _symmetric(rng, n)
        ref = np.linalg.eigvalsh(a)
        scale = norm(a)[..., None]
        if vectors:
            w, v = (_f64(t) for t in pk.linalg.eigh(pk.asarray(a)))
            assert ratio(a @ v - v * w[..., None, :], norm(a), n, np.float64) < BACKWARD_BOUND
            vtv = np.swapaxes(v, -1, -2) @ v - np.eye(n)
            assert ratio(vtv, np.ones(2), n, np.float64) < BACKWARD_BOUND
        else:
            w = _f64(pk.linalg.eigvalsh(pk.asarray(a)))
        assert np.all(np.abs(w - ref) <= 10 * n * np.finfo(np.float64).eps * scale)


@pytest.mark.parametrize("vectors", [True, False])
@pytest.mark.parametrize("tall", [True, False])
def test_svd_around_the_shared_memory_threshold(vectors, tall):
    # square matrices step k = n across the boundary; rectangular ones (3 more rows or
    # columns) have longer rows to sweep
    extra = 3
    top = _largest_shared(lambda n: n + extra, vectors)
    rng = np.random.default_rng(top + tall)
    for n in (top - 1, top, top + 1):
        shape = (n + extra, n) if tall else (n, n + extra)
        a = rng.standard_normal((2,) + shape)
        ref = np.linalg.svd(a, compute_uv=False)
        if vectors:
            u, s, vh = (_f64(t) for t in pk.linalg.svd(pk.asarray(a), full_matrices=False))
            assert ratio((u * s[..., None, :]) @ vh - a, norm(a), n + extra,
                         np.float64) < BACKWARD_BOUND
            for q in (u, np.swapaxes(vh, -1, -2)):
                qtq = np.swapaxes(q, -1, -2) @ q - np.eye(n)
                assert ratio(qtq, np.ones(2), n + extra, np.float64) < BACKWARD_BOUND
        else:
            s = _f64(pk.linalg.svdvals(pk.asarray(a)))
        assert np.all(np.abs(s - ref) <= 10 * (n + extra) * np.finfo(np.float64).eps
                      * norm(a)[..., None])


def test_panels_keep_each_invocation_within_the_loop_budget(monkeypatch):
    """On a device that cuts loops short (lavapipe) the LU and QR panel kernels take more
    invocations, up to 256, so that each loops over at most 16 rows (up to 4,096 rows)."""
    monkeypatch.setattr(lu_panel, "is_cpu_device", lambda: True)
    monkeypatch.setattr(lu_panel, "loop_budget", lambda: 60_000)
    for rows in (1, 16, 1024, 1025, 4096):
        threads, unrolled = lu_panel.panel_shape(rows)
        assert not unrolled and threads <= 256 and -(-rows // threads) <= 16
    monkeypatch.setattr(lu_panel, "loop_budget", lambda: None)
    assert lu_panel.panel_shape(4096) == (64, False)


def test_gpu_panels_give_the_same_results(monkeypatch, narrow):
    """The GPUs' panel kernels (rows in registers, loops unrolled; workgroups of 32 here, so
    that an invocation holds 1 or 2 rows) run here on the CPU device against numpy: LU through
    solve, QR."""
    monkeypatch.setattr(lu_panel, "is_cpu_device", lambda: False)
    monkeypatch.setattr(lu_panel, "GPU_THREADS", 32)
    rng = np.random.default_rng(5)
    a = with_condition(rng, (2,), 40, 1e3)
    b = rng.standard_normal((2, 40, 2))
    x = _f64(pk.linalg.solve(pk.asarray(a), pk.asarray(b)))
    assert ratio(a @ x - b, norm(a) * norm(x), 40, np.float64) < BACKWARD_BOUND
    check_qr(rng.standard_normal((2, 40, 24)))
