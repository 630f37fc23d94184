"""The native engines: compiled kernels evicted from the cache free their machine code without
taking the shared target machine with them (an engine owns the machine it is made with)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PROGRAM = textwrap.dedent('''
    import gc
    import numpy as np
    import pykern as pk
    import pykern.llvm
    from pykern.llvm import compiled

    compiled.CACHE_SIZE = 2  # evict after two variants

    @pk.kernel
    def double(x: pk.Array, out: pk.Array):
        out[pk.global_id(0)] = x[pk.global_id(0)] + x[pk.global_id(0)]

    for t in (np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8):
        x = np.ones(10, t)
        out = np.zeros_like(x)
        pykern.llvm.launch(double, 10, x, out)
        gc.collect()
        assert (out == 2).all(), out
    print("ok")
''')


def test_evicted_kernels_leave_later_compilations_working(tmp_path: Path):
    script = tmp_path / "evict.py"  # a file: kernels need their source
    script.write_text(PROGRAM)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
