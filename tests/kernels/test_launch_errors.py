"""Bad launches raise pk.LaunchError naming the parameter, before anything runs; afterwards
existing tensors are intact and the next launch works."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


@pk.kernel
def scale(a: pk.f32, x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i]


@pk.kernel
def fill_u32(v: pk.u32, out: pk.u32[:]):
    out[pk.global_id(0)] = v


@pytest.fixture
def tensors():
    x = np.arange(100, dtype=np.float32)
    X, O = pk.asarray(x), pk.asarray(np.full(100, -1.0, np.float32))
    return x, X, O


def assert_intact_and_working(x, X, O):
    np.testing.assert_array_equal(X.numpy(), x)
    np.testing.assert_array_equal(O.numpy(), np.full(100, -1.0, np.float32))
    scale[100](2.0, X, O)
    np.testing.assert_array_equal(O.numpy(), 2 * x)


@pytest.mark.parametrize("args, words", [
    ((2.0, "X"), "takes 3 argument(s) (a, x, out), 2 given"),
    ((2.0, "X", "O", "O"), "takes 3 argument(s)"),
    (("X", "X", "O"), "parameter 'a' (f32) expects a number, got a pk.Tensor"),
    ((2.0, 3.0, "O"), "parameter 'x' expects pk.f32[:], got a float"),
    ((2.0, np.zeros(100, np.float64), "O"), "parameter 'x' expects pk.f32[:], got a numpy array of "
                                            "dtype float64"),
    ((2.0, np.zeros((10, 10), np.float32), "O"), "with 2 dimension(s)"),
    ((2.0, "X", pk.zeros(100, pk.i32)), "parameter 'out' expects pk.f32[:], got a pk.Tensor of "
                                        "dtype i32"),
    ((2.0, "X", [1.0, 2.0]), "parameter 'out' expects pk.f32[:], got a list"),
])
def test_bad_arguments(tensors, args, words):
    x, X, O = tensors
    args = tuple({"X": X, "O": O}.get(a, a) if isinstance(a, str) else a for a in args)
    with pytest.raises(pk.LaunchError) as info:
        scale[100](*args)
    assert words in str(info.value)
    assert str(info.value).startswith("scale")
    assert_intact_and_working(x, X, O)


@pytest.mark.parametrize("value, words", [
    (-1, "-1 is out of range 0..4294967295"),
    (2**32, "out of range"),
    (1.5, "expects an integer, got 1.5"),
    ("3", "expects a number"),
])
def test_scalar_range_and_kind(value, words):
    out = pk.zeros(4, pk.u32)
    with pytest.raises(pk.LaunchError, match="parameter 'v' \\(u32\\)") as info:
        fill_u32[4](value, out)
    assert words in str(info.value)
    fill_u32[4](np.uint32(7), out)
    np.testing.assert_array_equal(out.numpy(), [7, 7, 7, 7])


@pytest.mark.parametrize("grid", [(-1,), (1, 2, 3, 4), 2.5, (2**31,), "8", ()])
def test_bad_grid(tensors, grid):
    x, X, O = tensors
    with pytest.raises(pk.LaunchError, match="grid"):
        scale[grid if grid != (-1,) else -1](2.0, X, O)
    assert_intact_and_working(x, X, O)


def test_compile_error_then_next_launch_works(tensors):
    x, X, O = tensors

    @pk.kernel
    def broken(x: pk.f32[:]):
        x[0] = x  # an array used as a value

    with pytest.raises(pk.CompileError):
        broken[1](X)
    assert_intact_and_working(x, X, O)


def test_calling_without_grid_is_a_clear_error():
    with pytest.raises(TypeError, match=r"scale\[n\]"):
        scale(2.0, None, None)


# ---------------------------------------------------------------- float scalars out of range


@pk.kernel
def fill_f16(v: pk.f16, out: pk.f32[:]):
    out[pk.global_id(0)] = pk.f32(v)


@pytest.mark.parametrize("value", [1e39, -1e39, 3.5e38, 10**39, 10**400])
def test_a_float_out_of_range_is_a_launch_error(tensors, value):
    x, X, O = tensors
    with pytest.raises(pk.LaunchError) as info:
        scale[100](value, X, O)
    text = str(info.value)
    assert text.startswith("scale(): parameter 'a' (f32): ") and "out of range" in text
    assert "the largest finite f32 is 3.40282347e+38" in text
    assert_intact_and_working(x, X, O)


def test_float_range_follows_the_parameter_type():
    out = pk.zeros(2, pk.f32)
    with pytest.raises(pk.LaunchError, match="parameter 'v' \\(f16\\).*largest finite f16 is "
                                             "65504"):
        fill_f16[2](70000.0, out)
    fill_f16[2](65504.0, out)  # the largest f16
    np.testing.assert_array_equal(out.numpy(), [65504.0, 65504.0])
    o = np.zeros(2, np.float32)
    scale[2](3.4028234e38, np.ones(2, np.float32), o)  # rounds to the largest f32: fine
    np.testing.assert_array_equal(o, np.float32(3.4028234e38))


def test_inf_and_nan_pass_as_they_are(tensors):
    x, X, O = tensors
    scale[100](np.inf, X, O)
    got = O.numpy()
    assert np.isnan(got[0]) and np.all(np.isposinf(got[1:]))  # inf * 0 is nan
    scale[100](float("nan"), X, O)
    assert np.all(np.isnan(O.numpy()))


def test_interpreter_checks_float_range_too():
    k = pk.kernel(scale.__wrapped__, interpret=True)
    with pytest.raises(pk.LaunchError, match="parameter 'a' \\(f32\\): 1e\\+39 is out of range"):
        k[4](1e39, np.ones(4, np.float32), np.zeros(4, np.float32))


# ---------------------------------------------------------------- keyword arguments


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_arguments_by_name(interpret):
    k = scale if not interpret else pk.kernel(scale.__wrapped__, interpret=True)
    x = np.arange(6, dtype=np.float32)
    for args, kwargs in [((), {"a": 3.0, "x": x, "out": None}),
                         ((3.0,), {"out": None, "x": x}),
                         ((3.0, x), {"out": None})]:
        out = np.zeros(6, np.float32)
        kwargs = {key: out if v is None else v for key, v in kwargs.items()}
        k[6](*args, **kwargs)
        np.testing.assert_array_equal(out, 3 * x)


@pytest.mark.parametrize("args, kwargs, words", [
    ((2.0,), {"x": "X", "out": "O", "y": 1}, "scale() got an unexpected keyword argument 'y' "
                                             "(parameters: a, x, out)"),
    ((2.0, "X"), {"x": "X", "out": "O"}, "scale() got multiple values for parameter 'x'"),
    ((), {"a": 2.0, "x": "X"}, "scale() is missing argument(s) for 'out'"),
    ((), {"a": 2.0, "x": "O", "out": 5}, "parameter 'out' expects pk.f32[:], got a int"),
])
def test_bad_arguments_by_name(tensors, args, kwargs, words):
    x, X, O = tensors
    kwargs = {key: {"X": X, "O": O}.get(v, v) if isinstance(v, str) else v
              for key, v in kwargs.items()}
    args = tuple({"X": X}.get(a, a) if isinstance(a, str) else a for a in args)
    with pytest.raises(pk.LaunchError) as info:
        scale[100](*args, **kwargs)
    assert words in str(info.value)
    assert_intact_and_working(x, X, O)


@pk.kernel
def with_defaults(x: pk.f32[:], out: pk.f32[:], a: pk.f32 = 2.0, n: pk.constexpr = 3):
    i = pk.global_id(0)
    out[i] = a * x[i] + n


def test_parameters_with_default_values():
    x = np.arange(4, dtype=np.float32)
    for args, kwargs, expected in [((), {}, 2 * x + 3), ((5.0,), {}, 5 * x + 3),
                                   ((), {"n": 1}, 2 * x + 1), ((1.0, 0), {}, x)]:
        out = np.zeros(4, np.float32)
        with_defaults[4](x, out, *args, **kwargs)
        np.testing.assert_array_equal(out, expected)
    for call in (lambda: with_defaults[4](x=x), lambda: with_defaults[4](x)):
        with pytest.raises(pk.LaunchError, match="is missing argument\\(s\\) for 'out'"):
            call()


def test_inspection_takes_arguments_by_name_too():
    x = np.zeros(4, np.float32)
    assert str(scale.ir(a=1.0, x=x, out=x)) == str(scale.ir(1.0, x, x))
    assert scale.spirv(1.0, x=x, out=x) == scale.spirv(1.0, x, x)


# ---------------------------------------------------------------- tensors that cannot be used


def test_a_freed_tensor_is_a_launch_error_naming_the_parameter(tensors):
    x, X, O = tensors
    dead = pk.asarray(x)
    dead.buffer.free()
    with pytest.raises(pk.LaunchError) as info:
        scale[100](2.0, dead, O)
    assert str(info.value) == ("scale(): parameter 'x' was given a tensor whose device memory "
                               "was freed")
    assert_intact_and_working(x, X, O)
    with pytest.raises(pk.LaunchError, match="parameter 'x' was given a tensor whose device "
                                             "memory was freed"):
        pk.kernel(scale.__wrapped__, interpret=True)[100](2.0, dead, O)


def test_a_tensor_of_another_device_is_a_launch_error_naming_the_parameter(tensors):
    import pykern.runtime as rt

    x, X, O = tensors
    other = rt.open_device()
    try:
        foreign = pk.Tensor(other.create_buffer(400), (100,), pk.f32)
        with pytest.raises(pk.LaunchError) as info:
            scale[100](2.0, X, foreign)
        assert str(info.value).startswith("scale(): parameter 'out' was given a tensor of "
                                          "another device")
        assert_intact_and_working(x, X, O)
    finally:
        foreign.buffer.free()
        other.close()


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_a_read_only_array_for_a_written_parameter_is_refused_before_running(interpret):
    @pk.kernel(interpret=interpret)
    def two_outputs(x: pk.f32[:], first: pk.f32[:], second: pk.f32[:]):
        i = pk.global_id(0)
        first[i] = x[i]
        second[i] = x[i]

    x = np.arange(4, dtype=np.float32)
    first, second = np.full(4, -1.0, np.float32), np.full(4, -1.0, np.float32)
    second.flags.writeable = False
    with pytest.raises(pk.LaunchError) as info:
        two_outputs[4](x, first, second)
    assert str(info.value) == ("two_outputs(): parameter 'second' is written by the kernel, but "
                               "the numpy array given for it is read-only")
    np.testing.assert_array_equal(first, -1.0)  # nothing ran
    x.flags.writeable = False  # read-only input arrays are fine
    second = np.zeros(4, np.float32)
    two_outputs[4](x, first, second)
    np.testing.assert_array_equal(second, x)
