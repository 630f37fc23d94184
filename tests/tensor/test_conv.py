"""conv2d and conv_transpose2d against float64 numpy references written from their
definitions (conv2d gathers patches, conv_transpose2d scatters each input pixel through the
kernel): hypothesis over shapes, strides, padding (ints, pairs, "same", "valid"), dilation,
groups (depthwise included), output_padding, dtypes, both portable kernels, and layouts (x:
contiguous, channels-last views, strided, transposed; w: contiguous, strided, transposed); the
channels-last result and the absence of copies; and every argument error, after which the
inputs are intact and the next launch works."""

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.tensor.conv import conv_direct, conv_igemm
from pykern.tensor.conv.conv_args import ConvGeometry
from pykern.tensor.conv.conv_phases import output_phases
from pykern.tensor.core.device_limits import loop_budget
from pykern.tensor.core.tensor import Tensor

from ops_inputs import EPS, as_layout, sample, seeds

DTYPES = [pk.f32, pk.f16, pk.bf16, pk.f64, pk.i32, pk.i8, pk.u8]
X_LAYOUTS = ["contiguous", "channels_last", "strided", "transposed"]
W_LAYOUTS = ["contiguous", "strided", "transposed"]


@contextlib.contextmanager
def kernel(direct: bool):
    """Runs the convolutions inside on the one-output-per-invocation kernel (`direct`) or on
    the implicit GEMM, whatever the number of output channels per group."""
    saved = conv_direct.MAX_OUTPUTS_PER_GROUP
    conv_direct.MAX_OUTPUTS_PER_GROUP = 1 << 30 if direct else -1
    try:
        yield
    finally:
        conv_direct.MAX_OUTPUTS_PER_GROUP = saved


# ---------------------------------------------------------------- references

