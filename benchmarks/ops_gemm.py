"""The GEMM-class cases of the `ops` benchmark: matmul, attention and conv2d, in TFLOP/s.

FLOPs counted: 2·M·N·K for a matmul; 4·B·H·L²·D for attention (q·kᵀ and p·v), half of it when
causal (the masked half is work neither side needs to do); 10·B·H·L²·D for attention's backward
(q·kᵀ recomputed, dO·vᵀ, and the products giving dV, dQ and dK), half of it when causal;
2·N·O·H·W·C·KH·KW for a conv2d at stride 1 with the size kept by padding. The float64
references are computed on a sample of the result: blocks of rows for a matmul, blocks of
queries of the first and last (batch, head) for attention (of queries and keys for its
backward), the first and last image for conv2d.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

import pykern as pk

from .ops_case import OpCase, host_random, to_host
from .ops_check import Check, compare, describe, row_blocks
from .ops_plan import ConvShape, OpsPlan

SEED = 10


def gemm_cases(plan: OpsPlan) -> Iterator[OpCase]:
    """Every GEMM-class case of the plan, in the order they run."""
    for dtype, n in plan.matmul:
        yield matmul_case(dtype, n, plan.check_rows)
    for dtype, m, k, n in plan.matmul_ragged:
        yield matmul_case(dtype, (m, k, n), plan.check_rows)
    for dtype in plan.attention_dtypes:
        for shape in plan.attention:
            for causal in (False, True):
                yield attention_case(dtype, shape, causal, plan.check_rows)
    for dtype in plan.attention_dtypes:
        for shape in plan.attention:
            if shape[3] <= BACKWARD_MAX_DIM:
                for causal in (False, True):
                    yield attention_backward_case(dtype, shape, causal, plan.check_rows)
    for dtype in plan.conv_dtypes:
        for conv in plan.conv:
            yield conv_case(dtype, conv)


# ---- matmul ----


def matmul_case(dtype: str, size: int | tuple[int, int, int], check_rows: int) -> OpCase:
    """c = a @ b for n×n operands (`size` n, the case `n^3`) or (M×K)·(K×N) ones (`size`
    (M, K, N), the case `MxK@KxN`); i8 into i32 (`pk.matmul(a, b, dtype=pk.i32)`) against
    torch's `_int_mm` (i8 × i8 → i32)."""
    m, k, n = (size,) * 3 if isinstance(size, int) else size

    def inputs() -> Sequence[np.ndarray]:
        rng = np.random.default_rng(SEED)
        return host_random(rng, (m, k), dtype), host_random(rng, (k, n), dtype)

    def check(host: Sequence[np.ndarray], c: pk.Tensor) -> Check:
        a, b = host
        blocks = row_blocks(m, check_rows)
        b64 = b.astype(np.float64)
        pieces = [(to_host(c[rows]), _as_result(a[rows].astype(np.float64) @ b64, c))
                  for rows in blocks]
        return compare(pieces, c.dtype.name, describe(blocks, m))

    label = f"{n}^3 {dtype}" if isinstance(size, int) else f"{m}x{k}@{k}x{n} {dtype}"
    return OpCase("matmul", label, dtype, "TFLOP/s", 2.0 * m * n * k, inputs,
                  _pykern_matmul(dtype), _torch_matmul(dtype), check)


def _pykern_matmul(dtype: str) -> Callable[[Sequence[pk.Tensor]], pk.Tensor]:
    if dtype.startswith("i"):
        return lambda t: pk.matmul(t[0], t[1], dtype=pk.i32)
    return lambda t: pk.matmul(t[0], t[1])


def _torch_matmul(dtype: str) -> Callable[[object, Sequence[object]], object]:
    """torch's product for `dtype`: `torch._int_mm` for integers, `torch.matmul` else."""
    if dtype.startswith("i"):
        def int_mm(torch: object, t: Sequence[object]) -> object:
            if not hasattr(torch, "_int_mm"):
                raise NotImplementedError("this torch has no torch._int_mm")
            return torch._int_mm(t[0], t[1])  # type: ignore[attr-defined]
        return int_mm
    return lambda torch, t: torch.matmul(t[0], t[1])  # type: ignore[attr-defined]


