"""The innermost invocation loop is emitted so that LLVM vectorises it: an elementwise kernel
comes out with SIMD loads, adds and stores (and, in a loose check, runs near numpy's speed;
tests/llvm/bench_add.py measures it)."""

from __future__ import annotations

import re

import numpy as np
from bench_add import add, main

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
