"""conv2d on cooperative-matrix tiles (`pykern.tensor.conv.conv_coop`): the tile kernel run in the
interpreter (every machine) against a direct float64 reference, within the bound of f32
accumulation; the operands it declines; and, where the device multiplies tiles, the ResNet-sized
check of `check_on_device` on the device itself."""

import time

import numpy as np
import pytest

import pykern as pk
from pykern.passes import decompose, lower_bf16
from pykern.runtime.feature import Feature
from pykern.spirv.lower import lower
from pykern.spirv.target import Target
from pykern.spirv.encoding.validate import validate
from pykern.tensor.conv.conv_coop import _kernel, coop_conv2d, plan_coop_conv2d

RNG = np.random.default_rng(10)
EPS = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f32": 0.0}  # the output's rounding, relative


def has_tiles() -> bool:
    devices = pk.devices()
    return bool(devices) and pk.get_device().info.features.has(Feature.COOPERATIVE_MATRIX)


def reference(x: np.ndarray, w: np.ndarray, stride, padding, dilation) -> np.ndarray:
    """conv2d in float64, straight from its definition: out[n, o, i, j] = sum over c, a, b of
    x[n, c, i·sh - ph + a·dh, j·sw - pw + b·dw] · w[o, c, a, b], zero outside x."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    padded = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    padded[:, :, ph:ph + h, pw:pw + wd] = x
    out = np.zeros((n, o, oh, ow))
    for a in range(kh):
        for b in range(kw):
            window = padded[:, :, a * dh:a * dh + sh * (oh - 1) + 1:sh,
                            b * dw:b * dw + sw * (ow - 1) + 1:sw]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, a, b])
    return out


def operands(shape_x, shape_w, dtype: str, layout: str = "nchw"
             ) -> tuple[np.ndarray, np.ndarray, pk.Tensor, pk.Tensor]:
    """Random x and w, as float64 arrays of the values the tensors of `dtype` hold; with
    layout "nhwc" x's memory is channels-last (a permuted view, as PyTorch's channels_last)."""
    n, c, h, wd = shape_x
    values = RNG.standard_normal((n, h, wd, c) if layout == "nhwc" else shape_x)
    x = pk.asarray(values.astype(np.float32), dtype=getattr(pk, dtype))
    if layout == "nhwc":
        x = x.permute(0, 3, 1, 2)
    w = pk.asarray(RNG.standard_normal(shape_w).astype(np.float32), dtype=getattr(pk, dtype))
    return x.numpy().astype(np.float64), w.numpy().astype(np.float64), x, w


def assert_within_f32_accumulation(got: np.ndarray, x, w, stride, padding, dilation,
                                   out_dtype: str) -> None:
    """Each product of 16-bit values is exact in f32; K of them summed in f32 lie within
    K·2^-23·(|x| conv |w|) of the exact sum, then rounded once to the output's dtype."""
    exact = reference(x, w, stride, padding, dilation)
    magnitude = reference(np.abs(x), np.abs(w), stride, padding, dilation)
    k = w.shape[1] * w.shape[2] * w.shape[3]
    bound = k * 2.0 ** -23 * magnitude + EPS[out_dtype] * np.abs(exact) + 1e-30
    err = np.abs(got.astype(np.float64) - exact)
    assert got.shape == exact.shape
    assert np.all(err <= bound), f"worst {np.max(err - bound)} over the bound"


CASES = [
    # (N, C, H, W), (O, KH, KW), stride, padding, dilation
    ((1, 4, 6, 7), (8, 3, 3), (1, 1), (1, 1), (1, 1)),     # K = 36: two slices, a k tail
    ((2, 32, 7, 6), (130, 1, 1), (2, 2), (0, 0), (1, 1)),  # two filter blocks, an O tail
    ((2, 8, 9, 9), (16, 3, 3), (1, 1), (1, 1), (1, 1)),    # M = 162: blocks across images
    ((1, 16, 9, 8), (24, 3, 3), (2, 1), (1, 0), (1, 1)),   # stride 2 by 1, padding 1 by 0
    ((2, 12, 8, 8), (20, 3, 3), (1, 1), (2, 2), (2, 2)),   # dilation 2
    ((1, 6, 5, 5), (8, 2, 2), (1, 1), (1, 0), (1, 1)),     # C = 6: no words of 4 channels
    ((2, 3, 9, 9), (8, 3, 3), (2, 2), (1, 1), (1, 1)),     # C = 3, K = 27: w padded to 28
    ((1, 3, 9, 8), (5, 7, 7), (2, 2), (3, 3), (1, 1)),     # ResNet's stem: 7x7, K = 147
]


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("shape_x,filters,stride,padding,dilation", CASES)
def test_f16_in_the_interpreter(shape_x, filters, stride, padding, dilation, layout):
    o, kh, kw = filters
    x, w, tx, tw = operands(shape_x, (o, shape_x[1], kh, kw), "f16", layout)
    exact = reference(x, w, stride, padding, dilation)
    out = pk.full(exact.shape, np.nan, pk.f32)
    launch = plan_coop_conv2d(tx, tw, out, stride, padding, dilation)
    words = layout == "nhwc" and shape_x[1] % 4 == 0  # 8-byte copies of 4 channels
    assert launch is not None and launch.kernel is _kernel(pk.f16, pk.f32, words)
    launch.run(interpret=True)
    assert_within_f32_accumulation(out.numpy(), x, w, stride, padding, dilation, "f32")


