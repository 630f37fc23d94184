"""pk.nn layers: output shapes, PyTorch's default initialisations (bounds and moments within
tolerance), and MultiheadAttention against a numpy reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_grad_check import numeric_grad

import pykern as pk
from pykern import nn


def test_linear_shapes_and_kaiming_uniform_init():
    pk.random.seed(7)
    lin = nn.Linear(64, 200)
    w, b = lin.weight.numpy(), lin.bias.numpy()
    assert w.shape == (200, 64) and b.shape == (200,) and w.dtype == np.float32
    bound = 1 / math.sqrt(64)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(-a, a) has mean 0 and variance a²/3
    assert abs(w.mean()) < 0.05 * bound
    assert w.var() == pytest.approx(bound ** 2 / 3, rel=0.05)
    assert np.abs(w).max() > 0.95 * bound
    assert lin(pk.random.randn(2, 5, 64)).shape == (2, 5, 200)
    assert nn.Linear(3, 4, bias=False).bias is None


def test_embedding_normal_init_and_lookup():
    pk.random.seed(8)
    emb = nn.Embedding(500, 40)
    w = emb.weight.numpy()
    assert abs(w.mean()) < 0.02 and w.std() == pytest.approx(1.0, rel=0.03)
    ids = np.array([[3, 499], [0, 3]])
    np.testing.assert_array_equal(emb(pk.asarray(ids)).numpy(), w[ids])
    pad = nn.Embedding(4, 2, padding_idx=-1)
    assert pad.padding_idx == 3 and not pad.weight.numpy()[3].any()
    with pytest.raises(ValueError, match="padding_idx 4 is outside"):
        nn.Embedding(4, 2, padding_idx=4)


def test_layer_norm_init_and_values():
    ln = nn.LayerNorm(6)
    assert (ln.weight.numpy() == 1).all() and (ln.bias.numpy() == 0).all()
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    y = ln(pk.asarray(x)).numpy()
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(-1), 1, rtol=1e-3)
    assert list(nn.LayerNorm(6, elementwise_affine=False).state_dict()) == []


def test_activation_modules_match_functional():
    x = pk.random.randn(4, 5)
    for mod, fn in ((nn.ReLU(), pk.relu), (nn.SiLU(), pk.silu), (nn.GELU(), pk.gelu)):
        np.testing.assert_array_equal(mod(x).numpy(), fn(x).numpy())
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("erf")
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        nn.Dropout(-0.1)


def np_mha(mha: nn.MultiheadAttention, x: np.ndarray, causal: bool):
    """Reference: PyTorch's formulas in numpy with the module's weights."""
    e, h = mha.embed_dim, mha.num_heads
    d = e // h
    w, b = mha.in_proj_weight.numpy(), mha.in_proj_bias.numpy()
    n, length, _ = x.shape

    def heads(i):
        y = x @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]
        return y.reshape(n, length, h, d).transpose(0, 2, 1, 3)

    q, k, v = heads(0), heads(1), heads(2)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
    if causal:
        s = np.where(np.tril(np.ones((length, length), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = (p @ v).transpose(0, 2, 1, 3).reshape(n, length, e)
    return out @ mha.out_proj.weight.numpy().T + mha.out_proj.bias.numpy(), p.mean(1)


@pytest.mark.parametrize("causal", [False, True])
def test_multihead_attention_against_numpy(causal):
    pk.random.seed(9)
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    assert not mha.in_proj_bias.numpy().any() and not mha.out_proj.bias.numpy().any()
    assert np.abs(mha.in_proj_weight.numpy()).max() <= math.sqrt(6 / 32)
    x = np.random.default_rng(1).standard_normal((2, 5, 8)).astype(np.float32)
    ref_out, ref_w = np_mha(mha, x, causal)
    px = pk.asarray(x)
    out, weights = mha(px, px, px, is_causal=causal)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(weights.numpy(), ref_w, rtol=1e-4, atol=1e-5)
    fast, none = mha(px, px, px, is_causal=causal, need_weights=False)
    assert none is None
    np.testing.assert_allclose(fast.numpy(), ref_out, rtol=1e-4, atol=1e-5)
    # PyTorch's bool attn_mask: True where attention is NOT allowed
    if causal:
        blocked = pk.asarray(~np.tril(np.ones((5, 5), bool)))
        masked, _ = mha(px, px, px, attn_mask=blocked)
        np.testing.assert_allclose(masked.numpy(), ref_out, rtol=1e-4, atol=1e-5)


def test_multihead_attention_key_padding_and_errors():
    mha = nn.MultiheadAttention(4, 1, batch_first=True)
    x = pk.random.randn(1, 3, 4)
    pad = pk.asarray(np.array([[False, False, True]]))
    _, w = mha(x, x, x, key_padding_mask=pad)
    assert not w.numpy()[..., 2].any()
    np.testing.assert_allclose(w.numpy().sum(-1), 1, rtol=1e-5)
    with pytest.raises(ValueError, match="batch_first=True"):
        nn.MultiheadAttention(4, 1)
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(6, 4, batch_first=True)
    with pytest.raises(ValueError, match="key_padding_mask must be"):
        mha(x, x, x, key_padding_mask=pk.asarray(np.zeros((1, 2), bool)))


def test_multihead_attention_gradients_against_central_differences():
    """d loss / d in_proj_weight of a float64 module, by backward() and by differences."""
    pk.random.seed(10)
    mha = nn.MultiheadAttention(4, 2, batch_first=True, dtype=pk.f64)
    x = pk.asarray(np.random.default_rng(2).standard_normal((1, 3, 4)))
    out, _ = mha(x, x, x, is_causal=True, need_weights=False)
    (out * out).sum().backward()
    w = mha.in_proj_weight.numpy().copy()

    def loss(wv: np.ndarray) -> float:
        probe = nn.MultiheadAttention(4, 2, batch_first=True, dtype=pk.f64)
        probe.load_state_dict({**mha.state_dict(), "in_proj_weight": wv})
        with pk.no_grad():
            o, _ = probe(x, x, x, is_causal=True)
        return float((o.numpy() ** 2).sum())

    np.testing.assert_allclose(mha.in_proj_weight.grad.numpy(), numeric_grad(loss, w),
                               atol=1e-6, rtol=1e-5)
