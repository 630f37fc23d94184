"""Backward of prod, sort, topk, take_along_axis, scatter_add, conv2d (groups, even kernels
under padding="same") and conv_transpose2d, and of the ops the audit of the namespace found
cutting the graph (tril, triu, roll, cumulative_sum with include_initial): central differences
in float64 over shapes with size-1 axes, broadcasting and non-contiguous inputs, and analytic
gradients where they are simple."""

from __future__ import annotations

import functools
import inspect
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcheck
import namespace_grads as ng
import pykern as pk
from conv_reference import np_conv2d, np_conv_transpose2d

RNG = np.random.default_rng(1101)
check_grad = functools.partial(gradcheck.check_grad, rng=RNG)
xp = pk.array_api


# ---------------------------------------------------------------- prod

@pytest.mark.parametrize("shape, axis, keepdims", [
    ((3, 4), None, False), ((3, 4), 1, True), ((2, 1, 3), 1, False), ((2, 3, 4), (0, 2), False),
    ((1,), 0, False), ((4, 3), -1, True)])
def test_prod_gradient(shape, axis, keepdims):
    x = RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)
    check_grad(lambda t: pk.prod(t, axis=axis, keepdims=keepdims),
               lambda a: np.prod(a, axis=axis, keepdims=keepdims), x)


def test_prod_gradient_of_non_contiguous_inputs():
    x = RNG.uniform(0.5, 1.5, (4, 6))
    check_grad(lambda t: t.T.prod(axis=0), lambda a: a.T.prod(axis=0), x)
    check_grad(lambda t: pk.prod(t[::2, 1::2], axis=1), lambda a: np.prod(a[::2, 1::2], 1), x)