@pytest.mark.parametrize("dtype,out_dtype", [("f16", "f16"), ("bf16", "bf16"), ("bf16", "f32")])
def test_16_bit_outputs_and_bf16(dtype, out_dtype):
    stride, padding, dilation = (1, 1), (1, 1), (1, 1)
    x, w, tx, tw = operands((1, 8, 5, 6), (12, 8, 3, 3), dtype)
    exact = reference(x, w, stride, padding, dilation)
    out = pk.full(exact.shape, np.nan, getattr(pk, out_dtype))
    plan_coop_conv2d(tx, tw, out, stride, padding, dilation).run(interpret=True)
    assert_within_f32_accumulation(out.numpy(), x, w, stride, padding, dilation, out_dtype)


@pytest.mark.parametrize("w_layout", ["ohwi", "oihw"])
def test_channels_last_filters_and_a_strided_output(w_layout):
    """With a channels-last x, w in channels-last memory is read as it is (else reordered);
    out is a view into a wider tensor, written through its strides and nowhere else."""
    stride, padding, dilation = (1, 1), (0, 0), (1, 1)
    x, _, tx, _ = operands((1, 8, 5, 6), (1, 1, 1, 1), "f16", "nhwc")
    ohwi = pk.asarray(RNG.standard_normal((16, 3, 3, 8)).astype(np.float32), dtype=pk.f16)
    tw = ohwi.permute(0, 3, 1, 2) if w_layout == "ohwi" else ohwi.permute(0, 3, 1, 2).contiguous()
    w = tw.numpy().astype(np.float64)
    exact = reference(x, w, stride, padding, dilation)
    wide = pk.zeros((1, 20, 3, 4), pk.f32)
    out = wide[:, 2:18]
    plan_coop_conv2d(tx, tw, out, stride, padding, dilation).run(interpret=True)
    assert_within_f32_accumulation(out.numpy(), x, w, stride, padding, dilation, "f32")
    left = wide.numpy()
    assert np.all(left[:, :2] == 0) and np.all(left[:, 18:] == 0)


@pytest.mark.parametrize("dtype,out_dtype,words", [("f16", "f32", False), ("f16", "f16", True),
                                                   ("bf16", "bf16", False), ("bf16", "f32", True)])
def test_lowers_to_spirv_for_a_device_with_tiles(dtype, out_dtype, words):
    """The SPIR-V backend takes every variant (spirv-val judges it where it knows
    SPV_KHR_cooperative_matrix; older ones cannot), so the device sees no surprise."""
    kern = _kernel(getattr(pk, dtype), getattr(pk, out_dtype), words)
    out = np.zeros((1, 8, 4, 4), getattr(pk, out_dtype).numpy)
    x = np.zeros(64, np.uint64 if words else np.uint16)
    args = (x, np.zeros((1, 1, 8, 9), np.uint64), out) + (0,) * 16
    key = kern._key(kern._by_name(args, {}), 3)
    target = Target()
    words = lower(decompose(lower_bf16(kern._translate(key)), target), target).words
    validate(words, "vulkan1.3")


def _declined(x, w, out) -> bool:
    geometry = ((1, 1), (0, 0), (1, 1))
    return plan_coop_conv2d(x, w, out, *geometry) is None \
        and coop_conv2d(x, w, out, *geometry) is False


