"""pk.nn.functional: values against numpy references, gradients against central differences
in float64, dropout's statistics and the errors of bad input."""

from __future__ import annotations

import numpy as np
import pytest
from nn_grad_check import RNG, check_grad

import pykern as pk
from pykern.nn import functional as F


def np_log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def np_cross_entropy(x, t, reduction="mean", ignore_index=-100, smoothing=0.0):
    """Reference for (N, C, ...) logits: classes moved last, rows flattened."""
    c = x.shape[1]
    rows = np.moveaxis(x, 1, -1).reshape(-1, c)
    flat = t.reshape(-1)
    logp = np_log_softmax(rows)
    valid = flat != ignore_index
    nll = -logp[np.arange(len(flat)), np.where(valid, flat, 0)]
    nll = (1 - smoothing) * nll + smoothing * (-logp.mean(axis=-1))
    nll = np.where(valid, nll, 0.0)
    if reduction == "none":
        return nll.reshape(t.shape)
    return nll.sum() if reduction == "sum" else nll.sum() / valid.sum()


def np_layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_values(reduction):
    x = RNG.standard_normal((6, 5)).astype(np.float32)
    t = np.array([0, 4, 2, -100, 1, 3])
    got = F.cross_entropy(pk.asarray(x), pk.asarray(t), reduction=reduction)
    np.testing.assert_allclose(np.asarray(got.numpy()), np_cross_entropy(x, t, reduction),
                               rtol=1e-5, atol=1e-6)


def test_cross_entropy_spatial_and_label_smoothing():
    x = RNG.standard_normal((2, 4, 3, 2))
    t = RNG.integers(0, 4, (2, 3, 2))
    got = F.cross_entropy(pk.asarray(x), pk.asarray(t), label_smoothing=0.2, reduction="none")
    assert got.shape == (2, 3, 2)
    np.testing.assert_allclose(got.numpy(), np_cross_entropy(x, t, "none", smoothing=0.2),
                               rtol=1e-10)


def test_cross_entropy_gradient():
    t = np.array([2, 0, -100, 3, 1])
    x = RNG.standard_normal((5, 4))
    check_grad(lambda a: F.cross_entropy(a, pk.asarray(t), label_smoothing=0.1),
               lambda a: np_cross_entropy(a, t, smoothing=0.1), x)


def test_cross_entropy_with_minus_inf_logits_of_other_classes_is_finite():
    # logits masked to -inf (classes ruled out) gave a NaN loss: the one-hot pick multiplied
    # the -inf log-probabilities by 0; PyTorch's loss is finite
    x = np.array([[1.0, -np.inf, 2.0], [0.5, 0.1, -np.inf]])
    t = pk.asarray(x).requires_grad_()
    loss = F.cross_entropy(t, pk.asarray(np.array([0, 1])))
    want = np.mean([np.logaddexp(1.0, 2.0) - 1.0, np.logaddexp(0.5, 0.1) - 0.1])
    np.testing.assert_allclose(loss.numpy(), want, rtol=1e-12)
    loss.backward()
    p = np.exp(x - np.logaddexp.reduce(x, axis=1, keepdims=True))
    np.testing.assert_allclose(t.grad.numpy(), (p - np.eye(3)[[0, 1]]) / 2, atol=1e-12)


def test_cross_entropy_ignores_targets_whose_row_has_minus_inf_logits():
    # an ignored target picked class 0 and multiplied its nll by 0: with the logit of class 0
    # at -inf (a banned class) that was inf * 0 = NaN, so the whole mean was NaN
    x = np.array([[-np.inf, 1.0, 2.0], [-np.inf, 0.5, 0.1]])
    t = pk.asarray(x).requires_grad_()
    loss = F.cross_entropy(t, pk.asarray(np.array([1, -100])))
    np.testing.assert_allclose(loss.numpy(), np.logaddexp(1.0, 2.0) - 1.0, rtol=1e-12)
    loss.backward()
    p = np.exp(x[0] - np.logaddexp(1.0, 2.0))
    np.testing.assert_allclose(t.grad.numpy(), [p - [0, 1, 0], [0, 0, 0]], atol=1e-12)
    none = F.cross_entropy(pk.asarray(x), pk.asarray(np.array([1, -100])), reduction="none")
    np.testing.assert_allclose(none.numpy(), [np.logaddexp(1.0, 2.0) - 1.0, 0.0], rtol=1e-12)


def test_cross_entropy_errors():
    x = pk.asarray(np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError, match="target 4 is out of range for 4 classes"):
        F.cross_entropy(x, pk.asarray(np.array([0, 4, 1])))
    with pytest.raises(ValueError, match=r"target must have shape \(3,\)"):
        F.cross_entropy(x, pk.asarray(np.array([0, 1])))
    with pytest.raises(TypeError, match="integer class indices"):
        F.cross_entropy(x, x)
    with pytest.raises(ValueError, match=r"weight must have shape \(4,\)"):
        F.cross_entropy(x, pk.asarray(np.array([0, 1, 2])), pk.ones((3,)))
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.cross_entropy(x, pk.asarray(np.array([0, 1, 2])), reduction="avg")


