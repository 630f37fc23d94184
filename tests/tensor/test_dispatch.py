"""Op dispatch by replayed plans (pykern/tensor/core/dispatch.py): the second call of an op with a
signature replays the launches the first one made. Every call, captured or replayed, must give
numpy's answer, whatever operands' values, buffers and sharing."""

from __future__ import annotations

import numpy as np
import pykern as pk
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pykern.tensor.core import dispatch

SHAPES = [(5,), (3, 4), (2, 3, 4), (1, 6), (0, 3)]


def views(rng, shape):
    """A contiguous array, and a transposed and a stepped view with the same shape."""
    base = rng.standard_normal(shape).astype(np.float32)
    yield base, pk.asarray(base)
    t = rng.standard_normal(shape[::-1]).astype(np.float32)
    yield t.T, pk.asarray(t).T
    wide = rng.standard_normal((*shape[:-1], 2 * shape[-1])).astype(np.float32)
    yield wide[..., ::2], pk.asarray(wide)[..., ::2]


@pytest.mark.parametrize("shape", SHAPES)
def test_replays_give_numpys_answer_for_every_call(shape):
    rng = np.random.default_rng(1)
    for _ in range(3):  # the first call captures, the others replay
        for x, tx in views(rng, shape):
            for y, ty in views(rng, shape):
                np.testing.assert_array_equal((tx + ty).numpy(), x + y)
                np.testing.assert_array_equal((tx * ty).numpy(), x * y)
                np.testing.assert_array_equal(pk.exp(tx).numpy(), np.exp(x)) if x.size == 0 \
                    else np.testing.assert_allclose(pk.exp(tx).numpy(), np.exp(x), rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(scalars=st.lists(st.floats(-1e6, 1e6, width=32).filter(lambda v: v == 0 or abs(v) > 1e-30)
                        | st.integers(-1000, 1000), min_size=2, max_size=4))
def test_scalar_operands_are_values_not_part_of_the_plan(scalars):
    # (no products below f32's normal range: GPUs flush those to zero outside strict mode)
    x = np.linspace(-2, 2, 7, dtype=np.float32)
    t = pk.asarray(x)
    for s in scalars:
        np.testing.assert_array_equal((t * s).numpy(), x * np.float32(s))
        np.testing.assert_array_equal((s - t).numpy(), np.float32(s) - x)


def test_zero_and_nan_scalars_keep_their_sign_and_value():
    t = pk.asarray(np.array([1.0, -1.0], np.float32))
    for _ in range(2):
        assert np.signbit((t * -0.0).numpy()).tolist() == [True, False]
        assert np.signbit((t * 0.0).numpy()).tolist() == [False, True]
        assert np.isnan((t + float("nan")).numpy()).all()


def test_where_replays_with_any_condition_values_scalars_and_broadcasting():
    rng = np.random.default_rng(4)
    for _ in range(3):  # the first call captures, the others replay
        c = rng.random((3, 4)) < 0.5
        x = rng.standard_normal((3, 4)).astype(np.float32)
        row = rng.standard_normal(4).astype(np.float32)
        tc, tx, trow = pk.asarray(c), pk.asarray(x), pk.asarray(row)
        for s in (0.0, -0.0, 2.5, 3, float("nan")):
            got = pk.where(tc, tx, s).numpy()
            want = np.where(c, x, np.float32(s))
            np.testing.assert_array_equal(got, want)
            assert (np.signbit(got) == np.signbit(want)).all()
        np.testing.assert_array_equal(pk.where(tc, trow, tx).numpy(), np.where(c, row, x))
        np.testing.assert_array_equal(pk.where(tc[0], 1, trow).numpy(),
                                      np.where(c[0], np.float32(1), row))
        ints = pk.asarray(np.arange(4, dtype=np.int32))
        np.testing.assert_array_equal(pk.where(tc[1], ints, -7).numpy(),
                                      np.where(c[1], np.arange(4, dtype=np.int32), -7))


def test_an_operand_shared_twice_and_two_operands_use_their_own_buffers():
    a = pk.asarray(np.arange(4, dtype=np.float32))
    b = pk.asarray(np.full(4, 10, np.float32))
    for _ in range(2):  # a + a, then a + b of the same signature: each reads what it names
        np.testing.assert_array_equal((a + a).numpy(), [0, 2, 4, 6])
        np.testing.assert_array_equal((a + b).numpy(), [10, 11, 12, 13])
        np.testing.assert_array_equal((b + a).numpy(), [10, 11, 12, 13])


def test_results_are_fresh_tensors_and_inputs_stay_intact():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = pk.asarray(x)
    first, second = a * 2.0, a * 2.0
    assert first.buffer is not second.buffer
    first += 1.0  # writing one result leaves the other (and the input) as they were
    np.testing.assert_array_equal(second.numpy(), 2 * x)
    np.testing.assert_array_equal(a.numpy(), x)


def test_replayed_results_take_part_in_autograd():
    x = pk.asarray(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    for _ in range(2):
        x.grad = None
        (pk.exp(x) * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.exp([1, 2, 3]) * (1 + np.arange(1, 4)),
                                   rtol=1e-6)


@pytest.mark.filterwarnings("ignore:.*strict floating point")
def test_strict_float_blocks_get_their_own_plans():
    a = pk.asarray(np.array([1e-30, 3.0], np.float32))
    b = pk.asarray(np.array([1e-10, 7.0], np.float32))
    plain = (a / b).numpy()
    with pk.strict_float():
        strict = (a / b).numpy()
    np.testing.assert_array_equal(strict, np.divide(a.numpy(), b.numpy()))
    np.testing.assert_allclose(plain, strict, rtol=1e-6)


def test_bad_operands_raise_and_the_next_call_works():
    a = pk.asarray(np.ones((2, 3), np.float32))
    for _ in range(2):
        with pytest.raises(ValueError, match="broadcast"):
            a + pk.ones((4,))
    np.testing.assert_array_equal((a + a).numpy(), 2 * np.ones((2, 3)))


def test_a_plan_belongs_to_its_device(on_vulkan):
    x = np.arange(5, dtype=np.float32)
    results = []
    for device in ("host", "vulkan"):
        pk.set_device(device)
        t = pk.asarray(x)
        results += [(t + t).numpy(), (t + t).numpy()]
    for r in results:
        np.testing.assert_array_equal(r, 2 * x)


@pk.kernel(debug=True)
def fill_checked(out: pk.f32[:], value: pk.f32):
    out[pk.global_id(0)] = value


@pk.kernel
def fill(out: pk.f32[:], value: pk.f32):
    out[pk.global_id(0)] = value


def test_ops_that_do_what_a_replay_would_not_run_their_python_each_time():
    a = pk.zeros(2)
    calls = []

    def uploads():  # values decided in Python and uploaded
        calls.append(1)
        return pk.asarray(np.full(2, len(calls), np.float32))

    def reads():  # a launch that depends on what the host read
        out = pk.empty(2)
        fill[2](out, float(a.numpy()[0] + len(calls)))
        calls.append(1)
        return out

    def debug_launch():  # checked launches report after the fact
        out = pk.empty(2)
        fill_checked[2](out, float(len(calls)))
        calls.append(1)
        return out

    for op in (uploads, reads, debug_launch):
        calls.clear()
        seen = [dispatch.dispatch((op.__name__,), (a,), op).numpy()[0] for _ in range(3)]
        assert seen == [0 + (op is uploads), 1 + (op is uploads), 2 + (op is uploads)]


def test_a_plan_replays_what_its_key_names():
    # the contract: launches depend on the key and the operands' signatures only, so a
    # value left out of the key is the captured one on replay
    a = pk.zeros(2)

    def run(v):
        out = pk.empty(2)
        fill[2](out, v)
        return out

    assert dispatch.dispatch(("fill", 1.0), (a,), lambda: run(1.0)).numpy().tolist() == [1, 1]
    assert dispatch.dispatch(("fill", 1.0), (a,), lambda: run(5.0)).numpy().tolist() == [1, 1]
    assert dispatch.dispatch(("fill", 5.0), (a,), lambda: run(5.0)).numpy().tolist() == [5, 5]


def test_in_place_operators_and_out_replay_into_the_tensor_named():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(3):
        a, b = pk.asarray(x), pk.asarray(x + 1)
        a += b
        a *= 0.5
        a -= a.T.T  # the same elements: no copy needed, zero
        np.testing.assert_array_equal(a.numpy(), np.zeros((2, 3)))
        c = pk.asarray(x)
        c[:, 1:] += c[:, :2]  # overlapping operands: the op copies the input first
        expected = x.copy()
        expected[:, 1:] += x[:, :2]
        np.testing.assert_array_equal(c.numpy(), expected)
        out = pk.empty((2, 3))
        assert pk.exp(b, out=out) is out
        np.testing.assert_allclose(out.numpy(), np.exp(x + 1), rtol=1e-6)


DTYPES = [np.float32, np.int32, np.float16, np.bool_]
BINARY_NAMES = ["add", "subtract", "multiply", "maximum", "less", "equal", "bitwise_and"]
UNARY_NAMES = ["negative", "abs", "exp", "square", "logical_not"]


def _view(rng, shape, dtype, kind):
    data = (rng.standard_normal(shape if kind != "transposed" else shape[::-1]) * 4)
    data = data.astype(dtype)
    if kind == "transposed":
        return data.T, pk.asarray(data).T
    if kind == "broadcast":
        row = data[:1] if data.ndim else data
        return np.broadcast_to(row, shape), pk.asarray(row).broadcast_to(shape)
    return data, pk.asarray(data)


def _call(name, *args):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return getattr(pk, name)(*args).numpy()
        except TypeError as e:  # an op the dtype does not have: the same for every call
            return str(e)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), dtype=st.sampled_from(DTYPES),
       shape=st.sampled_from([(3,), (2, 3), (4, 1, 2)]),
       kinds=st.tuples(*[st.sampled_from(["plain", "transposed", "broadcast"])] * 2),
       name=st.sampled_from(BINARY_NAMES + UNARY_NAMES))