def ref_conv2d(x, w, b, stride, padding, dilation, groups):
    """(result, Σ|products|) in float64; padding is ((top, bottom), (left, right))."""
    (sh, sw), (dh, dw) = stride, dilation
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), padding[0], padding[1]))
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out, mag = np.zeros((n, o, oh, ow)), np.zeros((n, o, oh, ow))
    w64 = w.astype(np.float64)
    for g in range(groups):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w64[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                           j * dw: j * dw + sw * (ow - 1) + 1: sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
                mag[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", np.abs(patch),
                                                         np.abs(ws[:, :, i, j]))
    return _add_bias(out, mag, b)


def ref_conv_transpose2d(x, w, b, stride, padding, output_padding, dilation, groups):
    """Every input pixel (ih, iw) adds x · w[:, :, kh, kw] at output (ih·s + kh·d - p, ...),
    on a full-size canvas that is then cropped by the padding."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg, o = c // groups, og * groups
    full = ((h - 1) * sh + dh * (kh - 1) + 1 + output_padding[0],
            (wd - 1) * sw + dw * (kw - 1) + 1 + output_padding[1])
    out, mag = np.zeros((n, o) + full), np.zeros((n, o) + full)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for g in range(groups):
        xs, ws = x64[:, g * cg:(g + 1) * cg], w64[g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * dh, i * dh + sh * (h - 1) + 1, sh)
                cols = slice(j * dw, j * dw + sw * (wd - 1) + 1, sw)
                out[:, g * og:(g + 1) * og, rows, cols] += np.einsum(
                    "nchw,co->nohw", xs, ws[:, :, i, j])
                mag[:, g * og:(g + 1) * og, rows, cols] += np.einsum(
                    "nchw,co->nohw", np.abs(xs), np.abs(ws[:, :, i, j]))
    oh, ow = full[0] - 2 * ph, full[1] - 2 * pw
    crop = (slice(None), slice(None), slice(ph, ph + oh), slice(pw, pw + ow))
    return _add_bias(out[crop], mag[crop], b)


def _add_bias(out, mag, b):
    if b is not None:
        out = out + b.astype(np.float64)[None, :, None, None]
        mag = mag + np.abs(b.astype(np.float64))[None, :, None, None]
    return out, mag


def check(got: Tensor, expected: np.ndarray, mag: np.ndarray, dtype: pk.DType, k: int) -> None:
    """Floats: within the error of k fused multiply-adds in the accumulator (f32 for f16 and
    f32, f64 for f64) plus the rounding of the result; integers: exactly numpy's wrapped
    result."""
    g = got.numpy()
    assert g.shape == expected.shape and g.dtype == dtype.numpy
    if dtype.is_float:
        acc = EPS[pk.f64] if dtype == pk.f64 else EPS[pk.f32]
        bound = 2 * (k + 1) * acc * mag + EPS[dtype] * np.abs(expected) + 1e-300
        assert (np.abs(g.astype(np.float64) - expected) <= bound).all()
    else:
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(g, expected.astype(np.int64).astype(dtype.numpy))


def make_x(rng, dtype, shape, layout) -> tuple[np.ndarray, Tensor]:
    """(values, tensor) of an (N, C, H, W) input in `layout`; "channels_last" is an NHWC
    tensor seen through permute(0, 3, 1, 2)."""
    a = sample(rng, dtype, shape)
    if layout == "channels_last":
        return a, pk.asarray(np.ascontiguousarray(a.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    return a, as_layout(a, layout, rng)


def is_channels_last(t: Tensor) -> bool:
    """NHWC memory (the strides of dimensions with one element do not matter)."""
    n, c, h, w = t.shape
    expected = (h * w * c, 1, w * c, c)
    return all(size == 1 or st == e for size, st, e in zip(t.shape, t.element_strides,
                                                            expected))


# ---------------------------------------------------------------- conv2d

paddings = st.one_of(st.tuples(st.integers(0, 2), st.integers(0, 2)), st.integers(0, 2),
                     st.sampled_from(["same", "valid"]))


def resolve_padding(padding, kernel, dilation):
    """The test's own reading of conv2d's padding argument: ((top, bottom), (left, right))."""
    if padding == "valid":
        return (0, 0), (0, 0)
    if padding == "same":
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    return (ph, ph), (pw, pw)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 2), groups=st.integers(1, 3), cg=st.integers(1, 3),
       og=st.integers(0, 3), h=st.integers(1, 7), wd=st.integers(1, 7), kh=st.integers(1, 3),
       kw=st.integers(1, 3), stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       padding=paddings, dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       bias=st.booleans(), dtype=st.sampled_from(DTYPES), layout=st.sampled_from(X_LAYOUTS),
       w_layout=st.sampled_from(W_LAYOUTS), direct=st.booleans(), seed=seeds)
def test_conv2d(n, groups, cg, og, h, wd, kh, kw, stride, padding, dilation, bias, dtype,
                layout, w_layout, direct, seed):
    if padding == "same":
        stride = (1, 1)
    rng = np.random.default_rng(seed)
    x, tx = make_x(rng, dtype, (n, groups * cg, h, wd), layout)
    w = sample(rng, dtype, (groups * og, cg, kh, kw))
    tw = as_layout(w, w_layout, rng)
    b = sample(rng, dtype, (groups * og,)) if bias else None
    pads = resolve_padding(padding, (kh, kw), dilation)
    if (h + sum(pads[0]) < dilation[0] * (kh - 1) + 1
            or wd + sum(pads[1]) < dilation[1] * (kw - 1) + 1):
        with pytest.raises(ValueError, match="larger than the padded input"):
            pk.conv2d(tx, tw, stride=stride, padding=padding, dilation=dilation, groups=groups)
        return
    with kernel(direct):
        got = pk.conv2d(tx, tw, b, stride=stride, padding=padding, dilation=dilation,
                        groups=groups)
    expected, mag = ref_conv2d(x, w, b, stride, pads, dilation, groups)
    check(got, expected, mag, dtype, cg * kh * kw)
    if layout == "channels_last" and not tx.is_contiguous and got.size:
        assert is_channels_last(got)
    np.testing.assert_array_equal(tx.numpy(), x)  # the input is untouched


@pytest.mark.parametrize("dtype", [pk.f16, pk.f64, pk.i32, pk.i8, pk.u16, pk.i64, pk.u64],
                         ids=lambda d: d.name)
@pytest.mark.parametrize("direct", [False, True], ids=["igemm", "direct"])
def test_conv2d_dtypes(dtype, direct):
    rng = np.random.default_rng(8)
    x = rng.integers(0, 4, (2, 3, 11, 10)).astype(dtype.numpy)
    w = rng.integers(0, 3, (70, 3, 3, 3)).astype(dtype.numpy)
    b = rng.integers(0, 3, (70,)).astype(dtype.numpy)
    with kernel(direct):
        got = pk.conv2d(x, w, b, stride=(2, 1), padding=1)
    expected, mag = ref_conv2d(x, w, b, (2, 1), ((1, 1), (1, 1)), (1, 1), 1)
    check(got, expected, mag, dtype, 27)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("direct", [False, True], ids=["igemm", "direct"])
def test_conv2d_depthwise_and_wide_groups(layout, direct):
    """groups == C (depthwise, one filter per channel) and a channel multiplier of 2, on more
    channels and output channels than one tile holds."""
    rng = np.random.default_rng(3)
    for c, mult in ((40, 1), (24, 2)):
        x, tx = make_x(rng, pk.f32, (2, c, 9, 8), layout)
        w = sample(rng, pk.f32, (c * mult, 1, 3, 3))
        b = sample(rng, pk.f32, (c * mult,))
        with kernel(direct):
            got = pk.conv2d(tx, w, b, padding="same", groups=c)
        expected, mag = ref_conv2d(x, w, b, (1, 1), ((1, 1), (1, 1)), (1, 1), c)
        check(got, expected, mag, pk.f32, 9)
        assert is_channels_last(got) == (layout == "channels_last")


@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d"])
def test_mixed_dtypes_are_promoted_and_the_bias_converted(op):
    rng = np.random.default_rng(10)
    x = sample(rng, pk.i8, (2, 4, 5, 5))
    w = sample(rng, pk.f16, (4, 4, 3, 3))
    b = sample(rng, pk.i32, (4,))
    got = getattr(pk, op)(x, w, b, stride=2, padding=1)
    if op == "conv2d":
        expected, mag = ref_conv2d(x, w, b, (2, 2), ((1, 1), (1, 1)), (1, 1), 1)
    else:
        expected, mag = ref_conv_transpose2d(x, w, b, (2, 2), (1, 1), (0, 0), (1, 1), 1)
    check(got, expected, mag, pk.f16, 36)


@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d"])
def test_the_wide_gpu_tiling_gives_the_same_results(op, monkeypatch):
    """GPUs take 64×128 tiles for 128 output channels per group or more; run that tiling here
    too, with groups, a channels-last x, and a stride that makes conv_transpose2d phased."""
    monkeypatch.setattr(conv_igemm, "is_cpu_device", lambda: False)
    rng = np.random.default_rng(11)
    x, tx = make_x(rng, pk.f32, (2, 6, 7, 6), "channels_last")
    w_shape = (260, 3, 3, 3) if op == "conv2d" else (6, 130, 3, 3)
    w = sample(rng, pk.f32, w_shape)
    b = sample(rng, pk.f32, (260,))
    got = getattr(pk, op)(tx, w, b, stride=2, padding=1, groups=2)
    if op == "conv2d":
        expected, mag = ref_conv2d(x, w, b, (2, 2), ((1, 1), (1, 1)), (1, 1), 2)
    else:
        expected, mag = ref_conv_transpose2d(x, w, b, (2, 2), (1, 1), (0, 0), (1, 1), 2)
    check(got, expected, mag, pk.f32, 27)
    assert is_channels_last(got)


def test_conv2d_same_padding_with_an_even_kernel_pads_bottom_and_right():
    rng = np.random.default_rng(4)
    x = sample(rng, pk.f32, (1, 2, 6, 5))
    w = sample(rng, pk.f32, (3, 2, 4, 2))
    got = pk.conv2d(x, w, padding="same", dilation=(1, 3))
    assert got.shape == (1, 3, 6, 5)
    expected, mag = ref_conv2d(x, w, None, (1, 1), ((1, 2), (1, 2)), (1, 3), 1)
    check(got, expected, mag, pk.f32, 16)


def test_conv2d_channels_last_input_is_read_in_place(monkeypatch):
    """A channels-last view goes to the kernel as it is: no copy, no contiguous()."""
    rng = np.random.default_rng(5)
    x, tx = make_x(rng, pk.f32, (2, 5, 7, 6), "channels_last")
    w = sample(rng, pk.f32, (4, 5, 3, 3))
    tw = pk.asarray(w)

    def refuse(self, *args, **kwargs):
        raise AssertionError("conv copied an operand")

    monkeypatch.setattr(Tensor, "copy", refuse)
    monkeypatch.setattr(Tensor, "contiguous", refuse)
    got = pk.conv2d(tx, tw, padding=1)
    monkeypatch.undo()
    expected, mag = ref_conv2d(x, w, None, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    check(got, expected, mag, pk.f32, 45)
    assert is_channels_last(got)


def test_a_reduction_too_long_for_one_invocation_goes_to_the_implicit_gemm():
    """One output channel would pick the direct kernel, but 4,000 channels × 9 taps walked by
    one invocation are past lavapipe's loop cap: the GEMM (8 reduction steps per iteration)
    takes it, and the result is right."""
    rng = np.random.default_rng(9)
    x = sample(rng, pk.f32, (1, 4000, 3, 3))
    w = sample(rng, pk.f32, (1, 4000, 3, 3))
    got = pk.conv2d(x, w)
    expected, mag = ref_conv2d(x, w, None, (1, 1), ((0, 0), (0, 0)), (1, 1), 1)
    check(got, expected, mag, pk.f32, 36000)


def test_a_reduction_too_long_for_the_device_is_a_clear_error():
    """On a device that cuts loops short, 540,000 products per output are more than even the
    GEMM's invocations (8 per loop iteration) walk: a ValueError saying so, nothing launched."""
    if loop_budget() is None:
        pytest.skip("this device runs loops of any length")
    x = pk.zeros((1, 60000, 3, 3))
    with pytest.raises(ValueError, match=r"conv2d: C/groups·KH·KW = 540000 is more than"):
        pk.conv2d(x, pk.zeros((9, 60000, 3, 3)))
    np.testing.assert_array_equal(pk.conv2d(x[:, :2], pk.ones((9, 2, 3, 3))).numpy(),
                                  np.zeros((1, 9, 1, 1)))


def test_an_input_that_is_both_nchw_and_nhwc_gives_nchw():
    """(N, C, 1, 1) is row-major in both layouts: the result (here 3x3) is NCHW."""
    x = pk.asarray(np.ones((2, 3, 1, 1), np.float32))
    got = pk.conv_transpose2d(x, np.ones((3, 5, 3, 3), np.float32))
    assert got.shape == (2, 5, 3, 3) and got.is_contiguous
    np.testing.assert_array_equal(got.numpy(), np.full((2, 5, 3, 3), 3.0))
    nhwc = pk.asarray(np.ones((2, 4, 4, 3), np.float32)).permute(0, 3, 1, 2)
    assert is_channels_last(pk.conv2d(nhwc, np.ones((5, 3, 3, 3), np.float32), padding=1))


def test_conv2d_without_input_channels_gives_the_bias():
    b = np.array([1.5, -2.0], np.float32)
    got = pk.conv2d(np.ones((2, 0, 4, 4), np.float32), np.ones((2, 0, 3, 3), np.float32), b)
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(b[None, :, None, None],
                                                               (2, 2, 2, 2)))


