"""pk.attention's fused backward (pykern/tensor/nnops/attention_backward.py): gradients against
central differences in float64 on small sizes, and on larger ones (partial blocks, head
dimension 64) against float64 formulas and against the gradients of the composition of ops
(the fallback), for f32, f16 and bf16 inputs. On lavapipe pk.attention picks the composition
by default, so the tests force the fused kernels (`nn.FUSED_ATTENTION`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk
from pykern.nn import functional as F
from pykern.tensor.nnops import attention_backward, attention_coop, nn_ops as nn

from gradcheck import check_grad

RNG = np.random.default_rng(11)


@pytest.fixture
def fused(monkeypatch):
    monkeypatch.setattr(nn, "FUSED_ATTENTION", True)


def np_attention(q, k, v, causal, scale):
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return p / p.sum(-1, keepdims=True) @ v


def np_grads(q, k, v, g, causal, scale):
    """(dq, dk, dv) in float64 from the formulas, summed back over broadcast dimensions."""
    q64, k64, v64, g64 = (np.asarray(a, np.float64) for a in (q, k, v, g))
    s = q64 @ np.swapaxes(k64, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = g64 @ np.swapaxes(v64, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    grads = (ds @ k64 * scale, np.swapaxes(ds, -1, -2) @ q64 * scale,
             np.swapaxes(p, -1, -2) @ g64)
    return tuple(sum_to(gr, a.shape) for gr, a in zip(grads, (q, k, v)))


def sum_to(g, shape):
    g = g.sum(axis=tuple(range(g.ndim - len(shape))))
    return g.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


def attention_grads(q, k, v, g, causal, scale=None, dtype=pk.f32):
    """pk.attention's result and the gradients of q, k, v for the output gradient `g`."""
    ts = [pk.asarray(a, dtype=dtype).requires_grad_() for a in (q, k, v)]
    out = pk.attention(*ts, causal=causal, scale=scale)
    grads = pk.autograd.grad(out, ts, grad_outputs=pk.asarray(g, dtype=out.dtype))
    return out, [gr.numpy().astype(np.float64) for gr in grads]


# ---- against central differences, float64 ----

SMALL = [  # (q shape, k shape, v shape, causal, scale)
    ((2, 5, 3), (2, 5, 3), (2, 5, 4), False, None),
    ((2, 5, 3), (2, 5, 3), (2, 5, 4), True, None),
    ((4, 3), (7, 3), (7, 4), True, 0.7),         # no batch, fewer queries than keys
    ((2, 7, 3), (2, 4, 3), (2, 4, 4), True, None),  # queries past the last key see every key
    ((2, 1, 5, 3), (3, 6, 3), (1, 6, 4), False, None),  # broadcast batch and heads
    ((1, 5, 33), (1, 6, 33), (1, 6, 40), True, None),  # rows split over 2 lanes, padded
    ((5, 70), (4, 70), (4, 5), False, 0.2),  # over 4 lanes, padded
]


@pytest.mark.parametrize("qs,ks,vs,causal,scale", SMALL)
def test_fused_gradients_match_central_differences(qs, ks, vs, causal, scale, fused):
    q, k, v = (RNG.standard_normal(s) for s in (qs, ks, vs))
    s = 1 / math.sqrt(qs[-1]) if scale is None else scale
    out = pk.attention(*(pk.asarray(a).requires_grad_() for a in (q, k, v)), causal=causal)
    assert out.grad_fn.name == "attention"  # the fused record, not the composition's ops
    check_grad(lambda a, b, c: pk.attention(a, b, c, causal=causal, scale=scale),
               lambda a, b, c: np_attention(a, b, c, causal, s), q, k, v, rng=RNG, atol=1e-6)


# ---- larger: partial blocks, head dimension 64 ----

# the unit roundoff and the smallest normal number of the 16-bit dtypes
ROUNDING = {"f16": (2.0 ** -11, 2.0 ** -14), "bf16": (2.0 ** -8, 2.0 ** -126),
            "f32": (0.0, 0.0)}


