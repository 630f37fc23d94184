"""The random-kernel differential test (tests/kernels/kernelgen.py) with the host backend as
its leg: each generated kernel runs in the interpreter and through `pykern.llvm`, and the
outputs must agree (bit for bit for integers, bools and exactly computed floats; within the
generator's tolerance for floats through `/`, `**` or a transcendental function).

Every dtype takes part (the host has them all). Reproducible as the device's test is:

    PYKERN_FUZZ_EXAMPLES=1000 pytest tests/llvm/test_llvm_random_kernels.py
    PYKERN_FUZZ_SEED=7 pytest tests/llvm/test_llvm_random_kernels.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import pykern as pk
import pykern.llvm

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernels"))
import kernelgen  # noqa: E402

EXAMPLES = int(os.environ.get("PYKERN_FUZZ_EXAMPLES", "120"))
SEED = os.environ.get("PYKERN_FUZZ_SEED")


class HostLauncher:
    """`kernel[grid](*args)` through the host backend, as kernelgen launches kernels."""

    def __init__(self, kernel: object) -> None:
        self.kernel = kernel

    def __getitem__(self, grid: object):
        return lambda *args: pykern.llvm.launch(self.kernel, grid, *args)


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="pykern-llvm-random-") as d:
        yield d


_names = iter(range(10**9))


@st.composite
def kernels(draw):
    chooser = kernelgen.HypothesisChooser(draw)
    gk = kernelgen.KernelGenerator(chooser, kernelgen.ALL_DTYPES,
                                   name=f"hostkern{next(_names)}").generate()
    return gk, draw(st.integers(0, 2**32 - 1))


def check_host(gk: kernelgen.GeneratedKernel, directory: str,
               rng: np.random.Generator, debug: bool = False) -> kernelgen.Outcome:
    """kernelgen.check with the host backend in the device's place (both in debug mode if
    `debug`)."""
    try:
        fn = kernelgen.load(gk, directory)
    except Exception:
        return kernelgen.Outcome(gk, {}, error=traceback.format_exc())
    workgroup = (gk.workgroup,) if gk.workgroup is not None else None
    host = HostLauncher(pk.kernel(fn, workgroup=workgroup, debug=debug))
    interpreter = pk.kernel(fn, workgroup=workgroup, interpret=True, debug=debug)
    args = kernelgen.make_arguments(gk, rng)
    if gk.expected_error is not None:
        return kernelgen.expect_compile_error(gk, (host, interpreter), args)
    outcome = kernelgen.Outcome(gk, args)
    try:
        outcome.ref = kernelgen.run(gk, interpreter, args)
        outcome.dev = kernelgen.run(gk, host, args)
    except Exception:
        outcome.error = traceback.format_exc()
        return outcome
    outcome.mismatches = kernelgen.compare(gk, args, outcome.dev, outcome.ref)
    return outcome


def fuzz_settings(fn, examples: int = EXAMPLES):
    fn = settings(max_examples=examples, deadline=None, derandomize=SEED is None, database=None,
                  print_blob=True, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.filter_too_much])(fn)
    return seed(int(SEED))(fn) if SEED is not None else fn


@fuzz_settings
@given(data=st.data())
def test_random_kernels_host_matches_interpreter(data, workdir):
    gk, args_seed = data.draw(kernels(), label="kernel")
    outcome = check_host(gk, workdir, np.random.default_rng(args_seed))
    assert outcome.ok, outcome.report(
        f"host backend and interpreter disagree (arguments from "
        f"np.random.default_rng({args_seed}))")


@given(data=st.data())
def _random_kernels_in_debug_mode(data, workdir):
    gk, args_seed = data.draw(kernels(), label="kernel")
    outcome = check_host(gk, workdir, np.random.default_rng(args_seed), debug=True)
    assert outcome.ok, outcome.report(
        f"in debug mode, host backend and interpreter disagree (arguments from "
        f"np.random.default_rng({args_seed}))")


# the generated kernels index inside their arrays: the checks must neither fire nor change a
# result (fewer examples: the same generator as above, with checks on every access)
test_random_kernels_in_debug_mode_match_the_interpreter = fuzz_settings(
    _random_kernels_in_debug_mode, max(1, EXAMPLES // 4))
