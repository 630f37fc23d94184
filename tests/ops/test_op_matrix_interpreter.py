"""The op matrix in the interpreter: every op of the matrix, its forward run by the interpreter
(PYKERN_INTERPRET=1: each kernel the op launches runs as Python over numpy) in f64 (or its
integer dtype), against numpy; the interpreter is the third way every kernel runs. A fresh
process, since a kernel reads PYKERN_INTERPRET once; it runs in the host pass of the suite
(the interpreter is the same on every device)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pykern as pk

HERE = Path(__file__).resolve().parent

# the child: each row of the matrix once, in f64 (its integer dtype where it has one), its
# failures printed as JSON
CHILD = """
import json, sys
import numpy as np
import pykern as pk
from matrix_samples import run, samples
from test_op_matrix import EXACT, FORWARD

failures, ran = [], 0
cases = {}
for op, dtype in FORWARD + EXACT:
    if op.name not in cases or dtype == pk.f64:
        cases[op.name] = (op, dtype)
for op, dtype in cases.values():
    try:
        for sample in samples(op):
            got, want = run(op, sample, dtype)
            for g, w in zip(got, want, strict=True):
                if dtype.is_float:
                    np.testing.assert_allclose(g.astype(np.float64), w, rtol=1e-12, atol=1e-12)
                else:
                    np.testing.assert_array_equal(g, w)
        ran += 1
    except Exception as e:  # noqa: BLE001 - reported to the test
        failures.append(f"{op.name}-{dtype.name}: {type(e).__name__}: {str(e)[:300]}")
print(json.dumps({"ran": ran, "failures": failures}))
"""


@pytest.mark.skipif(pk.get_device().info.kind != "host",
                    reason="the interpreter leg runs once, in the host pass")
def test_every_row_of_the_matrix_in_the_interpreter():
    env = {**os.environ, "PYKERN_INTERPRET": "1",
           "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent),
                                          os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=600, cwd=HERE)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert not report["failures"], "\n".join(report["failures"])
    assert report["ran"] >= 100, report