def _as_result(reference: np.ndarray, c: pk.Tensor) -> np.ndarray:
    """An exact integer reference wrapped to an integer result's dtype (numpy's matmul
    semantics for narrow integers); float references stay float64."""
    if c.dtype.is_int:
        return np.round(reference).astype(np.int64).astype(c.dtype.numpy)
    return reference


# ---- attention ----


def attention_case(dtype: str, shape: tuple[int, int, int, int], causal: bool,
                   check_rows: int) -> OpCase:
    """pk.attention(q, k, v, causal=...) for q, k, v of (batch, heads, length, head dim),
    against torch's scaled_dot_product_attention."""
    batch, heads, length, d = shape
    flops = 4.0 * batch * heads * length * length * d * (0.5 if causal else 1.0)

    def inputs() -> Sequence[np.ndarray]:
        rng = np.random.default_rng(SEED)
        return tuple(host_random(rng, shape, dtype) for _ in range(3))

    def check(host: Sequence[np.ndarray], out: pk.Tensor) -> Check:
        blocks = row_blocks(length, check_rows)
        pieces = []
        for b, h in sorted({(0, 0), (batch - 1, heads - 1)}):
            q, k, v = (x[b, h].astype(np.float64) for x in host)
            for rows in blocks:
                got = to_host(out[b, h, rows])
                pieces.append((got, _attention_rows(q, k, v, rows, causal)))
        return compare(pieces, out.dtype.name,
                       f"{describe(blocks, length)} of the first and last (batch, head)")

    case = f"{batch}x{heads}x{length}x{d} {dtype}{' causal' if causal else ''}"
    return OpCase("attention", case, dtype, "TFLOP/s", flops, inputs,
                  lambda t: pk.attention(t[0], t[1], t[2], causal=causal),
                  lambda torch, t: torch.nn.functional.scaled_dot_product_attention(
                      t[0], t[1], t[2], is_causal=causal),
                  check)


def _attention_rows(q: np.ndarray, k: np.ndarray, v: np.ndarray, rows: slice,
                    causal: bool) -> np.ndarray:
    """softmax(q[rows] @ kᵀ / sqrt(D), causal mask) @ v in float64."""
    scores = q[rows] @ k.T / np.sqrt(q.shape[-1])
    if causal:
        query = np.arange(rows.start, rows.stop)[:, None]
        scores = np.where(np.arange(k.shape[0])[None, :] > query, -np.inf, scores)
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    return (p / p.sum(axis=-1, keepdims=True)) @ v


# head dimensions the backward case runs at: where pk.attention's fused backward runs whatever
# the dtype (at 128 only after the tile kernel; the composition's f16 scores miss the f16
# bound, and its f32 scores at 4x16x4096² would take 4 GiB)
BACKWARD_MAX_DIM = 64


