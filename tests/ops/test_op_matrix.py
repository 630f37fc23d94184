"""The op matrix, generated from the registry (pykern.ops), as PyTorch's OpInfo: every declared op
with samples (its kind's generator, or its declaration's: matrix_samples.py says how) and a
numpy reference × its dtypes, forward against numpy in float64 and backward against central
differences, on the current device (the suite runs again on a Vulkan device; complex dtypes
and the interpreter have matrices of their own). A new op is tested by declaring it.

Sizes stay small: a few elements per sample, so that the whole matrix is a few hundred
compiles of short kernels."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern import ops

from gradcheck import check_grad
from matrix_samples import (DIFFERENTIABLE, RNG, dtypes, float_result, has_samples, reference,
                            run, samples)

# how an op's gradient is made: all but "none" and "refused" give one to check
BACKWARD_RULES = (*DIFFERENTIABLE, "linear", "inline")


def matrix_rows() -> list[ops.Op]:
    """The exported ops with samples and a reference: the matrix's rows."""
    return [op for op in ops.all_ops()
            if op.exports and has_samples(op) and reference(op) is not None]


def _float_inputs(op: ops.Op) -> bool:
    return all(d.is_float for d in dtypes(op))


ROWS = matrix_rows()
FORWARD = [(op, dtype) for op in ROWS if float_result(op) and _float_inputs(op)
           for dtype in dtypes(op)]
BACKWARD = [op for op in ROWS if op.grad in BACKWARD_RULES and float_result(op)
            and _float_inputs(op)]
# ops whose results are bools, integers or indices: numpy's exactly
EXACT = [(op, dtype) for op in ROWS if not float_result(op) or not _float_inputs(op)
         for dtype in dtypes(op)]


def _ids(cases: list[tuple[ops.Op, pk.DType]]) -> list[str]:
    return [f"{op.name}-{dtype.name}" for op, dtype in cases]


@pytest.mark.parametrize("op,dtype", FORWARD, ids=_ids(FORWARD))
def test_forward_against_numpy_in_float64(op, dtype):
    for sample in samples(op):
        got, want = run(op, sample, dtype)
        assert len(got) == len(want), op.name
        # a few ulp of the dtype (f32 math is within a few ulp of the exact result), or the
        # op's declared f32 accuracy where that is Vulkan's
        rtol = (op.samples or {}).get("f32_rtol", 2e-5) if dtype == pk.f32 else 1e-12
        for g, w in zip(got, want):
            assert g.shape == np.shape(w), (op.name, sample.kwargs)
            np.testing.assert_allclose(g.astype(np.float64), w, rtol=rtol, atol=rtol,
                                       err_msg=op.name)


def _exact_operands(op: ops.Op, dtype: pk.DType, arrays: tuple) -> list[np.ndarray]:
    """Integer-only elementwise ops get integers from 0..7 (shifts stay inside the width)."""
    if dtype.is_int and getattr(op, "plan", None) is not None:
        return [np.floor(a * 2 + 4).astype(dtype.numpy) for a in arrays]
    return [a.astype(dtype.numpy) for a in arrays]


@pytest.mark.parametrize("op,dtype", EXACT, ids=_ids(EXACT))
def test_exact_results_against_numpy(op, dtype):
    """Bool, integer and index results are numpy's exactly."""
    for sample in samples(op):
        arrays = _exact_operands(op, dtype, sample.arrays)
        got = sample.call(op.function, [pk.asarray(a) for a in arrays])
        want = sample.call(reference(op), arrays)
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g.numpy(), w, err_msg=op.name)


@pytest.mark.parametrize("op", BACKWARD, ids=[op.name for op in BACKWARD])
def test_backward_against_central_differences(op):
    fn, want_fn = op.function, reference(op)
    for sample in samples(op):
        check_grad(lambda *ts, s=sample: _joined(s.call(fn, list(ts)), pk.concat,
                                                 pk.array_api.reshape),
                   lambda *xs, s=sample: _joined(s.call(want_fn, list(xs)), np.concatenate,
                                                 np.reshape),
                   *sample.arrays, rng=RNG, atol=1e-6, skip_jumps=True)