def test_prod_gradient_with_zeros_is_the_product_of_the_others():
    """No zero: P/x; one zero: P of the others at the zero, 0 elsewhere; two zeros: all 0 —
    and no nan or inf from a division by zero."""
    x = pk.asarray(np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [2.0, 3.0, 4.0],
                             [0.0, 5.0, -2.0]])).requires_grad_()
    pk.prod(x, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 3.0, 0.0], [0.0, 0.0, 0.0],
                                                   [12.0, 8.0, 6.0], [-10.0, 0.0, 0.0]])
    y = pk.asarray(np.array([0.0, 2.0, 0.5])).requires_grad_()
    pk.prod(y).backward()
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 0.0, 0.0])


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=3), data=st.data())
def test_prod_sort_and_take_along_axis_gradients_over_shapes(shape, data):
    """Hypothesis-chosen shapes, size-0 and size-1 dimensions included."""
    shape = tuple(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdims = data.draw(st.booleans())
    x = RNG.uniform(0.5, 1.5, shape)
    check_grad(lambda t: pk.prod(t, axis=axis, keepdims=keepdims),
               lambda a: np.prod(a, axis=axis, keepdims=keepdims), x)
    check_grad(lambda t: pk.sort(t, axis=axis), lambda a: np.sort(a, axis=axis), x)
    n = shape[axis]
    if n:
        idx_shape = list(shape)
        idx_shape[axis] = data.draw(st.integers(0, 3))
        idx = RNG.integers(-n, n, idx_shape)
        check_grad(lambda t: pk.take_along_axis(t, idx, axis=axis),
                   lambda a: np.take_along_axis(a, idx, axis=axis), x)


# ---------------------------------------------------------------- sort and topk

@pytest.mark.parametrize("axis, descending", [(-1, False), (0, True), (1, True)])
def test_sort_gradient(axis, descending):
    x = RNG.standard_normal((3, 5))
    sign = -1.0 if descending else 1.0
    check_grad(lambda t: pk.sort(t, axis=axis, descending=descending),
               lambda a: sign * np.sort(sign * a, axis=axis), x)
    check_grad(lambda t: pk.sort(t.T, axis=axis, descending=descending),
               lambda a: sign * np.sort(sign * a.T, axis=axis), x)


def test_sort_gradient_of_a_0d_tensor_and_a_size_1_axis():
    check_grad(lambda t: pk.sort(t), lambda a: a.copy(), np.array(2.5))
    check_grad(lambda t: pk.sort(t, axis=1), lambda a: np.sort(a, axis=1),
               RNG.standard_normal((4, 1)))


@pytest.mark.parametrize("k, axis, largest", [(2, -1, True), (1, 0, False), (5, 1, True),
                                              (0, 1, True)])
def test_topk_gradient(k, axis, largest):
    x = RNG.standard_normal((3, 5))

    def np_topk(a):
        order = np.argsort(-a if largest else a, axis=axis, kind="stable")
        picked = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(a, picked, axis=axis)

    check_grad(lambda t: pk.topk(t, k, axis=axis, largest=largest)[0], np_topk, x)
    check_grad(lambda t: pk.topk(t.T, k, axis=axis, largest=largest)[0],
               lambda a: np_topk(a.T), x.T.copy())


def test_topk_indices_stay_out_of_the_graph():
    values, indices = pk.topk(pk.asarray(RNG.standard_normal(6)).requires_grad_(), 3)
    assert values.grad_fn is not None and not indices.requires_grad


# ---------------------------------------------------------------- take_along_axis, take

def test_take_along_axis_gradient_with_repeated_and_negative_indices():
    x = RNG.standard_normal((3, 4))
    idx = np.array([[0, 3, 3], [1, 1, -2], [-1, 0, 2]])
    check_grad(lambda t: pk.take_along_axis(t, idx, axis=1),
               lambda a: np.take_along_axis(a, idx, axis=1), x)
    idx0 = np.array([[2, 0, 0, 1]])
    check_grad(lambda t: pk.take_along_axis(t, pk.asarray(idx0), axis=0),
               lambda a: np.take_along_axis(a, idx0, axis=0), x)


def test_take_along_axis_gradient_where_x_and_indices_broadcast():
    x = RNG.standard_normal((3, 1, 5))
    idx = np.array([[[4, 0], [1, 1]]])  # (1, 2, 2): broadcast against x's 3 and 1
    check_grad(lambda t: pk.take_along_axis(t, idx, axis=2),
               lambda a: np.take_along_axis(a, idx, axis=2), x)


def test_take_along_axis_gradient_of_strided_and_flattened_inputs():
    x = RNG.standard_normal((4, 6))
    idx = np.array([[2, 0], [1, 1]])
    check_grad(lambda t: pk.take_along_axis(t[::2, ::2], idx, axis=1),
               lambda a: np.take_along_axis(a[::2, ::2], idx, axis=1), x)
    flat = np.array([23, 0, 5, 5])
    check_grad(lambda t: pk.take_along_axis(t, flat, axis=None),
               lambda a: np.take_along_axis(a.ravel(), flat, axis=0), x)


def test_gather_gradients_follow_the_clipping_of_device_indices():
    """A device tensor's out-of-range indices are clipped by take and take_along_axis; their
    gradients go where the values came from."""
    x = pk.asarray(np.zeros((2, 4))).requires_grad_()
    idx = pk.asarray(np.array([[7, -9, 1]]))  # 7 -> 3, -9 -> -5 -> 0
    pk.take_along_axis(x, idx, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 1, 0, 1], [1, 1, 0, 1]])
    y = pk.asarray(np.zeros(4)).requires_grad_()
    pk.take(y, pk.asarray(np.array([-1, -1, 9, 0]))).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [1, 0, 0, 3])


def test_take_gradient_with_negative_indices():
    x = RNG.standard_normal((3, 4))
    check_grad(lambda t: pk.take(t, [-1, 0, -1], axis=1),
               lambda a: np.take(a, [-1, 0, -1], axis=1), x)


# ---------------------------------------------------------------- scatter_add

def np_scatter_add(x, axis, index, src):
    out = x.copy()
    for p in np.ndindex(index.shape):
        q = list(p)
        q[axis] = index[p]
        out[tuple(q)] += src[p]
    return out