def grad_bound(q, k, v, g, causal, scale, u_acc, dtype, u_p=0.0):
    """An elementwise error bound for the gradients and their float64 values. Each gradient is
    a sum of products (dq = scale·ds·k, dk = scale·dsᵀ·q, dv = pᵀ·g, |ds| bounded by
    |p|·(|dp| + |δ|)) whose terms each carry a relative error of a few tens of `u_acc` (the
    unit roundoff of the arithmetic: the recomputed exp, whose error grows with |s - LSE|,
    and the dot products); δ = g·o uses the forward's output rounded to the input dtype
    (that dtype's unit roundoff, 0 for f32), which enters ds as p·Δδ; and the result is
    rounded to `dtype` (relative to its smallest normal number, below which f16 rounds to a
    fixed step). `u_p`: a further relative error of every p, in the backward's recomputation
    (through the LSE) and in the forward's output (through δ)."""
    u_out, normal = ROUNDING[dtype.name]
    q, k, v, g = (np.asarray(x, np.float64) for x in (q, k, v, g))
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    t = np.swapaxes
    adp = np.abs(g) @ t(np.abs(v), -1, -2)
    ads = p * (adp + (p * adp).sum(-1, keepdims=True))
    ddelta = (u_out * np.abs(g) * np.abs(p @ v) + u_p * np.abs(g) * (p @ np.abs(v))).sum(
        -1, keepdims=True)
    rel = 32 * u_acc + u_p
    dds = rel * ads + p * ddelta
    terms = dds @ np.abs(k) * scale, t(dds, -1, -2) @ np.abs(q) * scale, \
        rel * t(p, -1, -2) @ np.abs(g)
    exact = np_grads(q, k, v, g, causal, scale)
    shapes = [x.shape for x in (q, k, v)]
    return [sum_to(e, sh) + u_out * np.maximum(np.abs(x), normal)
            for e, sh, x in zip(terms, shapes, exact)], exact


def sample(shape, dtype):
    return RNG.standard_normal(shape).astype(np.float32).astype(dtype.numpy)


LARGE = [  # (batch, Lq, Lk, causal, dtype)
    ((1, 2), 130, 130, True, pk.f32),
    ((1, 2), 130, 70, False, pk.f32),
    ((2,), 130, 130, True, pk.f16),
]
U32, U16 = 2.0 ** -24, 2.0 ** -11


@pytest.mark.parametrize("batch,lq,lk,causal,dtype", LARGE)
def test_fused_gradients_match_float64_and_the_composition(batch, lq, lk, causal, dtype,
                                                           monkeypatch):
    d = 64
    q, k, v = sample(batch + (lq, d), dtype), sample(batch + (lk, d), dtype), \
        sample(batch + (lk, d), dtype)
    g = sample(batch + (lq, d), dtype)
    scale = 1 / math.sqrt(d)
    bounds, exact = grad_bound(q, k, v, g, causal, scale, U32, dtype)
    # the composition's matmuls and softmax round scores, probabilities and products to f16
    composed_bounds, _ = grad_bound(q, k, v, g, causal, scale,
                                    U16 if dtype == pk.f16 else U32, dtype)
    monkeypatch.setattr(nn, "FUSED_ATTENTION", True)
    out, got = attention_grads(q, k, v, g, causal, dtype=dtype)
    assert out.grad_fn.name == "attention"
    monkeypatch.setattr(nn, "FUSED_ATTENTION", False)
    out_c, composed = attention_grads(q, k, v, g, causal, dtype=dtype)
    assert out_c.grad_fn.name != "attention"
    for name, a, c, e, b, bc in zip("qkv", got, composed, exact, bounds, composed_bounds):
        for what, err, bound in (("float64", np.abs(a - e), b),
                                 ("the composition", np.abs(a - c), b + bc)):
            worst = np.unravel_index(np.argmax(err / bound), err.shape)
            assert np.all(err <= bound), \
                f"d{name} against {what}: {err[worst]:.3g} > {bound[worst]:.3g} at {worst}"