def _joined(result, concat, reshape):
    """An op's result, its parts flattened and joined where it has several (unstack)."""
    if isinstance(result, (tuple, list)):
        return concat([reshape(part, (-1,)) for part in result])
    return result


AUTOCAST = [op for op in ROWS if float_result(op) and pk.f32 in dtypes(op)]


@pytest.mark.parametrize("op", AUTOCAST, ids=[op.name for op in AUTOCAST])
def test_autocast_does_what_the_declaration_says(op):
    """Under pk.autocast(bf16), f32 operands: an op declared "none" gives what it gives
    outside; "lower" gives the result of its bf16 operands in bf16; "lower_f32_result" that
    result in f32."""
    sample = next(iter(samples(op)))
    tensors = [pk.asarray(a.astype(np.float32)) for a in sample.arrays]
    with pk.autocast(dtype=pk.bf16):
        got = _joined(sample.call(op.function, tensors), pk.concat, pk.array_api.reshape)
    if op.autocast == "none":
        want = _joined(sample.call(op.function, tensors), pk.concat, pk.array_api.reshape)
    else:
        low = [t.astype(pk.bf16) for t in tensors]
        want = _joined(sample.call(op.function, low), pk.concat, pk.array_api.reshape)
        if op.autocast == "lower_f32_result":
            want = want.astype(pk.f32) if want.dtype != pk.f32 else want
    assert got.dtype == want.dtype, (op.name, op.autocast)
    tol = 1e-6 if op.autocast == "none" else 1e-2  # bf16 results: a few of its ulp
    np.testing.assert_allclose(got.numpy().astype(np.float64),
                               want.numpy().astype(np.float64), rtol=tol, atol=tol)


def test_the_matrix_covers_the_op_kinds():
    """Every float elementwise op, the reductions, the nn, index, sort and shape ops are in the
    matrix: a new one is tested by being declared (or the matrix says what it lacks)."""
    names = {op.name for op in ROWS}
    assert len(names) >= 100, sorted(names)
    for expected in ("exp", "gelu", "atan2", "pow", "sum", "var", "cumsum", "logaddexp",
                     "argmax", "softmax", "layer_norm", "one_hot", "take", "take_along_axis",
                     "concat", "scatter_add", "sort", "argsort", "tril", "reshape", "roll"):
        assert expected in names, expected


# exported ops the matrix does not run, and why: each is tested in its topic's tests
NOT_IN_THE_MATRIX = {
    "creation": "no tensor operand (zeros, arange, ...): tests/tensor/test_tensor_creation.py",
    "random": "random values: tests/tensor/test_random*.py compare distributions",
    "linalg": "their own references and tolerances: tests/linalg",
    "fft": "their own references and tolerances: tests/fft",
    "conv": "tests/tensor/test_conv*.py against PyTorch",
    "pool": "tests/nn/test_torch_conv_pool.py against PyTorch",
    "cast": "astype's casting rules: tests/tensor/test_tensor.py",
    "complex": "complex views and parts: tests/tensor/test_complex_views.py",
}
NOT_IN_THE_MATRIX_BY_NAME = {
    "where": "a bool condition operand: tests/tensor/test_elementwise.py",
    "topk": "a named tuple of values and indices: tests/tensor/test_sort.py",
    "searchsorted": "sorted operands: tests/tensor/test_array_api_2024.py",
    "unique_values": "tests/tensor/test_array_api.py",
    "unique_counts": "tests/tensor/test_array_api.py",
    "unique_inverse": "tests/tensor/test_array_api.py",
    "unique_all": "tests/tensor/test_array_api.py",
}


def test_every_exported_op_is_in_the_matrix_or_says_where_it_is_tested():
    """A newly declared op gets samples and a reference (or its kind's), or an entry above."""
    names = {op.name for op in ROWS}
    missing = [op.name for op in ops.all_ops()
               if op.exports and op.name not in names and op.kind not in NOT_IN_THE_MATRIX
               and op.name not in NOT_IN_THE_MATRIX_BY_NAME]
    assert not missing, f"declare samples and a reference for: {missing}"
