"""`pk.attention` on cooperative-matrix tiles (pykern/tensor/nnops/attention_coop.py): the tile
kernel runs in the interpreter (in CI) and, where the device multiplies tiles, through
`pk.attention` on the device; both are compared with softmax(q kᵀ · scale) v in float64 within the
bound of f16 inputs, f16 probabilities and f32 accumulation (`error_bound`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk
from pykern.passes.decompose import decompose
from pykern.runtime.feature import Feature
from pykern.spirv.lower import lower
from pykern.spirv.target import Target
from pykern.spirv.encoding.validate import validate
from pykern.tensor.nnops import attention_coop as ac

RNG = np.random.default_rng(10)
U16 = 2.0 ** -11  # f16's unit roundoff
BF16 = getattr(pk, "bf16", None)  # where the dtype exists
U32 = 2.0 ** -24


def has_f16_tiles() -> bool:
    devices = pk.devices()
    return bool(devices) and pk.get_device().info.features.has(Feature.COOPERATIVE_MATRIX) \
        and ac._offers(pk.get_device(), pk.f16)


def scores64(q: np.ndarray, k: np.ndarray, causal: bool, scale: float) -> np.ndarray:
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) * scale
    if causal:
        lq, lk = s.shape[-2:]
        s = np.where(np.tril(np.ones((lq, lk), bool)), s, -np.inf)
    return s


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
              scale: float) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q kᵀ · scale) v in float64, and the error bound of the tile kernel for it.

    The kernel's probabilities are p̃ = p (1 + ε) + δ: ε within f16's rounding of P (2⁻¹¹),
    the error of the f32 sums of q·k (d exact f16 products: d·2⁻²⁴·Σ|q||k|), f32's rounding
    of the scaled scores and exp2's error ((3 + 2|x|) ulp, x = log2 P >= -TAU - its distance
    to the row's maximum); δ within 2⁻²⁵ where P is an f16 subnormal (against a sum >= 1).
    Then out = Σ p̃ v / Σ p̃ differs from the reference by at most 2·max ε times the
    p-weighted mean of |v|, plus 2·Lk·2⁻²⁵·max|v|; P @ V summed in f32 adds Lk·2⁻²⁴ of the
    weighted mean, and the output's rounding to f16 2⁻¹¹ |out|."""
    s = scores64(q, k, causal, scale)
    smax = s.max(-1, keepdims=True)
    p = np.exp(s - smax)
    p /= p.sum(-1, keepdims=True)
    v64 = v.astype(np.float64)
    out = p @ v64
    d, lk = q.shape[-1], k.shape[-2]
    finite = np.isfinite(s)
    qk_abs = np.abs(q.astype(np.float64)) @ np.swapaxes(np.abs(k.astype(np.float64)), -1, -2)
    below = np.where(finite, (smax - s) / math.log(2), 0.0) + ac.TAU
    per_key = d * U32 * qk_abs * scale + 4 * U32 * (np.abs(np.where(finite, s, 0.0))
                                                    + np.abs(smax)) \
        + (3 + 2 * below) * 2.0 ** -23
    u = unit_roundoff(q.dtype)
    eps = u + np.where(finite, per_key, 0.0).max(-1, keepdims=True)
    weighted = p @ np.abs(v64)
    subnormal = 2 * lk * 2.0 ** -25 * np.abs(v64).max(-2, keepdims=True)
    bound = (2.02 * eps + lk * U32) * weighted + subnormal + u * np.abs(out) + 1e-7
    return out, bound


def unit_roundoff(dtype: np.dtype) -> float:
    return U16 if dtype == np.float16 else 2.0 ** -8  # bf16: 8 significant bits


def f16(shape: tuple[int, ...], dtype: object = pk.f16) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype.numpy)  # type: ignore[attr-defined]


def run_interpreted(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
                    scale: float) -> np.ndarray:
    """The tile kernel in the interpreter on 4-d arrays, launched as `coop_attention` does."""
    dtype = pk.f16 if q.dtype == np.float16 else BF16
    out = np.full(q.shape[:-1] + v.shape[-1:], np.nan, q.dtype)
    kern = ac.interpreted(ac._kernel(dtype, q.shape[-1], causal))
    words = [np.ascontiguousarray(t).view(np.uint64) for t in (q, k, v)]
    ac.launch(kern, *words, out, scale)
    return out