def test_a_replay_equals_the_ops_own_python_on_the_same_operands(seed, dtype, shape, kinds,
                                                                   name):
    rng = np.random.default_rng(seed)
    n_args = 2 if name in BINARY_NAMES else 1
    first = [_view(rng, shape, dtype, k)[1] for k in kinds[:n_args]]
    second = [_view(rng, shape, dtype, k)[1] for k in kinds[:n_args]]
    _call(name, *first)  # captured (or refused)
    replayed = _call(name, *second)
    dispatch.clear()
    direct = _call(name, *second)  # the op's Python again, captured anew
    if isinstance(direct, str):
        assert replayed == direct
    else:
        np.testing.assert_array_equal(replayed, direct)


@pk.kernel
def count_to(out: pk.i32[:], n: pk.i32):
    s = 0
    for _ in range(n):
        s += 1
    out[pk.global_id(0)] = s


def test_a_replayed_loop_cut_short_is_reported(on_vulkan):
    # lavapipe cuts loops after 65,535 iterations; a replay of a launch whose loop was cut
    # must raise as the launch itself does (the plan calls the variant's watch)
    cap = pk.get_device().info.limits.loop_iteration_cap
    if cap is None:
        pytest.skip("the device does not cut loops short")
    a = pk.zeros(1)

    def run(n):
        out = pk.empty(1, pk.i32)
        count_to[1](out, n)
        return out

    assert dispatch.dispatch(("count", 10), (a,), lambda: run(10)).numpy()[0] == 10
    long = ("count", cap + 10)
    for _ in range(3):  # captured, then replayed: each raises at the read
        with pytest.raises(pk.DeviceError, match="cut short"):
            dispatch.dispatch(long, (a,), lambda: run(cap + 10)).numpy()
    assert type(dispatch._PLANS[dispatch.signature(long, pk.get_device(), (a,))]) \
        is dispatch.Plan
