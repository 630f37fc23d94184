"""The innermost invocation loop is emitted so that LLVM vectorises it: an elementwise kernel
comes out with SIMD loads, adds and stores (and, in a loose check, runs near numpy's speed;
tests/llvm/bench_add.py measures it)."""

from __future__ import annotations

import re

import numpy as np
from bench_add import add, main

import pykern as pk
import pykern.llvm


def test_an_elementwise_kernel_is_vectorised():
    x = np.ones(1024, np.float32)
    host = pykern.llvm.compile_for(add, x.size, x, x, x.copy())
    vector_add = re.search(r"fadd <(\d+) x float>", host.llvm_ir)
    assert vector_add is not None, host.llvm_ir
    assert int(vector_add.group(1)) >= 4


def test_add_runs_at_a_fair_fraction_of_numpy_bandwidth():
    # loose: the machine is shared while tests run (measured alone: about 1.0 of numpy)
    host, numpy = main(22)
    assert host > 0.2 * numpy


@pk.kernel
def row_sums_by_lanes(x: pk.f32[:, :], out: pk.f32[:]):
    """Each invocation a row, summed in 64 lanes: the loop over a lane block indexes x by its
    own variable, so LLVM loads whole vectors (a run-time unit stride, checked once)."""
    r = pk.global_id(0)
    n = x.shape[1]
    lanes = pk.local(pk.f32, 64)
    for j0 in range(0, n, 64):
        for j in range(j0, min(j0 + 64, n)):
            lanes[j - j0] = lanes[j - j0] + x[r, j]
    total = pk.f32(0.0)
    for i in range(64):
        total += lanes[i]
    out[r] = total


def test_a_range_loop_over_a_run_time_stride_loads_vectors():
    x = np.arange(8 * 300, dtype=np.float32).reshape(8, 300) % 7
    out = np.zeros(8, np.float32)
    host = pykern.llvm.compile_for(row_sums_by_lanes, 8, x, out)
    assert re.search(r"load <\d+ x float>, ptr", host.llvm_ir), host.llvm_ir
    assert not re.search(r"insertelement <\d+ x float>", host.llvm_ir), \
        "x's elements gathered one by one"
    pykern.llvm.launch(row_sums_by_lanes, 8, x, out)
    np.testing.assert_array_equal(out, x.sum(axis=1))
    # a strided view (x's columns, stride 300) takes the scalar path and agrees
    xt = np.ascontiguousarray(x.T).T
    pykern.llvm.launch(row_sums_by_lanes, 8, xt, out)
    np.testing.assert_array_equal(out, x.sum(axis=1))


def test_a_range_loop_counts_to_the_end_of_its_type():
    # the narrow loop value must never be used past the last iteration, where its step may
    # overflow
    @pk.kernel
    def tail(out: pk.i32[:]):
        n = 0
        last = 0
        for i in range(2147483640, 2147483647, 3):
            n += 1
            last = i
        out[0] = n
        out[1] = last

    out = np.zeros(2, np.int32)
    pykern.llvm.launch(tail, 1, out)
    assert out.tolist() == [3, 2147483646]