def check(got: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
          scale: float) -> None:
    expected, bound = reference(q, k, v, causal, scale)
    err = np.abs(got.astype(np.float64) - expected)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert np.all(err <= bound), f"error {err[worst]:.3g} > bound {bound[worst]:.3g} at {worst}"


# batch 1-2 with 2 heads; every case takes a few seconds in the interpreter
CASES = [  # (batch, Lq, Lk, d, causal)
    (1, 64, 64, 64, False),
    (1, 64, 64, 64, True),
    (1, 128, 128, 64, True),    # a skipped key block, a diagonal one and a full one
    (2, 64, 128, 64, False),    # more keys than queries
    (1, 128, 64, 64, True),     # queries past the last key see every key
    (1, 64, 64, 128, False),
    (1, 64, 64, 128, True),
    (1, 128, 128, 128, True),
]


@pytest.mark.parametrize("batch,lq,lk,d,causal", CASES)
def test_tile_kernel_matches_float64(batch, lq, lk, d, causal):
    q, k, v = f16((batch, 2, lq, d)), f16((batch, 2, lk, d)), f16((batch, 2, lk, d))
    scale = 1 / math.sqrt(d)
    check(run_interpreted(q, k, v, causal, scale), q, k, v, causal, scale)


@pytest.mark.parametrize("d,causal", [(64, True), (128, False)])
def test_rows_whose_maximum_grows_rescale_the_output(d, causal):
    """Keys of the second block score far higher for the queries of one subgroup (rows 16 to
    31): their maximum grows by more than TAU, so every subgroup takes O through shared memory
    (the other rows with a factor of 1)."""
    q, k, v = f16((1, 2, 128, d)), f16((1, 2, 128, d)), f16((1, 2, 128, d))
    q[..., 16:32, :] *= 4
    k[..., 64:, :] *= 4
    scale = 1 / math.sqrt(d)
    s = scores64(q, k, causal, scale) / math.log(2)
    first, second = s[..., :64].max(-1), s[..., 64:].max(-1)
    assert (second > first + ac.TAU).any()  # the case this test is for
    check(run_interpreted(q, k, v, causal, scale), q, k, v, causal, scale)


def test_pk_attention_takes_the_tile_kernel_through_views_and_broadcasting(monkeypatch):
    """The path of `pk.attention` into the tile kernel (word views, batch pieces, broadcast
    batch dimensions, a scale of one's own), with the kernel interpreted on any device."""
    monkeypatch.setattr(ac, "INTERPRET", True)
    q = f16((2, 1, 64, 64))
    k, v = f16((2, 64, 64)), f16((1, 64, 64))
    kv = pk.asarray(np.concatenate([k, k], axis=-1))[..., 64:]  # a view, rows 16-byte aligned
    out = pk.attention(q, kv, v, scale=0.2)
    assert out.shape == (2, 2, 64, 64) and out.dtype == pk.f16
    qb, kb, vb = np.broadcast_arrays(q, k[None], v[None])
    check(out.numpy(), qb, kb, vb, False, 0.2)


@pytest.mark.parametrize("what,shapes,dtype,fix", [
    ("head dimension 32", ((64, 32), (64, 32), (64, 32)), pk.f16, None),
    ("head dimensions differ", ((64, 64), (64, 64), (64, 128)), pk.f16, None),
    ("length not a multiple of 64", ((96, 64), (96, 64), (96, 64)), pk.f16, None),
    ("f32", ((64, 64), (64, 64), (64, 64)), pk.f32, None),
    ("unaligned rows", ((64, 64), (64, 64), (64, 64)), pk.f16, "unaligned"),
    ("mixed dtypes", ((64, 64), (64, 64), (64, 64)), pk.f16, "mixed"),
])
def test_shapes_it_does_not_take_go_to_the_portable_kernels(what, shapes, dtype, fix,
                                                          monkeypatch):
    monkeypatch.setattr(ac, "INTERPRET", True)  # the device would not even be asked
    q, k, v = (RNG.standard_normal(s).astype(dtype.numpy) for s in shapes)
    tq, tk, tv = pk.asarray(q), pk.asarray(k), pk.asarray(v)
    if fix == "unaligned":
        wide = pk.asarray(np.pad(k, ((0, 0), (1, 0))))
        tk = wide[:, 1:]  # each row 2 bytes past a 16-byte boundary
    if fix == "mixed":
        v = v.astype(np.float32)
        tv = pk.asarray(v)
    out = pk.empty(q.shape[:-1] + v.shape[-1:], pk.f16 if fix is None and dtype == pk.f16
                   or fix == "unaligned" else pk.f32)
    assert ac.applies(tq, tk, tv, out) is not None, what
    assert not ac.coop_attention(tq, tk, tv, out, False, 0.125)
    got = pk.attention(tq, tk, tv).numpy().astype(np.float64)
    s = scores64(q, k, False, 1 / math.sqrt(q.shape[-1]))
    p = np.exp(s - s.max(-1, keepdims=True))
    expected = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-2)


