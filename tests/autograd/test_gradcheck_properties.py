"""Gradients over hypothesis-chosen shapes and layouts against central differences in float64.

Shapes have up to three dimensions of sizes 0 to 3 (size-0 and size-1 dimensions included),
binary operands are broadcasting pairs, and every input comes in one of several layouts: a
plain leaf, a transposed, stepped or broadcast view of a leaf (so the view's backward is
checked with the op's), or a non-contiguous leaf of its own (a detached strided view). The
numeric gradient is taken with respect to what requires grad — the leaf's storage — through
the same view in numpy. Values come from a numpy generator seeded by hypothesis, mapped into
each op's domain and away from its kinks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from gradcheck import numeric_grad

# deterministic (the suite must not flake) and modest: the whole file runs in about 30 s on
# two cores; raise max_examples locally to search harder
SETTINGS = settings(max_examples=20, deadline=None, derandomize=True)
LAYOUTS = ("plain", "transposed", "stepped", "broadcast", "strided_leaf")


# ---------------------------------------------------------------- inputs in layouts


@dataclass
class Input:
    """An operand: `values` (its numpy value) made from `storage` (what requires grad) by a
    layout; `leaf` is the pykern tensor that requires grad and `tensor` the operand."""

    layout: str
    storage: np.ndarray
    shape: tuple[int, ...]
    leaf: Any = None
    tensor: Any = None

    def view_np(self, s: np.ndarray) -> np.ndarray:
        return _VIEWS[self.layout][0](s, self.shape)

    def make(self) -> None:
        """(Re)creates the leaf, with no gradient yet, and the operand from it."""
        if self.layout == "strided_leaf":
            self.leaf = pk.asarray(self.storage)[..., ::2].detach().requires_grad_()
            self.tensor = self.leaf
        else:
            self.leaf = pk.asarray(self.storage).requires_grad_()
            self.tensor = _VIEWS[self.layout][1](self.leaf, self.shape)

    def values(self) -> np.ndarray:
        if self.layout == "strided_leaf":
            return self.storage[..., ::2]
        return self.view_np(self.storage)

    def wrt(self) -> np.ndarray:
        """What the numeric gradient perturbs: the leaf's own values."""
        return self.values() if self.layout == "strided_leaf" else self.storage


_VIEWS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "plain": (lambda s, shape: s, lambda t, shape: t),
    "transposed": (lambda s, shape: s.T, lambda t, shape: t.T),
    "stepped": (lambda s, shape: s[..., ::2], lambda t, shape: t[..., ::2]),
    "broadcast": (lambda s, shape: np.broadcast_to(s, shape),
                  lambda t, shape: t.broadcast_to(shape)),
    "strided_leaf": (lambda s, shape: s[..., ::2], lambda t, shape: t[..., ::2]),
}


def _storage_shape(layout: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    if layout == "transposed":
        return shape[::-1]
    if layout in ("stepped", "strided_leaf") and shape:
        return shape[:-1] + (2 * shape[-1],)
    if layout == "broadcast" and shape:
        return (1,) + shape[1:]
    return shape


def make_input(layout: str, shape: tuple[int, ...], rng: np.random.Generator,
               domain: Callable[[np.ndarray], np.ndarray]) -> Input:
    if not shape and layout != "plain":
        layout = "plain"
    storage = np.asarray(domain(rng.uniform(-1.0, 1.0, _storage_shape(layout, shape))))
    inp = Input(layout, storage, shape)
    inp.make()
    assert inp.tensor.shape == shape and inp.values().shape == shape
    return inp


def check(pk_fn: Callable[..., Any], np_fn: Callable[..., Any], inputs: list[Input],
          rng: np.random.Generator, atol: float = 1e-6) -> None:
    """d sum(w * f(inputs)) / d(each leaf), pykern's against central differences."""
    out = pk_fn(*[i.tensor for i in inputs])
    expect = np_fn(*[i.values() for i in inputs])
    assert np.all(np.isfinite(expect)), "a test case outside the op's domain"
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-9, atol=1e-12)
    w = rng.standard_normal(out.shape)
    (out * pk.asarray(w)).sum().backward()
    for k, inp in enumerate(inputs):
        def f(x: np.ndarray, k: int = k) -> float:
            args = []
            for j, other in enumerate(inputs):
                if j != k:
                    args.append(other.values())
                elif other.layout == "strided_leaf":
                    args.append(x)
                else:
                    args.append(other.view_np(x))
            return float(np.sum(w * np_fn(*args)))

        got = inp.leaf.grad
        assert got is not None, f"input {k} ({inp.layout}) got no gradient"
        assert got.shape == inp.leaf.shape
        np.testing.assert_allclose(got.numpy(), numeric_grad(f, inp.wrt().copy()), atol=atol,
                                   rtol=1e-5, err_msg=f"input {k}, layout {inp.layout}")