def test_conv2d_errors_leave_tensors_intact():
    x, w = pk.asarray(np.ones((1, 4, 5, 5), np.float32)), np.ones((2, 4, 3, 3), np.float32)
    cases = [
        (ValueError, "x must be 4-d", dict(x=x[0])),
        (ValueError, "channels", dict(w=np.ones((2, 3, 3, 3), np.float32))),
        (ValueError, "bias must have shape", dict(bias=np.ones(3, np.float32))),
        (ValueError, "stride must be >= 1", dict(stride=0)),
        (ValueError, "padding must be >= 0", dict(padding=(-1, 0))),
        (TypeError, "dilation must be an int", dict(dilation=1.5)),
        (ValueError, "groups must be >= 1", dict(groups=0)),
        (TypeError, "groups must be an int", dict(groups=2.0)),
        (ValueError, "groups=3 must divide the 4 input channels", dict(groups=3)),
        (ValueError, "groups=2 must divide the 3 output channels",
         dict(w=np.ones((3, 2, 3, 3), np.float32), groups=2)),
        (ValueError, r"w expects 2 \(w.shape\[1\] = 1 per group, groups=2",
         dict(w=np.ones((2, 1, 3, 3), np.float32), groups=2)),
        (ValueError, "padding='same' needs stride 1", dict(padding="same", stride=2)),
        (ValueError, "'valid' or 'same', got 'full'", dict(padding="full")),
        (ValueError, "kernel size must be at least 1x1",
         dict(w=np.ones((2, 4, 0, 3), np.float32))),
        (ValueError, "larger than the padded input", dict(w=np.ones((2, 4, 6, 3), np.float32))),
        (TypeError, "x has dtype bool", dict(x=np.ones((1, 4, 5, 5), bool))),
    ]
    for error, message, kwargs in cases:
        args = dict(x=x, w=w) | kwargs
        with pytest.raises(error, match=message):
            pk.conv2d(args.pop("x"), args.pop("w"), **args)
    np.testing.assert_array_equal(x.numpy(), np.ones((1, 4, 5, 5), np.float32))
    np.testing.assert_array_equal(pk.conv2d(x, w).numpy(), np.full((1, 2, 3, 3), 36.0))