def test_linear_values_and_gradient():
    x, w, b = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal(5)
    got = F.linear(pk.asarray(x), pk.asarray(w), pk.asarray(b))
    np.testing.assert_allclose(got.numpy(), x @ w.T + b, rtol=1e-12)
    check_grad(F.linear, lambda a, c, d: a @ c.T + d, x, w, b)
    with pytest.raises(ValueError, match="in_features=4"):
        F.linear(pk.asarray(np.zeros((2, 3))), pk.asarray(w))


def test_layer_norm_gradient():
    x, w, b = RNG.standard_normal((3, 6)), RNG.standard_normal(6), RNG.standard_normal(6)
    check_grad(lambda a, c, d: F.layer_norm(a, (6,), c, d), np_layer_norm, x, w, b, atol=1e-5)


def test_mse_loss():
    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    assert F.mse_loss(pk.asarray(x), pk.asarray(y)).item() == pytest.approx(((x - y) ** 2).mean())
    assert F.mse_loss(pk.asarray(x), pk.asarray(y), reduction="sum").item() == \
        pytest.approx(((x - y) ** 2).sum())
    check_grad(lambda a, c: F.mse_loss(a, c, reduction="none"), lambda a, c: (a - c) ** 2, x, y)
    with pytest.raises(ValueError, match="differ"):
        F.mse_loss(pk.asarray(x), pk.asarray(y[:2]))


def test_activations_and_softmax():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    px = pk.asarray(x)
    np.testing.assert_allclose(F.relu(px).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(F.silu(px).numpy(), x / (1 + np.exp(-x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F.log_softmax(px, dim=0).numpy(), np_log_softmax(x, 0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F.softmax(px, dim=1).numpy(), np.exp(np_log_softmax(x, 1)),
                               rtol=1e-5, atol=1e-6)
    assert F.gelu(px, approximate="tanh").shape == (3, 5)


def test_dropout_training_and_eval():
    pk.random.seed(3)
    x = pk.ones((200, 100))
    y = F.dropout(x, p=0.25).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    assert F.dropout(x, p=0.25, training=False) is x
    assert F.dropout(x, p=0.0) is x
    assert not F.dropout(x, p=1.0).numpy().any()
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        F.dropout(x, p=1.5)


def test_dropout_gradient_is_the_mask():
    pk.random.seed(5)
    x = pk.asarray(RNG.standard_normal((40, 30))).requires_grad_()
    y = F.dropout(x, p=0.5)
    y.sum().backward()
    kept = y.numpy() != 0
    np.testing.assert_array_equal(x.grad.numpy(), np.where(kept, 2.0, 0.0))


def test_embedding_values_gradient_and_padding():
    w = RNG.standard_normal((6, 3))
    ids = np.array([[1, 5], [1, 0]])
    pw = pk.asarray(w).requires_grad_()
    out = F.embedding(pk.asarray(ids), pw, padding_idx=0)
    np.testing.assert_array_equal(out.numpy(), w[ids])
    out.sum().backward()
    expected = np.zeros_like(w)
    np.add.at(expected, ids, 1.0)
    expected[0] = 0.0
    np.testing.assert_array_equal(pw.grad.numpy(), expected)
    with pytest.raises(TypeError, match="integer indices"):
        F.embedding(pk.asarray(w), pw)


def np_attention(q, k, v, mask):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def test_embedding_with_padding_keeps_infinite_weights():
    # the padding row was kept out of training by blending w * keep + w.detach() * (1 - keep),
    # which made an inf weight inf * 0 = NaN in every looked-up row
    w = pk.asarray(np.array([[np.inf, 1.0], [2.0, -np.inf], [4.0, 5.0]])).requires_grad_()
    out = F.embedding(pk.asarray(np.array([0, 1, 2, 0])), w, padding_idx=2)
    np.testing.assert_array_equal(out.numpy(), [[np.inf, 1], [2, -np.inf], [4, 5], [np.inf, 1]])
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[2, 2], [1, 1], [0, 0]])


def test_scaled_dot_product_attention_masks():
    q, k, v = (RNG.standard_normal((2, 4, 3)).astype(np.float32) for _ in range(3))
    causal = np.tril(np.ones((4, 4), bool))
    args = [pk.asarray(a) for a in (q, k, v)]
    ref = np_attention(q, k, v, causal)
    np.testing.assert_allclose(F.scaled_dot_product_attention(*args, is_causal=True).numpy(),
                               ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        F.scaled_dot_product_attention(*args, attn_mask=pk.asarray(causal)).numpy(), ref,
        rtol=1e-4, atol=1e-5)
    additive = np.where(causal, 0.0, -np.inf).astype(np.float32)
    np.testing.assert_allclose(
        F.scaled_dot_product_attention(*args, attn_mask=pk.asarray(additive)).numpy(), ref,
        rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="not both"):
        F.scaled_dot_product_attention(*args, attn_mask=pk.asarray(causal), is_causal=True)