# ---------------------------------------------------------------- strategies

dims = st.integers(0, 3)
shapes = st.lists(dims, min_size=0, max_size=3).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)
layouts = st.sampled_from(LAYOUTS)
seeds = st.integers(0, 2**32 - 1)


@st.composite
def broadcast_pair(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast together: each drops some leading dimensions of a common
    shape and turns some of the rest into 1."""
    full = draw(shapes)
    out = []
    for _ in range(2):
        lead = draw(st.integers(0, len(full)))
        shape = tuple(1 if draw(st.booleans()) else n for n in full[lead:])
        out.append(shape)
    return out[0], out[1]


def _any(u: np.ndarray) -> np.ndarray:
    return 1.5 * u


def _positive(u: np.ndarray) -> np.ndarray:
    return 0.4 + np.abs(u)


def _unit(u: np.ndarray) -> np.ndarray:
    return 0.8 * u


def _off_zero(u: np.ndarray) -> np.ndarray:
    return np.where(u < 0, -1.0, 1.0) * (0.2 + np.abs(u))


def _above_one(u: np.ndarray) -> np.ndarray:
    return 1.3 + np.abs(u)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


def _erf(a: np.ndarray) -> np.ndarray:
    from math import erf
    return np.vectorize(erf, otypes=[np.float64])(a)


UNARY = {
    "exp": (np.exp, _any), "exp2": (np.exp2, _any), "expm1": (np.expm1, _any),
    "log": (np.log, _positive), "log2": (np.log2, _positive), "log10": (np.log10, _positive),
    "log1p": (np.log1p, _positive), "sqrt": (np.sqrt, _positive),
    "rsqrt": (lambda a: 1 / np.sqrt(a), _positive), "square": (np.square, _any),
    "reciprocal": (np.reciprocal, _off_zero), "sin": (np.sin, _any), "cos": (np.cos, _any),
    "tan": (np.tan, _unit), "sinh": (np.sinh, _any), "cosh": (np.cosh, _any),
    "tanh": (np.tanh, _any), "asin": (np.arcsin, _unit), "acos": (np.arccos, _unit),
    "atan": (np.arctan, _any), "asinh": (np.arcsinh, _any), "acosh": (np.arccosh, _above_one),
    "atanh": (np.arctanh, _unit), "abs": (np.abs, _off_zero), "negative": (np.negative, _any),
    "positive": (np.positive, _any), "sigmoid": (_sigmoid, _any),
    "relu": (lambda a: np.maximum(a, 0), _off_zero),
    "silu": (lambda a: a * _sigmoid(a), _any),
    "gelu": (lambda a: 0.5 * a * (1 + _erf(a / np.sqrt(2))), _any), "erf": (_erf, _any),
    "floor": (np.floor, _off_zero),
}

BINARY = {
    "add": (np.add, _any, _any), "subtract": (np.subtract, _any, _any),
    "multiply": (np.multiply, _any, _any), "divide": (np.divide, _any, _off_zero),
    "pow": (np.power, _positive, _any), "maximum": (np.maximum, _any, _any),
    "minimum": (np.minimum, _any, _any), "atan2": (np.arctan2, _off_zero, _off_zero),
    "hypot": (np.hypot, _off_zero, _off_zero), "logaddexp": (np.logaddexp, _any, _any),
    "copysign": (np.copysign, _off_zero, _off_zero),
}


# ---------------------------------------------------------------- elementwise


@SETTINGS
@given(name=st.sampled_from(sorted(UNARY)), shape=shapes, layout=layouts, seed=seeds)
def test_unary(name, shape, layout, seed):
    np_fn, domain = UNARY[name]
    rng = np.random.default_rng(seed)
    check(getattr(pk, name), np_fn, [make_input(layout, shape, rng, domain)], rng)


@SETTINGS
@given(name=st.sampled_from(sorted(BINARY)), pair=broadcast_pair(), la=layouts, lb=layouts,
       seed=seeds)
def test_binary_with_broadcasting(name, pair, la, lb, seed):
    np_fn, da, db = BINARY[name]
    rng = np.random.default_rng(seed)
    inputs = [make_input(la, pair[0], rng, da), make_input(lb, pair[1], rng, db)]
    check(getattr(pk, name), np_fn, inputs, rng)


@SETTINGS
@given(pair=broadcast_pair(), seed=seeds, scalar=st.sampled_from([-1.5, 0.5, 2.0, 3]))
def test_binary_with_a_python_scalar(pair, seed, scalar):
    rng = np.random.default_rng(seed)
    x = make_input("plain", pair[0], rng, _positive)
    check(lambda t: (t * scalar + scalar) / scalar - t ** scalar,
          lambda a: (a * scalar + scalar) / scalar - a ** scalar, [x], rng)
    x.make()
    check(lambda t: (scalar - t) * (scalar / t) + abs(scalar) ** t,
          lambda a: (scalar - a) * (scalar / a) + abs(scalar) ** a, [x], rng)


def test_f64_gradients_of_a_number_to_a_tensor_power_are_f64_exact():
    """d(2 ** x)/dx = ln 2 * 2 ** x with ln 2 in float64 (an f32 ln 2 is off by 4e-9)."""
    a = np.array([0.5, 1.5, -2.0])
    x = pk.asarray(a).requires_grad_()
    (2.0 ** x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.log(2.0) * 2.0 ** a, rtol=1e-14)


@SETTINGS
@given(pair=broadcast_pair(), lx=layouts, seed=seeds)
def test_where_and_clip(pair, lx, seed):
    rng = np.random.default_rng(seed)
    a, b = make_input(lx, pair[0], rng, _any), make_input("plain", pair[1], rng, _any)
    cond = rng.standard_normal(pair[1]) > 0
    check(lambda s, t: pk.where(pk.asarray(cond), s, t), lambda s, t: np.where(cond, s, t),
          [a, b], rng)
    a.make()
    check(lambda t: pk.clip(t, -0.55, 0.45), lambda s: np.clip(s, -0.55, 0.45), [a], rng)
    a.make()
    lo = make_input("plain", pair[1], rng, lambda u: 0.3 * u - 0.2)  # a bound that is a tensor
    check(lambda t, m: pk.clip(t, m, 0.9), lambda s, m: np.clip(s, m, 0.9), [a, lo], rng)


# ---------------------------------------------------------------- reductions


@st.composite
def shape_and_axis(draw: Any, min_size: int = 0) -> tuple[tuple[int, ...], Any]:
    shape = draw(st.lists(st.integers(min_size, 3), min_size=1, max_size=3).map(tuple))
    axes = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                          st.sets(st.integers(0, len(shape) - 1), min_size=1).map(tuple)))
    return shape, axes


@SETTINGS
@given(sa=shape_and_axis(), keepdims=st.booleans(), layout=layouts, seed=seeds)
def test_sum(sa, keepdims, layout, seed):
    shape, axis = sa
    rng = np.random.default_rng(seed)
    check(lambda t: pk.sum(t, axis=axis, keepdims=keepdims),
          lambda a: np.sum(a, axis=axis, keepdims=keepdims),
          [make_input(layout, shape, rng, _any)], rng)


REDUCTIONS = {
    "mean": (lambda t, ax, k: pk.mean(t, axis=ax, keepdims=k),
             lambda a, ax, k: np.mean(a, axis=ax, keepdims=k)),
    "var": (lambda t, ax, k: pk.var(t, axis=ax, keepdims=k),
            lambda a, ax, k: np.var(a, axis=ax, keepdims=k)),
    "var1": (lambda t, ax, k: pk.var(t, axis=ax, keepdims=k, correction=1),
             lambda a, ax, k: np.var(a, axis=ax, keepdims=k, ddof=1)),
    "std": (lambda t, ax, k: pk.std(t, axis=ax, keepdims=k),
            lambda a, ax, k: np.std(a, axis=ax, keepdims=k)),
    "max": (lambda t, ax, k: pk.max(t, axis=ax, keepdims=k),
            lambda a, ax, k: np.max(a, axis=ax, keepdims=k)),
    "min": (lambda t, ax, k: t.min(axis=ax, keepdims=k),
            lambda a, ax, k: np.min(a, axis=ax, keepdims=k)),
}


def _reduced_axes(shape: tuple[int, ...], axis: Any) -> list[int]:
    axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    return sorted(a % len(shape) for a in axes)


def _reduced_count(shape: tuple[int, ...], axis: Any) -> int:
    return int(np.prod([shape[a] for a in _reduced_axes(shape, axis)]))


@SETTINGS
@given(name=st.sampled_from(sorted(REDUCTIONS)), sa=shape_and_axis(min_size=1),
       keepdims=st.booleans(), layout=layouts, seed=seeds)
def test_mean_var_std_max_min(name, sa, keepdims, layout, seed):
    """A broadcast input has ties along its broadcast axis: max/min share the gradient among
    them, which sums back to the storage element as the numeric derivative does (var and std
    get a plain input there: a zero spread has no derivative)."""
    shape, axis = sa
    if layout == "broadcast" and name in ("var", "var1", "std"):
        layout = "plain"
    if name in ("var", "var1", "std") and _reduced_count(shape, axis) < 2:
        # a spread to differentiate (and dof > 0): the first reduced dimension gets 2
        first = _reduced_axes(shape, axis)[0]
        shape = shape[:first] + (2,) + shape[first + 1:]
    pk_fn, np_fn = REDUCTIONS[name]
    rng = np.random.default_rng(seed)
    check(lambda t: pk_fn(t, axis, keepdims), lambda a: np_fn(a, axis, keepdims),
          [make_input(layout, shape, rng, _any)], rng, atol=1e-5)


# ---------------------------------------------------------------- matmul


@st.composite
def matmul_shapes(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n, k, m = draw(st.integers(1, 3)), draw(st.integers(0, 3)), draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["vv", "vm", "mv", "mm", "batched", "broadcast"]))
    if kind == "vv":
        return (k,), (k,)
    if kind == "vm":
        return (k,), (k, m)
    if kind == "mv":
        return (n, k), (k,)
    if kind == "mm":
        return (n, k), (k, m)
    b = draw(st.integers(1, 2))
    if kind == "batched":
        return (b, n, k), (b, k, m)
    return (b, 1, n, k), (2, k, m)


@SETTINGS
@given(shapes2=matmul_shapes(), la=layouts, lb=layouts, seed=seeds)
def test_matmul(shapes2, la, lb, seed):
    rng = np.random.default_rng(seed)
    a, b = (make_input(lay, s, rng, _any) for lay, s in zip((la, lb), shapes2))
    check(lambda s, t: s @ t, np.matmul, [a, b], rng, atol=1e-5)


# ---------------------------------------------------------------- nn ops


def _np_softmax(a: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@SETTINGS
@given(shape=nonempty_shapes, data=st.data(), log=st.booleans(), layout=layouts, seed=seeds)
def test_softmax_and_log_softmax(shape, data, log, layout, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    x = make_input(layout, shape, rng, _any)
    if log:
        check(lambda t: pk.log_softmax(t, axis=axis),
              lambda a: np.log(_np_softmax(a, axis)), [x], rng)
    else:
        check(lambda t: pk.softmax(t, axis=axis), lambda a: _np_softmax(a, axis), [x], rng)


def _np_layer_norm(a: np.ndarray, n: int, w: Any, b: Any) -> np.ndarray:
    axes = tuple(range(a.ndim - n, a.ndim))
    y = (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + 1e-5)
    y = y * w if w is not None else y
    return y + b if b is not None else y


@SETTINGS
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple), data=st.data(),
       affine=st.booleans(), layout=layouts, seed=seeds)
def test_layer_norm(shape, data, affine, layout, seed):
    n = data.draw(st.integers(1, len(shape)))
    norm = shape[len(shape) - n:]
    if int(np.prod(norm)) < 2:
        shape, norm = shape[:-1] + (3,), norm[:-1] + (3,)
    rng = np.random.default_rng(seed)
    inputs = [make_input(layout, shape, rng, _any)]
    if affine:
        inputs += [make_input("plain", norm, rng, _any), make_input("plain", norm, rng, _any)]
        check(lambda t, w, b: pk.layer_norm(t, norm, w, b),
              lambda a, w, b: _np_layer_norm(a, n, w, b), inputs, rng, atol=1e-5)
    else:
        check(lambda t: pk.layer_norm(t, norm), lambda a: _np_layer_norm(a, n, None, None),
              inputs, rng, atol=1e-5)


# ---------------------------------------------------------------- joining, scans, gathers


@SETTINGS
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple), data=st.data(),
       stack=st.booleans(), seed=seeds)
def test_concat_and_stack(shape, data, stack, seed):
    count = data.draw(st.integers(1, 3))
    rng = np.random.default_rng(seed)
    if stack:
        axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
        ins = [make_input(data.draw(layouts), shape, rng, _any) for _ in range(count)]
        check(lambda *ts: pk.stack(list(ts), axis=axis),
              lambda *a: np.stack(a, axis=axis), ins, rng)
        return
    axis = data.draw(st.integers(0, len(shape) - 1))
    sizes = [data.draw(st.integers(0, 3)) for _ in range(count)]
    ins = [make_input(data.draw(layouts), shape[:axis] + (s,) + shape[axis + 1:], rng, _any)
           for s in sizes]
    check(lambda *ts: pk.concat(list(ts), axis=axis),
          lambda *a: np.concatenate(a, axis=axis), ins, rng)


@SETTINGS
@given(shape=shapes.filter(bool), data=st.data(), layout=layouts, seed=seeds)
def test_cumsum(shape, data, layout, seed):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    rng = np.random.default_rng(seed)
    check(lambda t: pk.cumsum(t, axis=axis), lambda a: np.cumsum(a, axis=axis),
          [make_input(layout, shape, rng, _any)], rng)


@SETTINGS
@given(shape=nonempty_shapes, data=st.data(), layout=layouts, seed=seeds)
def test_take(shape, data, layout, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    idx_shape = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=2).map(tuple))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, shape[axis], idx_shape)  # repeats accumulate
    check(lambda t: pk.take(t, pk.asarray(idx.astype(np.int32)), axis=axis),
          lambda a: np.take(a, idx, axis=axis), [make_input(layout, shape, rng, _any)], rng)


# ---------------------------------------------------------------- views


@st.composite
def basic_index(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    key: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["all", "int", "slice", "none"] if n else ["all", "slice"]))
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n)))
            key.append(slice(start, stop, draw(st.sampled_from([None, 1, 2, -1, -2]))))
        else:
            key.append(slice(None) if kind == "all" else None)
            if kind == "none":
                key.append(slice(None))
    return tuple(key)


VIEWS = {
    "T": (lambda t: t.T, lambda a: a.T),
    "flip": (lambda t: t.flip(), lambda a: np.flip(a)),
    "ravel": (lambda t: t.reshape(-1), lambda a: a.reshape(-1)),
    "unsqueeze": (lambda t: t.unsqueeze(0), lambda a: a[None]),
    "squeeze": (lambda t: t.reshape((1,) + t.shape).squeeze(0), lambda a: a),
    "expand": (lambda t: t.reshape((1,) + t.shape).expand((2,) + t.shape),
               lambda a: np.broadcast_to(a, (2,) + a.shape)),
}


@SETTINGS
@given(shape=shapes, data=st.data(), layout=layouts, seed=seeds)
def test_indexing(shape, data, layout, seed):
    key = data.draw(basic_index(shape))
    rng = np.random.default_rng(seed)
    check(lambda t: t[key] * 1.0, lambda a: a[key] * 1.0,
          [make_input(layout, shape, rng, _any)], rng)


@SETTINGS
@given(name=st.sampled_from(sorted(VIEWS)), shape=shapes, layout=layouts, seed=seeds)
def test_views(name, shape, layout, seed):
    pk_fn, np_fn = VIEWS[name]
    rng = np.random.default_rng(seed)
    check(lambda t: pk_fn(t) * 1.0, lambda a: np_fn(a) * 1.0,
          [make_input(layout, shape, rng, _any)], rng)


@SETTINGS
@given(shape=st.lists(st.integers(1, 3), min_size=2, max_size=3).map(tuple), layout=layouts,
       seed=seeds, data=st.data())
def test_reshape_and_permute_of_views(shape, layout, seed, data):
    order = data.draw(st.permutations(range(len(shape))))
    rng = np.random.default_rng(seed)
    check(lambda t: t.permute(*order).reshape(-1)[::2] * 1.0,
          lambda a: a.transpose(order).reshape(-1)[::2] * 1.0,
          [make_input(layout, shape, rng, _any)], rng)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_has_its_shape(layout):
    rng = np.random.default_rng(0)
    for shape in [(2,), (2, 3), (1, 0, 2)]:
        inp = make_input(layout, shape, rng, _any)
        np.testing.assert_array_equal(inp.tensor.numpy(), inp.values())


# ---------------------------------------------------------------- writes into regions


def _np_write(a: np.ndarray, key: Any, v: np.ndarray, op: str, transposed: bool) -> np.ndarray:
    y = a * 2.0
    region = y.T if transposed else y
    if op == "=":
        region[key] = v
    elif op == "+=":
        region[key] += v
    else:
        region[key] *= 3.0
        region[key] -= v
    return y * y


def _pk_write(t: Any, u: Any, key: Any, op: str, transposed: bool) -> Any:
    y = t * 2.0
    region = y.T if transposed else y
    if op == "=":
        region[key] = u
    elif op == "+=":
        region[key] += u
    else:
        view = region[key]
        view *= 3.0  # an in-place op on a view, recorded on y
        view -= u
    return y * y


@SETTINGS
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple), data=st.data(),
       op=st.sampled_from(["=", "+=", "*= then -="]), transposed=st.booleans(),
       layout=layouts, seed=seeds)
def test_writes_into_regions_of_non_leaves(shape, data, op, transposed, layout, seed):
    """`y[key] = u`, `y[key] += u` and in-place ops on the view `y[key]` (of y or of y.T)
    differentiate as numpy's out-of-place copies of the same steps."""
    view_shape = shape[::-1] if transposed else shape
    key = data.draw(basic_index(view_shape))
    region_shape = np.empty(view_shape)[key].shape
    # the value broadcast into the region: some of its dimensions 1, some leading ones dropped
    lead = data.draw(st.integers(0, len(region_shape)))
    value_shape = tuple(1 if data.draw(st.booleans()) else n for n in region_shape[lead:])
    rng = np.random.default_rng(seed)
    x = make_input(layout, shape, rng, _any)
    v = make_input("plain", value_shape, rng, _any)
    check(lambda t, u: _pk_write(t, u, key, op, transposed),
          lambda a, w: _np_write(a, key, w, op, transposed), [x, v], rng)
