"""The op library's structure: the unary and binary tables behind every elementwise function
and operator, the registration of the kernel math names as tensor functions, and the one way
the kernels unravel an index, `pk.unravel` over an array's leading dimensions (checked on the
device against numpy)."""

import numpy as np
import pytest

import pykern as pk
from pykern.lang import builtins as bi
from pykern.tensor.elementwise import binary_ops as bo
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.api.kernel_names import tensor_functions


@pytest.mark.parametrize("name", sorted(ew.UNARY) + sorted(ew.BINARY))
def test_every_table_entry_has_its_public_function(name):
    fn = getattr(ew, name)
    assert fn.__name__ == name and fn.__doc__


def test_operators_and_functions_run_the_same_entries():
    x = np.array([[1.5, -2.0, 3.0], [0.0, 7.0, -0.5]], np.float32)
    t = pk.asarray(x)
    for op, fn, ref in ((lambda a, b: a + b, ew.add, np.add),
                        (lambda a, b: a - b, ew.subtract, np.subtract),
                        (lambda a, b: a * b, ew.multiply, np.multiply),
                        (lambda a, b: a < b, ew.less, np.less),
                        (lambda a, b: a >= b, ew.greater_equal, np.greater_equal)):
        np.testing.assert_array_equal(op(t, t.T.T).numpy(), fn(t, t).numpy())
        np.testing.assert_array_equal(op(t, 2.0).numpy(), ref(x, np.float32(2.0)))
        np.testing.assert_array_equal(op(2.0, t).numpy(), ref(np.float32(2.0), x))


@pytest.mark.parametrize("op", [bo.EQUAL, bo.NOT_EQUAL, bo.LESS, bo.LESS_EQUAL, bo.GREATER,
                                bo.GREATER_EQUAL], ids=lambda op: op.name)
@pytest.mark.parametrize("value", [1000, -1000])
def test_comparisons_with_an_out_of_range_scalar_on_either_side(op, value):
    x = np.array([-128, 0, 127], np.int8)
    ref = getattr(np, op.name)
    t = pk.asarray(x)
    np.testing.assert_array_equal(ew.binary(op, t, value).numpy(), ref(x.astype(np.int64), value))
    np.testing.assert_array_equal(ew.binary(op, value, t).numpy(), ref(value, x.astype(np.int64)))


def test_a_refused_dtype_is_refused_every_time():
    b = pk.asarray([True, False])
    for _ in range(2):  # a plan is cached per dtype; an error is not a plan
        with pytest.raises(TypeError, match="negative is not supported for bool"):
            ew.negative(b)
        with pytest.raises(TypeError, match="subtract is not supported for bool"):
            ew.subtract(b, b)


def test_every_kernel_math_name_but_fma_serves_tensors():
    served = {builtin for builtin, _ in tensor_functions()}
    math_names = [v for v in vars(bi).values() if isinstance(v, bi.KernelBuiltin)
                  and v.name in {"fma"} | {b.name for b in served}]
    for builtin in math_names:
        assert (builtin.tensor_op is not None) == (builtin is not bi.fma), builtin.name
    assert pk.exp is bi.exp and isinstance(pk.exp(pk.asarray([0.0])), pk.Tensor)
    assert pk.max(3, 4) == 4 and pk.max(pk.asarray([1, 5, 2])).item() == 5


@pk.kernel
def _coordinates(a: pk.f32[:, :, :, :], out4: pk.i32[:, :], out3: pk.i32[:, :],
                 out2: pk.i32[:, :]):
    i = pk.global_id(0)
    # the op kernels' idiom: the leading dims of a 4-d view, as a row index for the last
    out4[i, 0], out4[i, 1], out4[i, 2], out4[i, 3] = pk.unravel(i, a.shape)
    out3[i, 0], out3[i, 1], out3[i, 2] = pk.unravel(i, a.shape[:3])
    out2[i, 0], out2[i, 1] = pk.unravel(i, a.shape[:2])


def test_unravel_over_leading_dims_gives_numpys_coordinates():
    shape = (3, 4, 2, 5)
    n = int(np.prod(shape))
    a = pk.zeros(shape)
    outs = [pk.zeros((n, k), pk.i32) for k in (4, 3, 2)]
    _coordinates[n](a, *outs)
    flat = np.arange(n)
    for out, dims in zip(outs, (shape, shape[:3], shape[:2])):
        # over the leading dims of a: index i counts in units of the dims after them
        expected = np.stack(np.unravel_index(flat % int(np.prod(dims)), dims), axis=1)
        if len(dims) < 4:
            expected[:, 0] = flat // int(np.prod(dims[1:]))
        np.testing.assert_array_equal(out.numpy(), expected)


def test_no_per_rank_unravel_helpers_are_left():
    import importlib.util
    assert importlib.util.find_spec("pykern.tensor.unravel") is None


def test_one_axis_rule_for_methods_and_ops():
    t = pk.asarray(np.ones((1, 3), np.float32))
    assert t.unsqueeze(np.int64(0)).shape == (1, 1, 3)
    assert pk.softmax(t, axis=np.int32(-1)).shape == (1, 3)
    for call in (lambda: t.squeeze(True), lambda: pk.softmax(t, axis=True),
                 lambda: pk.cumsum(t, axis=True)):
        with pytest.raises(TypeError, match="axis must be an int"):
            call()
    with pytest.raises(ValueError, match="softmax: axis 2 is out of range"):
        pk.softmax(t, axis=2)