@pytest.mark.skipif(getattr(pk, "bf16", None) is None, reason="pk.bf16 does not exist here")
def test_bf16_gradients_match_float64(fused):
    q, k, v, g = (sample((2, 33, 8), pk.bf16) for _ in range(4))
    scale = 1 / math.sqrt(8)
    bounds, exact = grad_bound(q, k, v, g, True, scale, U32, pk.bf16)
    out, got = attention_grads(q, k, v, g, True, dtype=pk.bf16)
    assert out.dtype == pk.bf16 and out.grad_fn.name == "attention"
    for a, e, b in zip(got, exact, bounds):
        assert np.all(np.abs(a - e) <= b)


def test_broadcast_inputs_get_gradients_of_their_own_shape_and_dtype(fused):
    q, k, v = sample((2, 3, 9, 4), pk.f16), sample((1, 3, 9, 4), pk.f16), \
        sample((9, 4), pk.f16)
    g = sample((2, 3, 9, 4), pk.f16)
    _, got = attention_grads(q, k, v, g, False, dtype=pk.f16)
    bounds, exact = grad_bound(q, k, v, g, False, 0.5, U32, pk.f16)
    for a, e, b in zip(got, exact, bounds):
        assert a.shape == e.shape
        assert np.all(np.abs(a - e) <= b)


def test_strided_views_mixed_dtypes_and_a_broadcast_output_gradient(fused):
    """q a permuted view of a leaf, k and v of other dtypes than q, and the gradient of a sum
    (a broadcast of ones, stride 0) reaching attention's backward."""
    x = sample((2, 9, 3, 8), pk.f16)
    k, v = sample((2, 3, 11, 8), pk.f32), sample((2, 3, 11, 5), pk.f32)
    leaves = [pk.asarray(a).requires_grad_() for a in (x, k, v)]
    out = pk.attention(leaves[0].permute(0, 2, 1, 3), leaves[1], leaves[2], causal=True)
    assert out.grad_fn.name == "attention" and out.dtype == pk.f32
    out.sum().backward()
    q = np.transpose(x, (0, 2, 1, 3))
    bounds, exact = grad_bound(q, k, v, np.ones(out.shape), True, 8 ** -0.5, U32, pk.f32)
    exact = (np.transpose(exact[0], (0, 2, 1, 3)),) + exact[1:]
    bounds = [np.transpose(bounds[0], (0, 2, 1, 3)) + U16 * np.abs(exact[0])] + bounds[1:]
    for t, e, b in zip(leaves, exact, bounds):
        assert t.grad.dtype == t.dtype
        assert np.all(np.abs(t.grad.numpy().astype(np.float64) - e) <= b)


@pytest.mark.parametrize("fused_kernels", [True, False])
def test_no_buffer_of_the_scores_size_is_made(fused_kernels, monkeypatch):
    """The fused forward and backward allocate nothing of (Lq, Lk) size; the composition does
    (which shows the measurement sees it)."""
    monkeypatch.setattr(nn, "FUSED_ATTENTION", fused_kernels)
    lq = lk = 130
    q, k, v, g = (pk.asarray(sample((2, lq, 8), pk.f32)) for _ in range(4))
    for t in (q, k, v):
        t.requires_grad_()
    device = pk.get_device()
    sizes = []
    create = device.create_buffer

    def recording(nbytes, *args, **kwargs):
        sizes.append(nbytes)
        return create(nbytes, *args, **kwargs)

    monkeypatch.setattr(device, "create_buffer", recording)
    out = pk.attention(q, k, v, causal=True)
    pk.autograd.grad(out, [q, k, v], grad_outputs=g)
    pk.sync()
    monkeypatch.undo()
    assert (max(sizes) < lq * lk * 4) == fused_kernels, max(sizes)


# ---- the forward's log-sum-exp, the tile kernel's too ----

def np_lse(q, k, causal, scale):
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    return (m + np.log(np.exp(s - m).sum(-1, keepdims=True)))[..., 0]


