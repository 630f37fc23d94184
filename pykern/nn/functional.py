"""`pk.nn.functional`: PyTorch's functional names over pykern's ops.

Every function here is a composition of differentiable pykern ops, so each one has a gradient
without a backward of its own. Arguments follow PyTorch (`dim`, `training`, `reduction`, ...)
so that a ported model changes only its imports.
"""

from __future__ import annotations

from collections.abc import Sequence

import pykern as pk
from pykern.nn.functional_conv import (adaptive_avg_pool2d, avg_pool2d, conv1d, conv2d,
                                       conv_transpose1d, conv_transpose2d, max_pool2d)
from pykern.nn.functional_loss import cross_entropy, mse_loss, nll_loss
from pykern.nn.functional_norm import batch_norm
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor

__all__ = ["linear", "relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
           "layer_norm", "batch_norm", "dropout", "dropout1d", "dropout2d", "embedding",
           "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool2d",
           "avg_pool2d", "adaptive_avg_pool2d", "cross_entropy", "nll_loss", "mse_loss",
           "scaled_dot_product_attention"]


def linear(input: object, weight: object, bias: object = None) -> Tensor:  # noqa: A002
    """input @ weight.T + bias: input (..., in_features), weight (out_features, in_features),
    bias (out_features,) or None; the result is (..., out_features)."""
    x, w = as_tensor(input, "linear: input"), as_tensor(weight, "linear: weight")
    if w.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features), got shape "
                         f"{w.shape}")
    if x.ndim == 0 or x.shape[-1] != w.shape[1]:
        raise ValueError(f"linear: input's last dimension must be in_features={w.shape[1]}, "
                         f"got input shape {x.shape}")
    y = pk.matmul(x, w.mT)
    return y if bias is None else y + bias


def relu(input: object) -> Tensor:  # noqa: A002
    """max(input, 0)."""
    return pk.relu(input)


def gelu(input: object, approximate: str = "none") -> Tensor:  # noqa: A002
    """GELU, exact (erf) or with `approximate="tanh"`, as PyTorch's."""
    return pk.gelu(input, approximate=approximate)


def silu(input: object) -> Tensor:  # noqa: A002
    """input * sigmoid(input)."""
    return pk.silu(input)


def tanh(input: object) -> Tensor:  # noqa: A002
    """The hyperbolic tangent."""
    return pk.tanh(input)


def sigmoid(input: object) -> Tensor:  # noqa: A002
    """1 / (1 + exp(-input))."""
    return pk.sigmoid(input)


def softmax(input: object, dim: int = -1) -> Tensor:  # noqa: A002
    """exp(input) normalised to sum 1 along `dim`."""
    return pk.softmax(input, axis=dim)


def log_softmax(input: object, dim: int = -1) -> Tensor:  # noqa: A002
    """log(softmax(input, dim)), computed stably."""
    return pk.log_softmax(input, axis=dim)


def layer_norm(input: object, normalized_shape: int | Sequence[int],  # noqa: A002
               weight: object = None, bias: object = None, eps: float = 1e-5) -> Tensor:
    """Normalises the trailing `normalized_shape` dimensions to mean 0 and variance 1, then
    scales by `weight` and shifts by `bias` (either may be None)."""
    return pk.layer_norm(input, normalized_shape, weight, bias, eps)


