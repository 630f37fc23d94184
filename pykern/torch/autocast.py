"""`torch.autocast(device_type="pykern")`: the casts CUDA's autocast makes, for the same
operators (PyTorch's lists for CUDA): matrix products and convolutions run in the autocast
dtype (fp16 by default, or bf16), numerically sensitive operators in float32, and operators
of several inputs in the widest of their dtypes."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils._pytree import tree_map

_KEY = torch._C.DispatchKey.AutocastPrivateUse1
_LOW_PRECISION = (torch.float16, torch.bfloat16)

LOWER = ("mm", "addmm", "addmv", "addr", "bmm", "baddbmm", "addbmm", "matmul", "mv", "linear",
         "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d.input",
         "conv_transpose3d.input", "convolution", "_convolution", "prelu", "einsum",
         "chain_matmul", "linalg_multi_dot", "linalg_vecdot", "scaled_dot_product_attention")
FLOAT32 = ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
           "reciprocal", "rsqrt", "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor",
           "pow.Scalar", "softplus", "layer_norm", "native_layer_norm", "group_norm",
           "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss",
           "nll_loss2d", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss",
           "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
           "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
           "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm",
           "logsumexp", "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod",
           "cumsum", "linalg_vector_norm", "linalg_matrix_norm", "sum", "sum.dim_IntList",
           "cross_entropy_loss", "norm.Scalar", "norm.ScalarOpt_dim")
PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler",
           "index_put", "scatter_add", "tensordot")


def _lower(t: object) -> object:
    if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64 \
            and t.device.type == "pykern":
        return t.to(torch.get_autocast_dtype("pykern"))
    return t


def _float32(t: object) -> object:
    if isinstance(t, torch.Tensor) and t.dtype in _LOW_PRECISION and t.device.type == "pykern":
        return t.float()
    return t


def _kernel(overload: torch._ops.OpOverload, policy: str) -> Callable[..., object]:
    def kernel(*args: object, **kwargs: object) -> object:
        if policy == "lower":
            cast = _lower
        elif policy == "float32":
            cast = _float32
        else:
            widest = _widest(args, kwargs)
            cast = lambda t: t.to(widest) if isinstance(t, torch.Tensor) and \
                t.is_floating_point() and t.dtype != widest else t  # noqa: E731
        args, kwargs = tree_map(cast, (args, kwargs))
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(_KEY)):
            return overload(*args, **kwargs)
    return kernel


def _widest(args: tuple, kwargs: dict) -> torch.dtype:
    found: list[torch.dtype] = []
    tree_map(lambda t: found.append(t.dtype) if isinstance(t, torch.Tensor) and
             t.is_floating_point() else None, (args, kwargs))
    widest = found[0] if found else torch.float32
    for d in found[1:]:
        widest = torch.promote_types(widest, d)
    return widest


def _overload(name: str) -> torch._ops.OpOverload | None:
    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return None
    return getattr(packet, overload or "default", None)


def register() -> list[torch.library.Library]:
    """Registers the casting kernels on PyTorch's AutocastPrivateUse1 key, and lets every other
    operator pass through it (PyTorch registers that for its built-in devices only)."""
    through = torch.library.Library("_", "IMPL")
    through.fallback(torch.library.fallthrough_kernel, dispatch_key="AutocastPrivateUse1")
    lib = torch.library.Library("aten", "IMPL")
    for names, policy in ((LOWER, "lower"), (FLOAT32, "float32"), (PROMOTE, "promote")):
        for name in names:
            overload = _overload(name)
            if overload is not None:
                lib.impl(name, _kernel(overload, policy), "AutocastPrivateUse1")
    return [through, lib]