def attention_backward_case(dtype: str, shape: tuple[int, int, int, int], causal: bool,
                            check_rows: int) -> OpCase:
    """The backward of pk.attention(q, k, v, causal=...) (`pk.autograd.grad` of its result
    for a random output gradient, with retain_graph, after one forward outside the timing),
    against torch's scaled_dot_product_attention backward. Checked: blocks of rows of dq, dk
    and dv of the first and last (batch, head), each gradient on its own."""
    batch, heads, length, d = shape
    flops = 10.0 * batch * heads * length * length * d * (0.5 if causal else 1.0)
    last: dict[str, tuple[pk.Tensor, ...]] = {}  # the gradients of the latest call, for check

    def inputs() -> Sequence[np.ndarray]:
        rng = np.random.default_rng(SEED)
        return tuple(host_random(rng, shape, dtype) for _ in range(4))  # q, k, v, dO

    def pykern_backward(t: Sequence[pk.Tensor]) -> pk.Tensor:
        leaves, out = _forward_once(last, t, lambda a: pk.attention(*a, causal=causal))
        grads = pk.autograd.grad(out, leaves, grad_outputs=t[3], retain_graph=True)
        last["grads"] = grads
        return grads[0]

    def torch_backward(torch: object, t: Sequence[object]) -> object:
        leaves, out = _forward_once(last, t, lambda a: torch.nn.functional  # type: ignore
                                    .scaled_dot_product_attention(*a, is_causal=causal),
                                    key="torch")
        return torch.autograd.grad(out, leaves, t[3], retain_graph=True)  # type: ignore

    def check(host: Sequence[np.ndarray], _: pk.Tensor) -> Check:
        blocks = row_blocks(length, check_rows)
        checks = []
        for i, name in enumerate("qkv"):
            pieces = []
            for b, h in sorted({(0, 0), (batch - 1, heads - 1)}):
                exact = _attention_grads(*(x[b, h].astype(np.float64) for x in host), causal)
                pieces += [(to_host(last["grads"][i][b, h, rows]), exact[i][rows])
                           for rows in blocks]
            checks.append(compare(pieces, dtype, f"d{name}: {describe(blocks, length)} of "
                                  "the first and last (batch, head)"))
        return max(checks, key=lambda c: c.error / c.bound)

    case = f"{batch}x{heads}x{length}x{d} {dtype}{' causal' if causal else ''}"
    return OpCase("attention backward", case, dtype, "TFLOP/s", flops, inputs,
                  pykern_backward, torch_backward, check)


def _forward_once(cache: dict, t: Sequence[object], forward: Callable[[list], object],
                  key: str = "pykern") -> tuple[list, object]:
    """The leaves (q, k, v of `t`, requiring grad) and the forward's result, made on the first
    call for these operands and reused after, so that only the backward is timed."""
    state = cache.get(key)
    if state is None or state[0] is not t:
        leaves = [x.detach().requires_grad_() for x in t[:3]]  # type: ignore[attr-defined]
        state = cache[key] = (t, leaves, forward(leaves))
    return state[1], state[2]


def _attention_grads(q: np.ndarray, k: np.ndarray, v: np.ndarray, g: np.ndarray,
                     causal: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dq, dk, dv) of softmax(q kᵀ / sqrt(D), causal mask) v for the output gradient g, in
    float64 for one (batch, head)."""
    scale = 1.0 / np.sqrt(q.shape[-1])
    s = q @ k.T * scale
    if causal:
        s = np.where(np.tri(*s.shape, dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    dp = g @ v.T
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    return ds @ k * scale, ds.T @ q * scale, p.T @ g


# ---- conv2d ----


def conv_case(dtype: str, conv: ConvShape) -> OpCase:
    """pk.conv2d(x, w, padding=kernel // 2) in NCHW, against torch's conv2d (cuDNN)."""
    pad = conv.kernel // 2
    flops = (2.0 * conv.batch * conv.out * conv.size * conv.size * conv.channels
             * conv.kernel * conv.kernel)

    def inputs() -> Sequence[np.ndarray]:
        rng = np.random.default_rng(SEED)
        x = host_random(rng, (conv.batch, conv.channels, conv.size, conv.size), dtype)
        w = host_random(rng, (conv.out, conv.channels, conv.kernel, conv.kernel), dtype)
        return x, w

    def check(host: Sequence[np.ndarray], y: pk.Tensor) -> Check:
        x, w = host
        images = sorted({0, conv.batch - 1})
        pieces = [(to_host(y[i]), _conv_image(x[i], w, pad)) for i in images]
        what = "all images" if len(images) == conv.batch else "the first and last image"
        return compare(pieces, y.dtype.name, what)

    return OpCase("conv2d", f"{conv.label} {dtype}", dtype, "TFLOP/s", flops, inputs,
                  lambda t: pk.conv2d(t[0], t[1], padding=pad),
                  lambda torch, t: torch.nn.functional.conv2d(t[0], t[1], padding=pad),
                  check)


def _conv_image(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """One image's cross-correlation (C, H, W) * (O, C, KH, KW) -> (O, H', W') in float64."""
    kh, kw = w.shape[-2:]
    padded = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(1, 2))
    return np.einsum("chwij,ocij->ohw", windows, w.astype(np.float64), optimize=True)