def dropout(input: object, p: float = 0.5, training: bool = True) -> Tensor:  # noqa: A002
    """Zeroes each element with probability `p` and scales the kept ones by 1/(1-p), so the
    expected value is unchanged; the identity when not `training` or when p == 0. The mask
    comes from `pk.random` (seed it with `pk.random.seed`) and is applied as a multiply, so the
    gradient flows through the kept elements only."""
    x = as_tensor(input, "dropout: input")
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not x.dtype.is_float:
        raise TypeError(f"dropout: input must be a float tensor, got {x.dtype.name}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = pk.random.rand(x.shape, dtype=x.dtype) >= p
    return x * (keep.astype(x.dtype) * (1.0 / (1.0 - p)))


def dropout2d(input: object, p: float = 0.5, training: bool = True) -> Tensor:  # noqa: A002
    """Zeroes whole channels: each (sample, channel) plane of input (N, C, H, W) with
    probability `p`, scaling the kept ones by 1/(1-p); a 3-d input is taken as (N, C, L),
    as PyTorch does. The identity when not `training` or when p == 0."""
    return _channel_dropout(input, p, training, "dropout2d", (3, 4))


def dropout1d(input: object, p: float = 0.5, training: bool = True) -> Tensor:  # noqa: A002
    """Zeroes whole channels of input (N, C, L), or of an unbatched (C, L), with probability
    `p`, scaling the kept ones by 1/(1-p)."""
    return _channel_dropout(input, p, training, "dropout1d", (2, 3))


def _channel_dropout(input: object, p: float, training: bool, op: str,  # noqa: A002
                     ndims: tuple[int, int]) -> Tensor:
    """One keep-or-drop draw per channel: a mask of shape (N, C, 1, ...) (or (C, 1, ...)
    for the smaller of `ndims`, an unbatched input) broadcast over the rest."""
    x = as_tensor(input, f"{op}: input")
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: p must be in [0, 1], got {p}")
    if x.ndim not in ndims:
        raise ValueError(f"{op}: input must be {ndims[0]}-d or {ndims[1]}-d, got shape "
                         f"{x.shape}")
    if not x.dtype.is_float:
        raise TypeError(f"{op}: input must be a float tensor, got {x.dtype.name}")
    if not training or p == 0.0:
        return x
    lead = 2 if x.ndim == ndims[1] else 1
    mask_shape = x.shape[:lead] + (1,) * (x.ndim - lead)
    if p == 1.0:
        return x * 0.0
    keep = pk.random.rand(mask_shape, dtype=x.dtype) >= p
    return x * (keep.astype(x.dtype) * (1.0 / (1.0 - p)))


def embedding(input: object, weight: object, padding_idx: int | None = None) -> Tensor:  # noqa: A002
    """Rows of `weight` (num_embeddings, embedding_dim) picked by the integer `input`: the
    result has shape input.shape + (embedding_dim,). Row `padding_idx` gets no gradient."""
    w = as_tensor(weight, "embedding: weight")
    if w.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got "
                         f"shape {w.shape}")
    ids = as_tensor(input, "embedding: input")
    if not ids.dtype.is_int:
        raise TypeError(f"embedding: input must hold integer indices, got {ids.dtype.name}")
    if padding_idx is not None and w.requires_grad:
        # the padding row is looked up from a detached copy so that it never trains
        # (a `where`, not a blend by multiplies: inf * 0 would make an inf weight NaN)
        keep = pk.arange(w.shape[0]) != padding_idx % w.shape[0]
        w = pk.where(keep.reshape(-1, 1), w, w.detach())
    return pk.take(w, ids, axis=0)


def scaled_dot_product_attention(query: object, key: object, value: object,
                                 attn_mask: object = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None) -> Tensor:
    """softmax(query @ keyᵀ · scale + mask) @ value over the last two dimensions, as PyTorch's:
    query (..., L, E), key (..., S, E), value (..., S, Ev). `attn_mask` is a bool mask (True =
    attend) or a float mask added to the scores, broadcast to (..., L, S); `is_causal` keeps
    the keys j <= i. Without a mask or dropout it runs pk.attention's fused kernels."""
    if attn_mask is not None and is_causal:
        raise ValueError("scaled_dot_product_attention: give attn_mask or is_causal, not both")
    if attn_mask is None and not dropout_p:
        return pk.attention(query, key, value, causal=bool(is_causal), scale=scale)
    q, k, v = (as_tensor(a, f"scaled_dot_product_attention: {n}")
               for a, n in ((query, "query"), (key, "key"), (value, "value")))
    s = (q.shape[-1] ** -0.5) if scale is None else float(scale)
    scores = pk.matmul(q, k.mT) * s
    if is_causal:
        lq, lk = scores.shape[-2:]
        attn_mask = pk.tril(pk.ones((lq, lk), dtype=pk.bool_))
    if attn_mask is not None:
        m = as_tensor(attn_mask, "scaled_dot_product_attention: attn_mask")
        scores = pk.where(m, scores, float("-inf")) if m.dtype == pk.bool_ else scores + m
    probs = dropout(pk.softmax(scores, axis=-1), dropout_p, True)
    return pk.matmul(probs, v)