@pytest.mark.parametrize("axis, index", [
    (0, np.array([[0, 1, 2, 0], [2, 2, 0, 1]])),   # repeated rows accumulate
    (1, np.array([[3, 3], [0, 1], [2, 2]])),       # src (3, 4) larger than index (3, 2)
    (-1, np.array([[1], [0]]))])                    # a size-1 index axis, rows left alone
def test_scatter_add_gradients(axis, index):
    x, src = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    check_grad(lambda t, s: pk.scatter_add(t, axis, index, s),
               lambda a, s: np_scatter_add(a, axis, index, s), x, src)


def test_scatter_add_gradient_of_a_transposed_source_only():
    x = pk.asarray(RNG.standard_normal((3, 4)))
    index = np.array([[0, 2], [1, 1], [3, 0]])
    src = RNG.standard_normal((2, 3))
    check_grad(lambda s: pk.scatter_add(x, 1, index, s.T),
               lambda s: np_scatter_add(x.numpy().astype(np.float64), 1, index, s.T), src)


def test_scatter_add_gives_skipped_device_indices_no_gradient():
    x = pk.asarray(np.zeros(3)).requires_grad_()
    src = pk.asarray(np.array([1.0, 2.0, 3.0])).requires_grad_()
    out = pk.scatter_add(x, 0, pk.asarray(np.array([2, 5, -1])), src)
    (out * pk.asarray(np.array([10.0, 20.0, 30.0]))).sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), [30.0, 0.0, 0.0])
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 20.0, 30.0])


# ---------------------------------------------------------------- conv2d and conv_transpose2d

@pytest.mark.parametrize("groups, s, p, d", [(2, (2, 1), (1, 2), (1, 2)),
                                             (4, (1, 1), (1, 0), (1, 1)),
                                             (2, (1, 2), (0, 1), (2, 1))])