# ---------------------------------------------------------------- conv_transpose2d

@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 2), groups=st.integers(1, 3), cg=st.integers(1, 3),
       og=st.integers(0, 3), h=st.integers(1, 6), wd=st.integers(1, 6), kh=st.integers(1, 3),
       kw=st.integers(1, 3), stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       padding=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       extra=st.tuples(st.integers(0, 2), st.integers(0, 2)), bias=st.booleans(),
       dtype=st.sampled_from(DTYPES), layout=st.sampled_from(X_LAYOUTS),
       w_layout=st.sampled_from(W_LAYOUTS), direct=st.booleans(), seed=seeds)
def test_conv_transpose2d(n, groups, cg, og, h, wd, kh, kw, stride, padding, dilation, extra,
                          bias, dtype, layout, w_layout, direct, seed):
    output_padding = tuple(min(e, max(s, d) - 1) for e, s, d in zip(extra, stride, dilation))
    rng = np.random.default_rng(seed)
    x, tx = make_x(rng, dtype, (n, groups * cg, h, wd), layout)
    w = sample(rng, dtype, (groups * cg, og, kh, kw))
    tw = as_layout(w, w_layout, rng)
    b = sample(rng, dtype, (groups * og,)) if bias else None
    size = [(i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
            zip((h, wd), stride, padding, dilation, (kh, kw), output_padding)]
    kwargs = dict(stride=stride, padding=padding, output_padding=output_padding,
                  dilation=dilation, groups=groups)
    if min(size) < 1:
        with pytest.raises(ValueError, match="padding .* is too large"):
            pk.conv_transpose2d(tx, tw, **kwargs)
        return
    with kernel(direct):
        got = pk.conv_transpose2d(tx, tw, b, **kwargs)
    expected, mag = ref_conv_transpose2d(x, w, b, stride, padding, output_padding, dilation,
                                         groups)
    check(got, expected, mag, dtype, cg * kh * kw)
    if layout == "channels_last" and not tx.is_contiguous and got.size:
        assert is_channels_last(got)


@given(stride=st.integers(1, 4), padding=st.integers(0, 3), dilation=st.integers(1, 4),
       kernel=st.integers(1, 6), size=st.integers(1, 12))
def test_transposed_output_phases_cover_every_contributing_tap_once(stride, padding, dilation,
                                                                    kernel, size):
    """Each output index lies in one phase, and a phase's taps are exactly those through which
    some input index (i·s - p + k·d == o) reaches its outputs."""
    geo = ConvGeometry((stride, 1), (padding, 0), (dilation, 1), 1, transposed=True)
    seen = []
    for rows, _ in output_phases(geo, (kernel, 1), (size, 1)):
        taps = set(range(rows.tap0, rows.tap0 + rows.tap_step * rows.taps, rows.tap_step))
        for o in range(rows.first, rows.first + rows.step * rows.count, rows.step):
            seen.append(o)
            reaching = {k for k in range(kernel) if (o + padding - k * dilation) % stride == 0}
            assert taps == reaching
    assert sorted(seen) == list(range(size))


def test_conv_transpose2d_undoes_the_shape_of_a_strided_conv2d():
    """output_padding picks which of the input sizes that a stride-2 conv2d maps to 4x4 the
    transposed convolution restores; its values are conv2d's gradient with respect to x."""
    rng = np.random.default_rng(6)
    w = sample(rng, pk.f32, (6, 3, 3, 3))
    for size, output_padding in ((7, 0), (8, 1)):
        y = pk.conv2d(np.zeros((1, 3, size, size), np.float32), w, stride=2, padding=1)
        assert y.shape == (1, 6, 4, 4)
        g = sample(rng, pk.f32, (1, 6, 4, 4))
        back = pk.conv_transpose2d(g, w, stride=2, padding=1, output_padding=output_padding)
        assert back.shape == (1, 3, size, size)
        # the adjoint: <conv2d(x), g> == <x, conv_transpose2d(g)> for every x
        x = sample(rng, pk.f32, (1, 3, size, size))
        lhs = float((pk.conv2d(x, w, stride=2, padding=1).numpy().astype(np.float64)
                     * g).sum())
        rhs = float((x.astype(np.float64) * back.numpy()).sum())
        assert abs(lhs - rhs) <= 1e-4 * (1 + abs(lhs))


@pytest.mark.parametrize("direct", [False, True], ids=["igemm", "direct"])
def test_conv_transpose2d_depthwise_wide(direct):
    rng = np.random.default_rng(7)
    x, tx = make_x(rng, pk.f32, (2, 36, 5, 4), "channels_last")
    w = sample(rng, pk.f32, (36, 2, 3, 3))
    with kernel(direct):
        got = pk.conv_transpose2d(tx, w, stride=2, groups=36)
    expected, mag = ref_conv_transpose2d(x, w, None, (2, 2), (0, 0), (0, 0), (1, 1), 36)
    check(got, expected, mag, pk.f32, 9)
    assert is_channels_last(got)


def test_conv_transpose2d_errors_leave_tensors_intact():
    x, w = pk.asarray(np.ones((1, 4, 3, 3), np.float32)), np.ones((4, 2, 3, 3), np.float32)
    cases = [
        (ValueError, "x must be 4-d", dict(x=x[0])),
        (ValueError, r"w must be 4-d \(C, O/groups, KH, KW\)", dict(w=w[0])),
        (ValueError, "x has 4 channels but w has 3", dict(w=np.ones((3, 2, 3, 3), np.float32))),
        (ValueError, "groups=3 must divide the 4 input channels", dict(groups=3)),
        (ValueError, r"bias must have shape \(4,\)", dict(bias=np.ones(2, np.float32),
                                                         groups=2)),
        (ValueError, "output_padding .* must be smaller than the stride",
         dict(output_padding=1)),
        (ValueError, "output_padding .* must be smaller than the stride",
         dict(stride=2, dilation=2, output_padding=(0, 2))),
        (TypeError, "no padding strings", dict(padding="same")),
        (ValueError, "padding .* is too large", dict(padding=3)),
        (ValueError, "output_padding must be >= 0", dict(output_padding=-1)),
        (TypeError, "stride must be an int", dict(stride="2")),
    ]
    for error, message, kwargs in cases:
        args = dict(x=x, w=w) | kwargs
        with pytest.raises(error, match=message):
            pk.conv_transpose2d(args.pop("x"), args.pop("w"), **args)
    np.testing.assert_array_equal(x.numpy(), np.ones((1, 4, 3, 3), np.float32))
    got = pk.conv_transpose2d(x, w, groups=2, bias=np.ones(4, np.float32)).numpy()
    expected, _ = ref_conv_transpose2d(np.ones((1, 4, 3, 3)), w, np.ones(4), (1, 1), (0, 0),
                                       (0, 0), (1, 1), 2)
    np.testing.assert_array_equal(got, expected)
