"""ml_dtypes is needed only for bf16 numpy arrays and scalars: `import pykern` does not load it,
and where it is missing everything else works (bf16 kernels and tensors too) while the numpy
conversions of bf16 raise an ImportError that names the package."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def run_python(body: str, folder: Path) -> str:
    script = folder / "program.py"
    script.write_text(textwrap.dedent(body))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=240, cwd=folder, check=False)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result.stdout


def test_import_pykern_does_not_load_ml_dtypes(tmp_path):
    out = run_python("""
        import sys
        import pykern as pk
        print(pk.bf16.itemsize, "ml_dtypes" in sys.modules)
    """, tmp_path)
    assert out.split() == ["2", "False"]


def test_without_ml_dtypes_only_bf16_numpy_conversions_fail(tmp_path):
    out = run_python("""
        import sys
        sys.modules["ml_dtypes"] = None  # import ml_dtypes now fails
        import numpy as np
        import pykern as pk

        @pk.kernel
        def half_of(x: pk.f32[:], out: pk.f32[:]):
            i = pk.global_id(0)
            out[i] = pk.f32(pk.bf16(x[i]) * 0.5)

        x = np.array([1.0, 3.0000001], np.float32)
        out = np.zeros(2, np.float32)
        half_of[2](x, out)
        print(out.tolist())
        t = pk.asarray(x).astype(pk.bf16)
        print(t.dtype, t.astype(pk.f32).numpy().tolist())
        for attempt in (lambda: t.numpy(), lambda: pk.bf16(1.5), lambda: pk.bf16.numpy):
            try:
                attempt()
            except ImportError as e:
                print("ImportError", "pip install ml_dtypes" in str(e))
    """, tmp_path)
    assert out.splitlines() == ["[0.5, 1.5]", "pk.bf16 [1.0, 3.0]"] + ["ImportError True"] * 3
