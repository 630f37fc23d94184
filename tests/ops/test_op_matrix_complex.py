"""The op matrix on complex tensors: every op of the matrix that differentiates complex tensors
(its declaration's `complex_grad`), forward in c64 and c128 against numpy in complex128, and its
backward in c128 against central differences of both parts (PyTorch's convention: for a real
loss L of z = x + iy, z.grad = dL/dx + i dL/dy)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern import ops

from gradcheck import check_complex_grad
from matrix_samples import RNG, Sample, float_result, reference, samples
from test_op_matrix import BACKWARD_RULES, ROWS


# declared with complex_grad (so that a complex input reaches the forward, which refuses it
# with a clear error) but without a complex forward
NO_COMPLEX_FORWARD = {"max": "complex numbers have no order", "min": "the same"}


def _complex_rows() -> list[ops.Op]:
    return [op for op in ROWS if op.complex_grad and float_result(op)
            and (op.samples or {}).get("complex", True) and op.name not in NO_COMPLEX_FORWARD]


def complex_samples(op: ops.Op) -> list[Sample]:
    """The op's samples with complex operands: an imaginary part drawn as the real one."""
    found = []
    for s in samples(op):
        arrays = tuple(a + 1j * RNG.uniform(a.min(), a.max() + 1e-3, a.shape) for a in s.arrays)
        found.append(Sample(arrays, s.kwargs, s.names, s.sequence, s.args))
    return found


COMPLEX = _complex_rows()
FORWARD = [(op, dtype) for op in COMPLEX for dtype in (pk.c64, pk.c128)]
BACKWARD = [op for op in COMPLEX if op.grad in BACKWARD_RULES]


@pytest.mark.parametrize("op,dtype", FORWARD, ids=[f"{o.name}-{d.name}" for o, d in FORWARD])
def test_complex_forward_against_numpy(op, dtype):
    for sample in complex_samples(op):
        cast = [a.astype(dtype.numpy) for a in sample.arrays]
        got = sample.call(op.function, [pk.asarray(a) for a in cast])
        want = sample.call(reference(op), [a.astype(np.complex128) for a in cast])
        # c64: Vulkan's f32 functions inside the complex ones (asin's, say) are within a few
        # thousand ulp near their branch points, as in tests/tensor/test_complex_ops.py
        rtol = 5e-4 if dtype == pk.c64 else 1e-12
        got = got if isinstance(got, (tuple, list)) else [got]
        want = want if isinstance(want, (tuple, list)) else [want]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g.numpy().astype(np.complex128), w, rtol=rtol,
                                       atol=rtol, err_msg=op.name)


@pytest.mark.parametrize("op", BACKWARD, ids=[op.name for op in BACKWARD])
def test_complex_backward_against_central_differences(op):
    for sample in complex_samples(op):
        check_complex_grad(lambda *ts, s=sample: s.call(op.function, list(ts)),
                           lambda *xs, s=sample: s.call(reference(op), list(xs)),
                           *sample.arrays, rng=RNG, atol=1e-6)


def test_the_complex_matrix_covers_elementwise_reductions_and_indexing():
    names = {op.name for op in COMPLEX}
    for expected in ("exp", "log", "sqrt", "multiply", "divide", "sum", "prod", "cumsum",
                     "take", "concat"):
        assert expected in names, expected
