"""The distribution: its metadata, an sdist that holds what its tests need, and a wheel that
installs into a fresh venv and runs a kernel there.

One sdist and one wheel are built per session (`python -m build` builds the wheel from the
sdist, so the sdist is also shown to be buildable on its own); the build fetches setuptools
into an isolated environment as pip would, unless the running Python has a setuptools new
enough for pyproject.toml (then the build uses it, and needs no network).
"""

from __future__ import annotations

import re

import email.parser
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NAME = "pykern-vulkan"
# the folders the sdist must carry in full: the package, the runtime, and what the tests read
SDIST_FOLDERS = ("pykern", "runtime", "tests", "docs", "examples", "benchmarks")

pytestmark = pytest.mark.skipif(importlib.util.find_spec("build") is None,
                                reason="the 'build' package is not installed (pip install build)")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sdist, wheel) built from this checkout."""
    out = tmp_path_factory.mktemp("dist")
    isolation = ["--no-isolation"] if _has_build_backend() else []
    result = subprocess.run([sys.executable, "-m", "build", *isolation, "--outdir", str(out),
                             str(ROOT)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


def _has_build_backend() -> bool:
    """Whether this Python's setuptools satisfies pyproject.toml's build requirement."""
    try:
        import setuptools
    except ImportError:
        return False
    wanted = re.search(r'requires = \["setuptools>=(\d+)"\]',
                       (ROOT / "pyproject.toml").read_text())
    return wanted is not None and int(setuptools.__version__.split(".")[0]) >= int(wanted[1])


def _project_files() -> set[str]:
    """The files of SDIST_FOLDERS that belong to the project (git's list where there is one)."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(["git", "ls-files", "--", *SDIST_FOLDERS], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.split()
        return {p for p in listed if (ROOT / p).is_file()}
    return {str(p.relative_to(ROOT)) for folder in SDIST_FOLDERS
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and ".hypothesis" not in p.parts}


def test_sdist_holds_everything_its_tests_need(dist: tuple[Path, Path]) -> None:
    sdist, _ = dist
    with tarfile.open(sdist) as tar:
        top = sdist.name[:-len(".tar.gz")]
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n and n.startswith(top)}
    for required in ("pyproject.toml", "README.md", "LICENSE", "Makefile", "MANIFEST.in",
                     "pykern/py.typed", "tests/conftest.py", "examples/tour.ipynb"):
        assert required in names, f"{required} is missing from {sdist.name}"
    missing = sorted(_project_files() - names)
    assert not missing, f"{len(missing)} project files missing from the sdist: {missing[:20]}"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_wheel_metadata(dist: tuple[Path, Path]) -> None:
    _, wheel = dist
    assert wheel.name.startswith("pykern_vulkan-")
    with zipfile.ZipFile(wheel) as zf:
        (meta_name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode())
        files = set(zf.namelist())
    assert meta["Name"] == NAME
    assert meta["License-Expression"] == "MIT"
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["Author"] == "pykern developers"
    classifiers = meta.get_all("Classifier")
    for minor in (10, 11, 12, 13):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    assert "Typing :: Typed" in classifiers
    runtime = {re.split(r"[<>=!~;\[ ]", r)[0] for r in meta.get_all("Requires-Dist")
               if "extra ==" not in r}
    # llvmlite is for the host backend, ml_dtypes for bf16 numpy arrays; typing needs no
    # typing_extensions on 3.10+
    assert runtime == {"llvmlite", "ml_dtypes", "numpy", "vulkan"}, runtime
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in files)
    for shipped in ("pykern/py.typed", "pykern/lang/checker_types.pyi", "pykern/mypy_plugin.py",
                    "pykern/runtime/__init__.py"):
        assert shipped in files, f"{shipped} is missing from {wheel.name}"
    assert not [n for n in files if n.startswith(("tests/", "docs/", "runtime/"))]


def test_wheel_installs_and_runs_a_kernel_in_a_fresh_venv(dist: tuple[Path, Path],
                                                          tmp_path: Path) -> None:
    """No index, no dependencies fetched: the venv sees this environment's packages (numpy,
    vulkan, ...) through a .pth line, after its own site-packages, where the wheel goes."""
    _, wheel = dist
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, timeout=300)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True)
    Path(site.stdout.strip(), "outer.pth").write_text(sysconfig.get_path("purelib") + "\n")
    program = textwrap.dedent("""
        import numpy as np
        import pykern as pk

        @pk.kernel
        def axpy(a: pk.f32, x: pk.f32[:], out: pk.f32[:]):
            i = pk.global_id(0)
            out[i] = a * x[i] + 1.0

        x = np.arange(5, dtype=np.float32)
        out = np.zeros_like(x)
        axpy[x.size](2.0, x, out)
        assert (out == 2 * x + 1).all(), out
        print(pk.__file__)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    (tmp_path / "user_program.py").write_text(program)  # kernels are read from their file
    ran = subprocess.run([str(python), "user_program.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().startswith(str(venv)), ran.stdout