def test_grouped_conv2d_gradients(groups, s, p, d):
    x = RNG.standard_normal((2, 4, 6, 5))
    w = RNG.standard_normal((8, 4 // groups, 3, 2))
    b = RNG.standard_normal(8)
    pads = ((p[0], p[0]), (p[1], p[1]))
    check_grad(lambda t, u, v: pk.conv2d(t, u, v, stride=s, padding=p, dilation=d,
                                         groups=groups),
               lambda t, u, v: np_conv2d(t, u, v, s, pads, d, groups), x, w, b, atol=1e-5)


@pytest.mark.parametrize("k, d, groups", [((2, 2), (1, 1), 4), ((4, 3), (1, 1), 1),
                                          ((3, 2), (1, 3), 2)])
def test_conv2d_same_padding_with_an_even_kernel(k, d, groups):
    """The odd total padding puts the extra row/column at the bottom/right."""
    x = RNG.standard_normal((2, 4, 5, 6))
    w = RNG.standard_normal((4, 4 // groups) + k)
    pads = tuple((t // 2, t - t // 2) for t in (d[0] * (k[0] - 1), d[1] * (k[1] - 1)))
    check_grad(lambda t, u: pk.conv2d(t, u, padding="same", dilation=d, groups=groups),
               lambda t, u: np_conv2d(t, u, None, (1, 1), pads, d, groups), x, w, atol=1e-5)


def test_conv2d_gradient_of_a_channels_last_input():
    x = RNG.standard_normal((2, 5, 6, 4))  # NHWC, seen as NCHW
    w = RNG.standard_normal((6, 2, 3, 3))
    check_grad(lambda t, u: pk.conv2d(t.permute(0, 3, 1, 2), u, padding=1, groups=2),
               lambda t, u: np_conv2d(t.transpose(0, 3, 1, 2), u, None, (1, 1),
                                      ((1, 1), (1, 1)), (1, 1), 2), x, w, atol=1e-5)


@pytest.mark.parametrize("s, p, op, d, groups", [
    ((1, 1), (0, 0), (0, 0), (1, 1), 1), ((2, 3), (1, 0), (1, 2), (1, 1), 1),
    ((1, 2), (1, 1), (1, 0), (2, 1), 2),   # output_padding >= stride (< dilation)
    ((2, 2), (0, 1), (0, 1), (1, 2), 4)])
def test_conv_transpose2d_gradients(s, p, op, d, groups):
    x = RNG.standard_normal((2, 4, 3, 4))
    w = RNG.standard_normal((4, 3, 3, 2))
    b = RNG.standard_normal(3 * groups)
    check_grad(lambda t, u, v: pk.conv_transpose2d(t, u, v, stride=s, padding=p,
                                                   output_padding=op, groups=groups,
                                                   dilation=d),
               lambda t, u, v: np_conv_transpose2d(t, u, v, s, p, op, d, groups), x, w, b,
               atol=1e-5)


def test_conv_transpose2d_gradient_of_a_channels_last_input_and_one_operand():
    x = RNG.standard_normal((1, 3, 4, 2))  # NHWC
    w = RNG.standard_normal((2, 2, 2, 2))
    check_grad(lambda t: pk.conv_transpose2d(t.permute(0, 3, 1, 2), pk.asarray(w), stride=2),
               lambda t: np_conv_transpose2d(t.transpose(0, 3, 1, 2), w, None, (2, 2), (0, 0),
                                             (0, 0), (1, 1), 1), x, atol=1e-5)
    xx = RNG.standard_normal((1, 2, 3, 4))
    check_grad(lambda u: pk.conv_transpose2d(pk.asarray(xx), u, padding=1),
               lambda u: np_conv_transpose2d(xx, u, None, (1, 1), (1, 1), (0, 0), (1, 1), 1),
               w, atol=1e-5)


# ---------------------------------------------------------------- what the audit fixed

def test_tril_triu_roll_and_cumulative_sum_with_include_initial():
    x = RNG.standard_normal((2, 3, 4))
    check_grad(lambda t: pk.tril(t, k=1), lambda a: np.tril(a, 1), x)
    check_grad(lambda t: pk.triu(t.mT), lambda a: np.triu(a.swapaxes(-1, -2)), x)
    check_grad(lambda t: xp.roll(t, (1, -5), axis=(2, 0)),
               lambda a: np.roll(a, (1, -5), axis=(2, 0)), x)
    check_grad(lambda t: xp.roll(t, 7), lambda a: np.roll(a, 7), x)
    check_grad(lambda t: xp.cumulative_sum(t, axis=1, include_initial=True),
               lambda a: np.concatenate([np.zeros((2, 1, 4)), np.cumsum(a, axis=1)], axis=1), x)


def test_integer_results_of_float_inputs_do_not_require_grad():
    x = pk.asarray(np.array([[1.5, 2.5], [3.0, 4.0]])).requires_grad_()
    for result in (pk.cumsum(x, axis=0, dtype=pk.i32), pk.prod(x, dtype=pk.i64),
                   pk.sum(x, dtype=pk.i32), pk.topk(x.astype(pk.i32), 1)[0]):
        assert not result.dtype.is_float and not result.requires_grad


def test_unique_refuses_tensors_that_require_grad():
    x = pk.asarray(np.array([2.0, 1.0, 2.0])).requires_grad_()
    for fn in (xp.unique_values, xp.unique_counts, xp.unique_inverse, xp.unique_all):
        with pytest.raises(NotImplementedError, match="unique"):
            fn(x)
    with pk.no_grad():
        np.testing.assert_array_equal(xp.unique_values(x).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(xp.unique_values(x.detach()).numpy(), [1.0, 2.0])


# ---------------------------------------------------------------- the whole namespace

def _public(ns: object, prefix: str) -> dict[str, object]:
    """The public functions of a namespace, a kernel builtin replaced by the tensor function
    it runs outside kernels (pk.exp is pykern.tensor.elementwise.functions.exp there)."""
    from pykern.tensor.api.kernel_names import tensor_functions

    names = getattr(ns, "__all__", None) or [n for n in dir(ns) if not n.startswith("_")]
    found = {}
    for n in names:
        obj = getattr(ns, n)
        if callable(obj) and not isinstance(obj, (type, types.ModuleType, pk.DType)):
            found[f"{prefix}.{n}"] = inspect.unwrap(
                next((fn for b, fn in tensor_functions() if b is obj), obj))
    return found


NAMESPACES = {"pk": pk, "xp": xp, "F": pk.nn.functional, "L": pk.linalg, "fft": pk.fft}
FUNCTIONS = {k: v for prefix, ns in NAMESPACES.items() for k, v in _public(ns, prefix).items()}
TABLES = (ng.DIFFERENTIABLE, ng.REFUSED, ng.INTEGER_RESULTS, ng.NO_GRADIENT_PATH,
          ng.NOT_TENSOR_OPS)


def _classified() -> set[str]:
    return {key.split("[")[0] for table in TABLES for key in table}


def test_every_public_function_is_classified_for_autograd():
    """A function is covered by its own entry or by one for the same function object under
    another name (xp.exp is pk.exp's tensor function); a new op must be added to a table."""
    named = _classified()
    covered_objects = [obj for name, obj in FUNCTIONS.items() if name in named]
    missing = [name for name, obj in FUNCTIONS.items()
               if name not in named and not any(obj is o for o in covered_objects)]
    assert not missing, f"classify these for autograd in namespace_grads.py: {missing}"
    unknown = [key for key in _classified() if key not in FUNCTIONS
               and not hasattr(NAMESPACES[key.split(".")[0]], key.split(".", 1)[1])]
    assert not unknown, f"not functions of pykern: {unknown}"


@pytest.mark.parametrize("name", sorted(ng.DIFFERENTIABLE))
def test_differentiable_function_gradient(name):
    case = ng.DIFFERENTIABLE[name]
    arrays = [RNG.uniform(case.low, case.high, shape) for shape in case.shapes]
    check_grad(case.call, case.reference, *arrays, atol=1e-5)


@pytest.mark.parametrize("name", sorted(ng.REFUSED))
def test_refused_function_raises_and_works_without_grad(name):
    x = pk.asarray(RNG.standard_normal(5)).requires_grad_()
    with pytest.raises(NotImplementedError, match="no backward"):
        ng.REFUSED[name](x)
    with pk.no_grad():
        ng.REFUSED[name](x)


def _tensors(result: object) -> list[pk.Tensor]:
    return list(result) if isinstance(result, tuple) else [result]


@pytest.mark.parametrize("name", sorted(ng.INTEGER_RESULTS))
def test_function_of_integer_or_bool_result(name):
    x = pk.asarray(RNG.standard_normal((3, 4))).requires_grad_()
    try:
        result = ng.INTEGER_RESULTS[name](x)
    except TypeError:
        return  # not defined for floats (bitwise ops)
    for t in _tensors(result):
        assert not t.dtype.is_float and not t.requires_grad


@pytest.mark.parametrize("name", sorted(ng.NO_GRADIENT_PATH))
def test_function_without_a_gradient_path(name):
    x = pk.asarray(RNG.standard_normal((3, 4))).requires_grad_()
    assert not ng.NO_GRADIENT_PATH[name](x).requires_grad


def test_every_tensor_method_and_operator_is_classified_for_autograd():
    methods = {n for n, v in inspect.getmembers(pk.Tensor) if callable(v)
               and (not n.startswith("_") or n.startswith("__") and n not in dir(object))}
    missing = methods - set(ng.METHODS) - ng.METHODS_WITHOUT_GRADIENT
    assert not missing, f"classify these Tensor methods in namespace_grads.py: {missing}"


@pytest.mark.parametrize("name", sorted(ng.METHODS))
def test_tensor_method_gradient(name):
    case = ng.METHODS[name]
    arrays = [RNG.uniform(case.low, case.high, shape) for shape in case.shapes]
    check_grad(case.call, case.reference, *arrays, atol=1e-5)