@pytest.mark.parametrize("causal", [False, True])
def test_fused_forward_saves_the_log_sum_exp(causal):
    q, k, v = (sample((2, 70, 8), pk.f32) for _ in range(3))
    out = pk.empty((2, 70, 8))
    lse = attention_backward.lse_like(out)
    nn._attention_fused(pk.asarray(q), pk.asarray(k), pk.asarray(v), out, (2,), causal, 0.3,
                        lse)
    np.testing.assert_allclose(lse.numpy(), np_lse(q, k, causal, 0.3), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.numpy(), np_attention(q, k, v, causal, 0.3), atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_tile_kernel_saves_the_log_sum_exp_in_the_interpreter(causal):
    q, k, v = (sample((1, 1, 64, 64), pk.f16) for _ in range(3))
    out = np.full(q.shape, np.nan, np.float16)
    lse = np.full(q.shape[:-1], np.nan, np.float32)
    kern = attention_coop.interpreted(attention_coop._kernel(pk.f16, 64, causal, True))
    words = [np.ascontiguousarray(t).view(np.uint64) for t in (q, k, v)]
    attention_coop.launch(kern, *words, out, 0.125, lse)
    # the kernel sums the probabilities rounded to f16: within 2^-11 relative of the sum
    np.testing.assert_allclose(lse, np_lse(q, k, causal, 0.125), atol=2e-3)


@pytest.mark.parametrize("d", [64, 128])
def test_tile_forward_with_the_fused_backward(d, monkeypatch):
    """The tile kernel (in the interpreter) saves the LSE for the fused backward, also at head
    dimension 128, where the portable forward does not run (on lavapipe none does)."""
    monkeypatch.setattr(attention_coop, "INTERPRET", True)
    q, k, v, g = (sample((1, 1, 64, d), pk.f16) for _ in range(4))
    out, got = attention_grads(q, k, v, g, True, dtype=pk.f16)
    assert out.grad_fn.name == "attention"
    # the tile kernel sums P rounded to f16 into its LSE and its output: the recomputed p is
    # off by up to U16 relative (the LSE's error), δ by U16 per term of the output
    bounds, exact = grad_bound(q, k, v, g, True, d ** -0.5, U32, pk.f16, u_p=2 * U16)
    for a, e, b in zip(got, exact, bounds):
        assert np.all(np.abs(a - e) <= b)


# ---- where it is used, and where the composition runs instead ----

def test_sdpa_and_multihead_attention_record_the_fused_backward(fused):
    q, k, v = (pk.asarray(sample((2, 2, 6, 4), pk.f32)).requires_grad_() for _ in range(3))
    assert F.scaled_dot_product_attention(q, k, v, is_causal=True).grad_fn.name == "attention"
    mha = pk.nn.MultiheadAttention(8, 2, batch_first=True)
    x = pk.asarray(sample((2, 6, 8), pk.f32))
    out, _ = mha(x, x, x, need_weights=False, is_causal=True)
    out.sum().backward()
    assert mha.in_proj_weight.grad is not None and mha.in_proj_weight.grad.shape == (24, 8)


def test_the_composition_runs_where_the_fused_kernels_do_not(monkeypatch):
    q, k, v = (RNG.standard_normal((2, 4, 3)) for _ in range(3))
    monkeypatch.setattr(nn, "FUSED_ATTENTION", False)
    ts = [pk.asarray(a).requires_grad_() for a in (q, k, v)]
    assert pk.attention(*ts).grad_fn.name != "attention"
    monkeypatch.setattr(nn, "FUSED_ATTENTION", True)
    empty_k = pk.zeros((2, 0, 3)).requires_grad_()
    out = pk.attention(ts[0], empty_k, pk.zeros((2, 0, 3)))
    assert out.grad_fn.name != "attention"
    out.sum().backward()
    np.testing.assert_array_equal(ts[0].grad.numpy(), 0)


def test_the_composition_runs_where_the_loops_would_be_cut_short(monkeypatch, fused):
    q = RNG.standard_normal((20, 4))
    monkeypatch.setattr(attention_backward, "loop_budget", lambda: 1000)
    assert attention_backward.fits_loop_budget(20, 20, 4, 4)
    assert not attention_backward.fits_loop_budget(20, 200, 4, 4)
    monkeypatch.setattr(attention_backward, "loop_budget", lambda: 1)
    t = pk.asarray(q).requires_grad_()
    out = pk.attention(t, t, t)
    assert out.grad_fn.name != "attention"
    out.sum().backward()
    expected = sum(np_grads(q, q, q, np.ones((20, 4)), False, 0.5))
    np.testing.assert_allclose(t.grad.numpy(), expected, atol=1e-10)
