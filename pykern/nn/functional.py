"""`pk.nn.functional`: PyTorch's functional names over pykern's ops.

Every function here is a composition of differentiable pykern ops, so each one has a gradient
without a backward of its own. Arguments follow PyTorch (`dim`, `training`, `reduction`, ...)
so that a ported model changes only its imports.
"""

from __future__ import annotations

from collections.abc import Sequence

import pykern as pk
from pykern.tensor.elementwise import as_tensor
from pykern.tensor.tensor import Tensor

__all__ = ["linear", "relu", "gelu", "silu", "softmax", "log_softmax", "layer_norm", "dropout",
           "embedding", "cross_entropy", "mse_loss", "scaled_dot_product_attention"]

_REDUCTIONS = ("mean", "sum", "none")


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


def _reduce(loss: Tensor, reduction: str, op: str, count: object = None) -> Tensor:
    """`loss` summed, averaged (over `count` when given, else its size) or kept."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return total
    return total / (loss.size if count is None else count)


def _classes_last(logits: Tensor, target: Tensor) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """(N, C, d1, ...) logits as (M, C) rows and the target as (M,), plus the loss's shape."""
    if logits.ndim < 2:
        raise ValueError(f"cross_entropy: input must be (N, C) or (N, C, d1, ...), got shape "
                         f"{logits.shape}")
    n, c = logits.shape[:2]
    rest = logits.shape[2:]
    if target.shape != (n,) + rest:
        raise ValueError(f"cross_entropy: target must have shape {(n,) + rest} for input shape "
                         f"{logits.shape}, got {target.shape}")
    if rest:
        order = (0,) + tuple(range(2, logits.ndim)) + (1,)
        logits = logits.permute(order)
    return logits.reshape(-1, c), target.reshape(-1), (n,) + rest


def _check_targets(target: Tensor, classes: int, ignore_index: int) -> None:
    """Class indices outside [0, C) other than ignore_index are an error, as in PyTorch (read
    back to the host: a wrong label would otherwise give a silently wrong loss)."""
    t = target.numpy()
    bad = (t != ignore_index) & ((t < 0) | (t >= classes))
    if bad.any():
        raise IndexError(f"cross_entropy: target {int(t[bad][0])} is out of range for "
                         f"{classes} classes (ignore_index={ignore_index})")


def cross_entropy(input: object, target: object, weight: object = None,  # noqa: A002
                  *, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """The negative log-likelihood of the integer class `target` under softmax(input) along the
    class dimension 1: input (N, C) or (N, C, d1, ...), target (N,) or (N, d1, ...). Targets
    equal to `ignore_index` add nothing and are left out of the mean. `label_smoothing` mixes
    in the uniform distribution over classes, as PyTorch's. Per-class `weight` is not
    supported."""
    op = "cross_entropy"
    if weight is not None:
        raise NotImplementedError(f"{op}: per-class weight is not supported (weight=None)")
    logits = as_tensor(input, f"{op}: input")
    t = as_tensor(target, f"{op}: target")
    if not logits.dtype.is_float:
        raise TypeError(f"{op}: input must be float logits, got {logits.dtype.name}")
    if not t.dtype.is_int:
        raise TypeError(f"{op}: target must hold integer class indices, got {t.dtype.name} "
                        f"(class probabilities are not supported)")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be in [0, 1], got {label_smoothing}")
    rows, t, shape = _classes_last(logits, t)
    classes = rows.shape[1]
    _check_targets(t, classes, ignore_index)
    valid = t != ignore_index
    logp = pk.log_softmax(rows, axis=-1)
    # the targets' log-probabilities picked by a one-hot `where` (differentiable; a multiply
    # would turn the -inf of a masked-out logit into 0 * -inf = NaN)
    pick = pk.one_hot(pk.where(valid, t, 0), classes, dtype=pk.bool_)
    nll = -pk.where(pick, logp, 0.0).sum(axis=-1)
    if label_smoothing:
        uniform = -logp.sum(axis=-1) / classes
        nll = (1.0 - label_smoothing) * nll + label_smoothing * uniform
    # ignored targets add 0 (a `where`: their nll may be inf, class 0 being picked for them)
    loss = pk.where(valid, nll, 0.0).reshape(shape)
    count = valid.astype(logp.dtype).sum() if reduction == "mean" else None
    return _reduce(loss, reduction, op, count)


def mse_loss(input: object, target: object, reduction: str = "mean") -> Tensor:  # noqa: A002
    """(input - target)², averaged, summed or kept (`reduction`)."""
    x = as_tensor(input, "mse_loss: input")
    y = as_tensor(target, "mse_loss: target")
    if x.shape != y.shape:
        raise ValueError(f"mse_loss: input shape {x.shape} and target shape {y.shape} differ")
    d = x - y
    return _reduce(d * d, reduction, "mse_loss")


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