def test_what_it_takes_and_the_device_decides():
    q = pk.asarray(f16((2, 64, 128)))
    out = pk.empty((2, 64, 128), pk.f16)
    assert ac.applies(q, q, q, out) is None
    assert ac.coop_attention(q, q, q, out, True, 0.1) == has_f16_tiles()


@pytest.mark.skipif(not has_f16_tiles(), reason="the device has no 16x16x16 f16->f32 tiles")
@pytest.mark.parametrize("batch,lq,lk,d,causal", CASES + [(2, 256, 256, 128, True),
                                                         (2, 256, 512, 64, False)])
def test_pk_attention_on_the_device_matches_float64(batch, lq, lk, d, causal):
    q, k, v = f16((batch, 2, lq, d)), f16((batch, 2, lk, d)), f16((batch, 2, lk, d))
    out = pk.attention(q, k, v, causal=causal)
    check(out.numpy(), q, k, v, causal, 1 / math.sqrt(d))


@pytest.mark.skipif(not has_f16_tiles(), reason="the device has no 16x16x16 f16->f32 tiles")
def test_growing_maxima_on_the_device():
    q, k, v = f16((1, 2, 256, 128)), f16((1, 2, 256, 128)), f16((1, 2, 256, 128))
    q[..., 16:32, :] *= 4
    k[..., 128:, :] *= 4
    out = pk.attention(q, k, v, causal=True)
    check(out.numpy(), q, k, v, True, 1 / math.sqrt(128))


@pytest.mark.parametrize("d", ac.HEAD_DIMS)
@pytest.mark.parametrize("causal,save_lse", [(False, False), (True, False), (True, True)])
def test_modules_lower_for_a_device_with_tiles_and_pass_spirv_val(d, causal, save_lse):
    """Lowered for a generic device with every optional feature (spirv-val judges them where
    it knows SPV_KHR_cooperative_matrix; older ones leave that to the driver)."""
    kern = ac._kernel(pk.f16, d, causal, save_lse)
    words = np.zeros((1, 2, 128, d // 4), np.uint64)
    args = (words, words, words, np.zeros((1, 2, 128, d), np.float16),
            np.zeros((1, 2, 128), np.float32), np.float32(1))
    target = Target()
    module = lower(decompose(kern._translate(kern._key(kern._by_name(args, {}), 3)), target),
                   target).words
    validate(module)
    text = str(kern.ir(*args))
    assert "tile[f16 16x16 matrix_a]" in text and "tile[f32 16x16 accumulator]" in text


@pytest.mark.skipif(BF16 is None, reason="pk.bf16 does not exist here")
@pytest.mark.parametrize("d,causal", [(64, True), (128, False)])
def test_bf16_tile_kernel_matches_float64(d, causal):
    q, k, v = (f16((1, 2, 64, d), BF16) for _ in range(3))
    check(run_interpreted(q, k, v, causal, 0.1), q, k, v, causal, 0.1)


@pytest.mark.skipif(BF16 is None or not ac._offers(pk.get_device(), BF16),
                    reason="no pk.bf16, or no 16x16x16 bf16->f32 tiles on the device")
def test_bf16_pk_attention_on_the_device_matches_float64():
    q, k, v = (f16((2, 2, 128, 128), BF16) for _ in range(3))
    out = pk.attention(q, k, v, causal=True)
    assert out.dtype == BF16
    check(out.numpy(), q, k, v, True, 1 / math.sqrt(128))
