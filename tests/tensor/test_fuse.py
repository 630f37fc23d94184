"""`@pk.fuse`: a traced function of tensors run as one generated kernel equals the same
function run op by op (dtype exactly; values bitwise for integers and bools, within a few
ULP for floats, where the driver may contract a multiply and an add into one fma), for any
shapes, broadcasting, views and scalars; reductions; the signature cache; inspection; the
located errors for what does not fuse; the eager path when grads are needed. The main cases
run on the default device and again on lavapipe."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pykern as pk
from pykern.passes.spread import ITEMS_PER_INVOCATION
from pykern.fuse import FuseError
from pykern.jit.kernel import Kernel

from pykern.tensor.elementwise import functions as ew
from pykern.tensor.elementwise.binary_ops import BINARY
from pykern.tensor.elementwise.unary_ops import UNARY
from tensor_support import sample, views

rng = np.random.default_rng(13)

# ---------------------------------------------------------------- the expressions


def float_chain(a, b):
    return pk.exp(a * 0.1) * 2 + b


def float_choice(a, b):
    return pk.where(a > b, pk.sigmoid(a), pk.tanh(b) - 1.5)


def float_clip(a, b):
    return pk.clip(a * b, -3, 3) / (pk.abs(b) + 1)


def float_activations(a, b):
    return pk.maximum(pk.relu(a), pk.silu(b)) + pk.gelu(a) ** 2 - pk.minimum(a, 0.5)


def float_math(a, b):
    return (pk.sqrt(pk.abs(a)) + pk.log(pk.abs(b) + 1) + pk.sin(a) * pk.cos(b)).astype(pk.f32)


def int_arith(a, b):
    return (a * 3 - b) // 2 + a % 5 - abs(b)


def int_bits(a, b):
    return pk.where(a < b, a & b, a | b) ^ 7


def int_mixed(a, b):
    return pk.maximum(a, b) - pk.minimum(a, 1) + (a == b) + a / 4


def bool_logic(a, b):
    return (a & ~b) | (a ^ b)


def bool_compare(a, b):
    return pk.where(a, b, ~b) == a


def bool_to_int(a, b):
    return (a + b).astype(pk.i32) * 3 - a


FLOAT_EXPRS = [float_chain, float_choice, float_clip, float_activations, float_math]
CASES = ([(d, f) for d in (pk.f32, pk.f16, pk.f64) for f in FLOAT_EXPRS]
         + [(pk.i32, f) for f in (int_arith, int_bits, int_mixed)]
         + [(pk.bool_, f) for f in (bool_logic, bool_compare, bool_to_int)])
VULKAN_CASES = [(pk.f32, float_chain), (pk.f16, float_activations), (pk.f64, float_math),
                (pk.i32, int_arith), (pk.bool_, bool_compare)]
FUSED = {f: pk.fuse(f) for f in {f for _, f in CASES}}


def case_id(case: tuple) -> str:
    return f"{case[0].name}-{case[1].__name__}"


def assert_same(fused: pk.Tensor, eager: pk.Tensor, computed: pk.DType | None = None) -> None:
    """Fused equals eager: the dtype and shape exactly, values bitwise for integers and
    bools, for floats within a few ULP of the larger values (contraction) of the narrowest
    float the values went through (`computed`, else the result's dtype): a GPU may round an
    f16 intermediate differently in one kernel than in two."""
    assert fused.dtype == eager.dtype and fused.shape == eager.shape
    got, want = fused.numpy(), eager.numpy()
    if not fused.dtype.is_float:
        np.testing.assert_array_equal(got, want)
        return
    widths = [d for d in (fused.dtype, computed) if d is not None and d.is_float]
    narrowest = min(widths, key=lambda d: d.bits)
    rtol = {pk.f16: 2e-3, pk.f32: 4e-6, pk.f64: 1e-13}[narrowest]
    finite = want[np.isfinite(want)].astype(np.float64)
    scale = float(np.max(np.abs(finite), initial=1.0))
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=rtol * scale, equal_nan=True)


def check_case(data: st.DataObject, dtype: pk.DType, expr, shapes2) -> None:
    sa, sb = shapes2.input_shapes
    _, ta = data.draw(views(sa, dtype, -4, 4))
    _, tb = data.draw(views(sb, dtype, -4, 4))
    if dtype == pk.f64 and not pk.get_device().info.features.fp64:
        pytest.skip("the device has no f64")
    assert_same(FUSED[expr](ta, tb), expr(ta, tb), dtype)


BROADCAST_PAIRS = hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, min_side=0,
                                                    max_side=4)


@pytest.mark.parametrize("case", CASES, ids=case_id)
@settings(max_examples=5, deadline=None)
@given(data=st.data(), shapes2=BROADCAST_PAIRS)
def test_fused_equals_eager_for_shapes_broadcasting_views(case, data, shapes2):
    check_case(data, case[0], case[1], shapes2)


@pytest.mark.parametrize("case", VULKAN_CASES, ids=case_id)
@settings(max_examples=3, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), shapes2=BROADCAST_PAIRS)
def test_fused_equals_eager_on_lavapipe(on_vulkan, case, data, shapes2):
    check_case(data, case[0], case[1], shapes2)


# random expression trees over every op of the tables (shifts aside: a shift by the width or
# more is undefined, so two kernels need not agree on it)
UNARY_NAMES = sorted(UNARY)
BINARY_NAMES = sorted(set(BINARY) - {"bitwise_left_shift", "bitwise_right_shift"})


def trees(depth: int = 3) -> st.SearchStrategy:
    leaves = st.one_of(st.tuples(st.just("arg"), st.integers(0, 1)),
                       st.tuples(st.just("const"), st.sampled_from([2, -1, 0.5, 3.0, True])))
    return st.recursive(leaves, lambda sub: st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(UNARY_NAMES), sub),
        st.tuples(st.just("binary"), st.sampled_from(BINARY_NAMES), sub, sub),
        st.tuples(st.just("where"), sub, sub, sub)), max_leaves=2 ** depth)


def evaluate(tree: tuple, args: tuple):
    """The tree's value through the op library's entry points: for tensors the eager ops, for
    a fused function's tracers the trace."""
    kind = tree[0]
    if kind == "arg":
        return args[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "unary":
        return ew.unary(tree[1], evaluate(tree[2], args))
    if kind == "binary":
        return ew.binary(tree[1], evaluate(tree[2], args), evaluate(tree[3], args))
    return ew.where(evaluate(tree[1], args), evaluate(tree[2], args), evaluate(tree[3], args))


@pytest.mark.parametrize("dtype", [pk.f32, pk.i32, pk.bool_], ids=lambda d: d.name)
@settings(max_examples=25, deadline=None)
@given(tree=trees(), seed=st.integers(0, 2 ** 32 - 1))
def test_random_expression_trees_fuse_to_the_eager_result(dtype, tree, seed):
    check_tree(dtype, tree, seed)


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=trees(), seed=st.integers(0, 2 ** 32 - 1))
def test_random_expression_trees_on_lavapipe(on_vulkan, tree, seed):
    check_tree(pk.f32, tree, seed)


def check_tree(dtype: pk.DType, tree: tuple, seed: int) -> None:
    r = np.random.default_rng(seed)
    args = tuple(pk.asarray(sample(r, dtype, shape, -5, 5)) for shape in ((3, 4), (4,)))

    def fn(a, b):
        return evaluate(tree, (a, b))

    if "'arg'" not in repr(tree):
        return  # a constant: not a function of the arguments, which @pk.fuse refuses
    try:
        with np.errstate(all="ignore"):
            eager = fn(*args)
    except (TypeError, ValueError, OverflowError) as e:  # not defined for these dtypes
        with pytest.raises(type(e)):
            pk.fuse(fn)(*args)
        return
    assert_same(pk.fuse(fn)(*args), eager)


def test_the_motivating_expression_is_one_launch_with_flat_indexing():
    f = FUSED[float_chain]
    a = rng.standard_normal((64, 33)).astype(np.float32)
    b = rng.standard_normal((64, 33)).astype(np.float32)
    ta, tb = pk.asarray(a), pk.asarray(b)
    np.testing.assert_allclose(f(ta, tb).numpy(), np.exp(a * np.float32(0.1)) * 2 + b,
                               rtol=1e-6, atol=1e-6)
    text = f.source(ta, tb)
    assert text.count("def ") == 1 and "x0[i]" in text and "exp_f" in text
    assert "unravel" not in text  # contiguous operands: one flat index


def test_a_gpu_takes_four_elements_per_invocation_and_walks_the_tail(on_vulkan):
    """The flat kernel is written one element per invocation; the spread pass gives a GPU
    four (pykern.passes.spread), masked past the grid's end."""
    f = pk.fuse(lambda x, y: (pk.exp(x) * 2 + y, x - y))
    for n in (1, 3, 4, 5, 9, 1000003):
        a = pk.asarray(rng.uniform(-2, 2, n).astype(np.float32))
        b = pk.asarray(rng.uniform(-2, 2, n).astype(np.float32))
        got = f(a, b)
        assert_same(got[0], pk.exp(a) * 2 + b)
        assert_same(got[1], a - b)
    assert "pk.grid" not in f.source(a, b)
    (kernel,) = f._kernels.values()
    assert {v.module.items for v in kernel._variants.values()} == {ITEMS_PER_INVOCATION}


# ---------------------------------------------------------------- dtypes and scalars


def test_promotion_and_weak_scalars_follow_the_eager_ops():
    h = pk.asarray(rng.uniform(-2, 2, (3, 4)).astype(np.float16))
    f = pk.asarray(rng.uniform(-2, 2, (4,)).astype(np.float32))
    i8 = pk.asarray(rng.integers(-100, 100, (3, 4)).astype(np.int8))
    exprs = [
        (lambda a, b: a * 2.5 + 1, (h, f)),           # f16 stays f16 with float scalars
        (lambda a, b: a * b - 1, (h, f)),             # f16 with f32 is f32
        (lambda a, b: a + 100, (i8, f)),              # i8 stays i8 (wraps)
        (lambda a, b: a / 3, (i8, f)),                # true division of ints is f32
        (lambda a, b: a < 1000, (i8, f)),             # beyond i8's range: constant
        (lambda a, b: a ** 2 + a ** 0.5 + a ** -1 + a ** 0 + a ** 3, (pk.abs(h) + 1, f)),
        (lambda a, b: (a > 0) + 1, (h, f)),           # bool with an int scalar: i32
        (lambda a, b: pk.isnan(a) | pk.isfinite(b), (i8, f)),  # decided by the dtype
        (lambda a, b: np.exp(a) + np.float32(1), (f, h)),      # numpy's ufuncs
    ]
    for fn, args in exprs:
        assert_same(pk.fuse(fn)(*args), fn(*args))


def test_scalar_arguments_change_values_not_kernels(monkeypatch):
    @pk.fuse
    def axpy(a, x, y):
        return a * x + y

    x = pk.asarray(rng.standard_normal(100).astype(np.float32))
    y = pk.asarray(rng.standard_normal(100).astype(np.float32))
    assert_same(axpy(2.0, x, y), 2.0 * x + y)
    builds = count_builds(monkeypatch)
    for a in (3.0, -0.5, float("inf")):
        assert_same(axpy(a, x, y), a * x + y)
    assert builds == []  # a new value traces again, and the same text needs no compile


def test_a_literal_zero_keeps_nan_and_inf():
    x = pk.asarray(np.array([1.0, np.inf, np.nan, -2.0], np.float32))
    got = pk.fuse(lambda t: t * 0.0 + 0.0)(x).numpy()
    np.testing.assert_array_equal(np.isnan(got), [False, True, True, False])


def test_arguments_may_be_numpy_arrays_and_captured_tensors():
    bias = pk.asarray(np.arange(4, dtype=np.float32))

    @pk.fuse
    def f(a):
        return a * 2 + bias

    a = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(f(a).numpy(), a * 2 + np.arange(4), rtol=1e-6)
    bias[...] = 1.0  # a captured tensor is read at each call
    np.testing.assert_allclose(f(a).numpy(), a * 2 + 1, rtol=1e-6)


# ---------------------------------------------------------------- several results, reductions


def test_a_tuple_writes_several_outputs_of_one_kernel():
    @pk.fuse
    def stats(a, b):
        return a + b, a * b, pk.exp(a) > b

    a = pk.asarray(rng.standard_normal((5, 6)).astype(np.float32))
    b = pk.asarray(rng.standard_normal((6,)).astype(np.float32))
    got = stats(a, b)
    assert isinstance(got, tuple) and len(got) == 3
    for g, e in zip(got, (a + b, a * b, pk.exp(a) > b)):
        assert_same(g, e)
    assert stats.source(a, b).count("def ") == 1


def test_results_of_different_shapes_run_one_kernel_per_shape():
    @pk.fuse
    def two(a, b):
        return a * 2, b + 1

    a = pk.asarray(rng.standard_normal((2, 3)).astype(np.float32))
    b = pk.asarray(rng.standard_normal((5,)).astype(np.float32))
    x, y = two(a, b)
    assert_same(x, a * 2)
    assert_same(y, b + 1)
    assert two.source(a, b).count("def ") == 2


REDUCTIONS = [
    ("sum", {}), ("sum", {"axis": -1}), ("sum", {"axis": None, "keepdims": True}),
    ("mean", {"axis": -1, "keepdims": True}), ("max", {}), ("min", {"axis": -1}),
    ("prod", {"axis": -1}), ("sum", {"axis": 0}), ("max", {"axis": (0, 1)}),
]


@pytest.mark.parametrize("op,kw", REDUCTIONS, ids=lambda x: str(x))
@pytest.mark.parametrize("shape", [(3, 5, 70), (2, 40000), (1, 1, 1), (4, 1, 0)], ids=str)
def test_reductions_of_the_expression_equal_eager(op, kw, shape):
    a = pk.asarray(rng.uniform(0.5, 1.5, shape).astype(np.float32))
    b = pk.asarray(rng.uniform(0.5, 1.5, shape[-1:]).astype(np.float32))

    def f(x, y):
        return getattr(x * y + 0.01 if op == "prod" else x * y - 1, op)(**kw)

    try:
        eager = f(a, b)
    except ValueError:  # max/min of nothing: the same error fused
        with pytest.raises(ValueError, match="empty"):
            pk.fuse(f)(a, b)
        return
    fused = pk.fuse(f)(a, b)
    assert fused.dtype == eager.dtype and fused.shape == eager.shape
    # different summation orders: the tree bound of docs/testing.md, log2(n) 2^-24 sum |x|
    n = max(a.size, 1)
    bound = 1e-6 + np.log2(n + 1) * 2 ** -24 * n * 1.5 if op in ("sum", "mean") else 1e-6
    if op == "mean":
        bound /= max(a.shape[-1] if kw.get("axis") == -1 else a.size, 1)
    rtol = 1e-4 if op == "prod" else 0
    np.testing.assert_allclose(fused.numpy(), eager.numpy(), rtol=rtol, atol=bound)


def test_a_full_or_last_axis_reduction_runs_fused():
    @pk.fuse
    def sq_norm(a, b):
        return ((a - b) ** 2).sum(axis=-1)

    a = pk.asarray(rng.standard_normal((4, 1000)).astype(np.float32))
    b = pk.asarray(rng.standard_normal((1000,)).astype(np.float32))
    text = sq_norm.source(a, b)
    assert "while r < stop" in text and "part[g]" in text  # the reduction is in the kernel
    expected = ((a.numpy().astype(np.float64) - b.numpy()) ** 2).sum(axis=-1)
    np.testing.assert_allclose(sq_norm(a, b).numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("dtype", [pk.f16, pk.i8, pk.i32, pk.bool_], ids=lambda d: d.name)
def test_reduction_dtypes_follow_the_library(dtype):
    base = rng.uniform(-3, 3, (3, 300)) if dtype.is_float else rng.integers(-3, 4, (3, 300))
    t = pk.asarray(base.astype(dtype.numpy))
    for fn in (lambda x: (x * 2).sum(axis=-1), lambda x: (x * 2).sum(), lambda x: (~x if
               dtype == pk.bool_ else -x).max(axis=-1)):
        fused, eager = pk.fuse(fn)(t), fn(t)
        assert fused.dtype == eager.dtype
        np.testing.assert_allclose(fused.numpy().astype(np.float64),
                                   eager.numpy().astype(np.float64), rtol=2e-3)


def test_reductions_on_lavapipe(on_vulkan):
    a = pk.asarray(rng.standard_normal((3, 40000)).astype(np.float32))
    f = pk.fuse(lambda x: pk.exp(x * 0.5).mean(axis=-1))
    g = pk.fuse(lambda x: (x * x).max())
    assert "pk.barrier()" in g.source(a)  # a workgroup per chunk on a GPU
    np.testing.assert_allclose(f(a).numpy(), np.exp(a.numpy() * 0.5).mean(axis=-1), rtol=1e-5)
    np.testing.assert_allclose(g(a).numpy(), (a.numpy() ** 2).max(), rtol=1e-6)


# ---------------------------------------------------------------- the cache and inspection


def count_builds(monkeypatch) -> list:
    """Each compile of a kernel variant, from now on, appended to the returned list."""
    builds: list = []
    real = Kernel._build

    def build(self, key, device):
        builds.append(self.__name__)
        return real(self, key, device)

    monkeypatch.setattr(Kernel, "_build", build)
    return builds


def test_one_trace_and_compile_per_signature(monkeypatch):
    @pk.fuse
    def f(a, b):
        return pk.exp(a) * 2 + b

    a = pk.asarray(rng.standard_normal((8, 8)).astype(np.float32))
    b = pk.asarray(rng.standard_normal((8, 8)).astype(np.float32))
    a16 = a.astype(pk.f16)
    ones = pk.asarray(np.ones((3, 5), np.float32))
    builds = count_builds(monkeypatch)
    f(a, b)
    assert f.traces == 1 and len(builds) == 1
    f(a, b)
    f(b, a)
    assert f.traces == 1 and len(builds) == 1  # a second call traces and compiles nothing
    f(ones, ones)
    assert f.traces == 2 and len(builds) == 1  # another shape: same text, same variant
    f(a16, b)
    assert f.traces == 3 and len(builds) == 2  # another dtype: another kernel


def test_the_generated_source_is_inspectable():
    @pk.fuse
    def f(a, b):
        return pk.sigmoid(a) * b

    a = pk.asarray(np.ones((4, 4), np.float32))
    k = f.kernel(a, a)
    assert isinstance(k, Kernel)
    text = f.source(a, a)
    assert text.startswith("@pk.kernel\ndef fused_f(")
    assert inspect.getsource(k.__wrapped__) == text  # registered with linecache
    assert "sigmoid_f" in text
    assert f.ir(a, a) is not None
    assert "OpEntryPoint" in f.asm(a, a)
    with pytest.raises(ValueError, match="no generated kernel"):
        pk.fuse(lambda x: x.sum()).kernel(a)  # the library reduces an argument directly


def test_a_fused_method_binds_its_object():
    class Scale:
        def __init__(self, k: float):
            self.k = k

        @pk.fuse
        def apply(self, x):
            return x * self.k + 1

    x = pk.asarray(np.arange(5, dtype=np.float32))
    np.testing.assert_array_equal(Scale(3.0).apply(x).numpy(), np.arange(5) * 3 + 1)
    np.testing.assert_array_equal(Scale(0.5).apply(x).numpy(), np.arange(5) * 0.5 + 1)


def test_functions_of_one_name_keep_their_own_kernels():
    a = pk.asarray(np.arange(6, dtype=np.float32))
    fs = [pk.fuse(lambda x: x + 1), pk.fuse(lambda x: x * 3)]  # one qualname, two texts
    texts = [f.source(a) for f in fs]
    assert texts[0] != texts[1]
    np.testing.assert_array_equal(fs[1](a).numpy(), np.arange(6) * 3)
    np.testing.assert_array_equal(fs[0](a).numpy(), np.arange(6) + 1)


def test_grads_run_the_function_eagerly():
    @pk.fuse
    def f(a, b):
        return (pk.exp(a) * b).sum()

    w = pk.asarray(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    x = pk.asarray(rng.standard_normal((3, 4)).astype(np.float32))
    f(w, x).backward()
    np.testing.assert_allclose(w.grad.numpy(), np.exp(w.numpy()) * x.numpy(), rtol=1e-6)
    assert f.traces == 0
    with pk.no_grad():
        f(w, x)
    assert f.traces == 1


def test_interpreter_mode_gives_the_same_results():
    script = textwrap.dedent("""
        import numpy as np, pykern as pk
        a = pk.asarray(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
        f = pk.fuse(lambda x, y: pk.exp(x) * 2 + y)
        g = pk.fuse(lambda x: (x * 3).sum(axis=-1))
        assert pk.fuse(lambda x: x).kernel(a).interpret
        np.testing.assert_allclose(f(a, a.T.T).numpy(), np.exp(a.numpy()) * 2 + a.numpy(),
                                   rtol=1e-6)
        np.testing.assert_allclose(g(a).numpy(), (a.numpy() * 3).sum(axis=-1), rtol=1e-6)
        print("ok")
    """)
    env = {**os.environ, "PYKERN_INTERPRET": "1"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ---------------------------------------------------------------- what does not fuse


def _if_positive(a):
    if a > 0:
        return a
    return -a


def _matmul(a):
    return a @ a


def _indexing(a):
    return a[0] + 1


def _reduction_then_op(a):
    return a.sum() + 1


def _library_matmul(a):
    return pk.matmul(a, a)


def _function_form_reduction(a):
    return pk.sum(a * 2)


def _view(a):
    return a.reshape(-1)


def _in_place(a):
    a += 1
    return a


def _out(a):
    return pk.exp(a, out=a)


REFUSED = [
    (_if_positive, "Python control flow", "if a > 0:"),
    (_matmul, "a matmul", "return a @ a"),
    (_indexing, "indexing", "return a[0] + 1"),
    (_reduction_then_op, "the result of .sum()", "return a.sum() + 1"),
    (_library_matmul, "needs a traced tensor's value", "return pk.matmul(a, a)"),
    (_function_form_reduction, "x.sum()", "return pk.sum(a * 2)"),
    (_view, ".reshape", "return a.reshape(-1)"),
    (_in_place, "in-place operator +=", "a += 1"),
    (_out, "exp(..., out=...)", "return pk.exp(a, out=a)"),
]


@pytest.mark.parametrize("fn,what,line", REFUSED, ids=lambda x: getattr(x, "__name__", None))
def test_what_does_not_fuse_is_a_located_error(fn, what, line):
    a = pk.asarray(np.ones((2, 2), np.float32))
    with pytest.raises(FuseError) as info:
        pk.fuse(fn)(a)
    err = info.value
    assert isinstance(err, TypeError) and isinstance(err, pk.CompileError)
    assert err.file == __file__ and line in err.source_line
    assert what in str(err)
    assert "pykern/fuse" not in str(err)


def test_a_result_that_is_not_a_tensor_is_refused():
    a = pk.asarray(np.ones(3, np.float32))
    with pytest.raises(FuseError, match="value of type int, not a tensor"):
        pk.fuse(lambda x: 3)(a)
    with pytest.raises(FuseError, match="result 1"):
        pk.fuse(lambda x: (x + 1, a))(a)


def test_eager_errors_stay_the_eager_errors():
    a = pk.asarray(np.ones((4, 4), np.float32))
    with pytest.raises(ValueError, match="broadcast"):
        pk.fuse(lambda x, y: x + y)(a, pk.asarray(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="not supported for bool"):
        pk.fuse(lambda x: -(x > 0))(a)
    with pytest.raises(OverflowError):
        pk.fuse(lambda x: x + 1000)(a.astype(pk.i8))
    with pytest.raises(TypeError, match="hashable"):
        pk.fuse(lambda x, opts: x * 2)(a, {"k": 1})
