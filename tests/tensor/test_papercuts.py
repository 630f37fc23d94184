"""The array API's and numpy's habits that pykern follows: `repeat` broadcasting a (1,)
repeats tensor, `expand_dims` with a positional axis and IndexError, shapes as several ints
(`pk.zeros(2, 3)`), reductions' axis by position (`pk.sum(t, 0)`), `pk.from_dlpack`, and the
conformance script's table."""

import collections
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import pykern as pk

xp = pk.array_api
A = np.array([[1, 2, 3], [4, 5, 6]], np.int32)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import array_api_conformance  # noqa: E402


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_repeat_broadcasts_a_single_count(axis):
    out = xp.repeat(pk.asarray(A), pk.asarray([2]), axis=axis)
    np.testing.assert_array_equal(out.numpy(), np.repeat(A, np.array([2]), axis=axis))


def test_repeat_refuses_other_shapes_and_keeps_the_tensor():
    t = pk.asarray(A)
    with pytest.raises(ValueError, match=r"repeat: repeats has shape \(2,\), expected \(3,\) "
                                         r"or \(1,\)"):
        xp.repeat(t, pk.asarray([1, 2]), axis=1)
    np.testing.assert_array_equal(t.numpy(), A)


def test_expand_dims_positional_axis_and_index_error():
    t = pk.asarray(A)
    for axis in (-3, -1, 0, 2):
        assert xp.expand_dims(t, axis).shape == np.expand_dims(A, axis).shape
    for axis in (3, -4):
        with pytest.raises(IndexError, match=rf"expand_dims: axis {axis} is outside \[-3, 2\]"):
            xp.expand_dims(t, axis)
    with pytest.raises(TypeError, match="axis must be an int"):
        xp.expand_dims(t, 1.5)
    assert inspect.signature(xp.expand_dims).parameters["axis"].kind is \
        inspect.Parameter.POSITIONAL_OR_KEYWORD


def test_creation_takes_a_shape_as_several_ints():
    assert pk.zeros(2, 3).shape == (2, 3) and pk.zeros(2, 3).dtype == pk.f32
    assert pk.ones(2, 3, 4, dtype=pk.i64).shape == (2, 3, 4)
    assert pk.empty(4, 1).shape == (4, 1) and pk.ones(5).shape == (5,)
    assert pk.zeros((2, 3), pk.i32).dtype == pk.i32 and pk.zeros(3, pk.u8).dtype == pk.u8
    assert pk.zeros(shape=(1, 2)).shape == (1, 2) and xp.zeros((2,), dtype=xp.int8).dtype == pk.i8
    assert pk.zeros(2, 3, requires_grad=True).requires_grad
    np.testing.assert_array_equal(pk.ones(2, 2, dtype=pk.i32).numpy(), np.ones((2, 2)))
    with pytest.raises(TypeError, match="dtype is given twice"):
        pk.zeros(3, pk.f32, dtype=pk.i32)
    with pytest.raises(TypeError, match="a shape is one sequence of ints or several ints"):
        pk.zeros((2, 3), 4)


def test_reductions_take_axis_by_position():
    a = A.astype(np.float32)  # (the dtype the numpy protocol tests reduce: the same kernels)
    t = pk.asarray(a)
    for name in ("sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all",
                 "count_nonzero", "std", "var"):
        out = getattr(pk, name)(t, 0) if name != "count_nonzero" else pk.count_nonzero(t, 0)
        np.testing.assert_allclose(out.numpy(), getattr(np, name)(a, 0), rtol=1e-6,
                                   err_msg=name)
    assert pk.sum(t, axis=1, keepdims=True).shape == (2, 1)
    with pytest.raises(TypeError):
        pk.sum(t, 0, True)  # keepdims stays keyword-only
    for name in ("sum", "max", "mean", "std"):  # x stays positional-only
        assert inspect.signature(getattr(xp, name)).parameters["x"].kind is \
            inspect.Parameter.POSITIONAL_ONLY


def test_from_dlpack_at_top_level():
    assert pk.from_dlpack is xp.from_dlpack
    out = pk.from_dlpack(A)
    np.testing.assert_array_equal(out.numpy(), A)
    assert out.dtype == pk.i32


def test_conformance_table_counts_by_module():
    tests = [{"nodeid": "array_api_tests/test_a.py::t1", "outcome": "passed"},
             {"nodeid": "array_api_tests/test_a.py::t2[x]", "outcome": "failed"},
             {"nodeid": "array_api_tests/test_b.py::t3", "outcome": "skipped"}]
    counts = array_api_conformance.count_by_module(tests)
    assert counts == {"test_a": collections.Counter(passed=1, failed=1),
                      "test_b": collections.Counter(skipped=1)}
    table = array_api_conformance.format_table(counts)
    assert table.splitlines()[-2].split() == ["total", "1", "1", "1", "0", "0"]
    assert table.endswith("passed 1 of 2 tests that ran (50.0%)")
