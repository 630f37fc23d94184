"""The README's code examples run as written (the device-selection one is left out: it names
devices a machine may not have)."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).parent.parent / "README.md"


def test_readme_examples_run(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    runnable = [b for b in blocks if "set_device" not in b]
    assert len(runnable) >= 2
    for i, block in enumerate(runnable):
        script = tmp_path / f"readme_{i}.py"
        script.write_text("import pykern as pk\nimport numpy as np\n" + block)
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, f"README example {i} failed:\n{block}\n{result.stderr}"