def test_operands_it_does_not_apply_to():
    f16 = pk.ones((1, 4, 4, 4), pk.f16)
    assert _declined(pk.ones((1, 4, 4, 4)), pk.ones((8, 4, 1, 1)), pk.empty((1, 8, 4, 4)))
    assert _declined(f16, pk.ones((8, 4, 1, 1)), pk.empty((1, 8, 4, 4)))  # mixed dtypes
    assert _declined(f16, pk.ones((8, 4, 1, 1), pk.f16), pk.empty((1, 8, 4, 4), pk.i32))
    # (w's rows not contiguous over (C, KH, KW), or not whole words: taken, w copied)
    strided_w = pk.ones((4, 8, 1, 1), pk.f16).permute(1, 0, 2, 3)
    assert plan_coop_conv2d(f16, strided_w, pk.empty((1, 8, 4, 4)), (1, 1), (0, 0),
                            (1, 1)) is not None
    # groups (w with fewer channels than x)
    assert _declined(pk.ones((1, 8, 4, 4), pk.f16), pk.ones((8, 4, 1, 1), pk.f16),
                     pk.empty((1, 8, 4, 4)))


@pytest.mark.skipif(has_tiles(), reason="the device multiplies tiles")
def test_a_device_without_tiles_is_declined_and_out_untouched():
    x, w = pk.ones((1, 4, 4, 4), pk.f16), pk.ones((8, 4, 1, 1), pk.f16)
    out = pk.full((1, 8, 4, 4), 5.0)
    assert plan_coop_conv2d(x, w, out, (1, 1), (0, 0), (1, 1)) is not None
    assert coop_conv2d(x, w, out, (1, 1), (0, 0), (1, 1)) is False
    assert np.all(out.numpy() == 5.0)


@pytest.mark.skipif(not has_tiles(), reason="the device has no cooperative matrices")
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_on_the_device(dtype, layout):
    result = check_on_device(dtype, layout)
    if result is None:
        pytest.skip(f"the device has no 16x16x16 {dtype} tiles into f32")
    assert result["worst_over_bound"] <= 0, result


@pytest.mark.skipif(not has_tiles(), reason="the device has no cooperative matrices")
def test_three_channels_on_the_device():
    """C = 3 (K = 27, the filters copied into padded rows), as ResNet's first layer."""
    result = check_on_device("f16", "nchw", size=(4, 3, 32, 32, 64, 3))
    if result is None:
        pytest.skip("the device has no 16x16x16 f16 tiles into f32")
    assert result["worst_over_bound"] <= 0, result


def check_on_device(dtype: str = "f16", layout: str = "nchw", samples: int = 512,
                    repeats: int = 10, size: tuple = (32, 64, 56, 56, 64, 3)) -> dict | None:
    """The ResNet layer 32x64x56x56, 3x3 -> 64 filters, padding 1 (`size`: N, C, H, W, O,
    KH = KW), on the device's tiles, x
    in `layout` memory: `samples` outputs compared with float64 sums, and the time of
    `repeats` launches. Returns the worst error over the f32-accumulation bound (<= 0 is right)
    and TFLOP/s, or None where `coop_conv2d` does not run here. The lead runs it on the H200:
    `python -c "import sys; sys.path.insert(0, 'tests/tensor'); import test_conv_coop as t;
    print(t.check_on_device('f16', 'nchw'), t.check_on_device('f16', 'nhwc'))"`."""
    n, c, h, wd, o, k = size
    x, w, tx, tw = operands((n, c, h, wd), (o, c, k, k), dtype, layout)
    out = pk.empty((n, o, h, wd), pk.f32)
    geometry = ((1, 1), (1, 1), (1, 1))
    if not coop_conv2d(tx, tw, out, *geometry):
        return None
    got = out.numpy()
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    worst = -np.inf
    for pn, po, py, px in zip(*(RNG.integers(0, s, samples) for s in (n, o, h, wd))):
        window = padded[pn, :, py:py + k, px:px + k]
        exact = float(np.sum(window * w[po]))
        bound = c * k * k * 2.0 ** -23 * float(np.sum(np.abs(window * w[po])))
        worst = max(worst, abs(float(got[pn, po, py, px]) - exact) - bound)
    pk.sync()
    start = time.perf_counter()
    for _ in range(repeats):
        coop_conv2d(tx, tw, out, *geometry)
    pk.sync()
    seconds = (time.perf_counter() - start) / repeats
    flops = 2.0 * n * o * h * wd * c * k * k
    return {"dtype": dtype, "layout": layout, "worst_over_bound": worst, "ms": seconds * 1e3,
            "tflops": flops / seconds / 1e12}
