"""A kernel whose source Python does not keep (typed at the prompt, `python -c`, exec of a
string) is refused with a CompileError that says where kernels can be defined and why."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import numpy as np, pykern as pk
@pk.kernel
def fill(x: pk.f32[:]):
    x[pk.global_id(0)] = 1.0
fill[1](np.zeros(1, np.float32))
"""


def test_kernel_from_python_c_explains_why_and_what_works():
    run = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode != 0
    message = run.stderr.strip().splitlines()[-1]
    assert message.startswith("pykern.errors.CompileError: <string>:3:")
    for words in ("cannot read the source of fill", "Jupyter", "python -c", ".py file",
                  "inspect.getsource"):
        assert words in message, message
