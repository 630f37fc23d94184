"""Type checkers accept user code: mypy (with pykern's plugin) and pyright check a small user
program — kernels, a device function, launches, tensor arithmetic — without an error, and infer
what `reveal_type` lines expect; a program with mistakes in it gets exactly those reported.
The program also runs, so what the checkers see is what pykern does.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = '''
"""A small user program."""
from typing import TYPE_CHECKING

import numpy as np
from typing_extensions import reveal_type

import pykern as pk

BLOCK = pk.constexpr(4)


@pk.kernel
def saxpy(a: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]) -> None:
    i = pk.global_id(0)
    out[i] = a * x[i] + y[i]


@pk.func
def twice(v: pk.f32) -> pk.f32:
    return v * 2


@pk.kernel
def halve(h: pk.bf16[:], s: pk.bf16) -> None:
    h[pk.global_id(0)] = h[pk.global_id(0)] * s + pk.bf16(0.5)


@pk.kernel(workgroup=(4, 4))
def grow(m: pk.f32[:, :], s: pk.Array, n: pk.constexpr) -> None:
    i = pk.global_id(0)
    j = pk.global_id(1)
    acc = m[i, j]
    for k in range(n):
        acc = pk.max(acc, twice(s[k]))
    if pk.isnan(acc):
        acc = pk.f32(0)
    m[i, j] = pk.sqrt(pk.abs(acc)) + pk.exp(0.0)


x = np.arange(8, dtype=np.float32)
out = np.empty_like(x)
saxpy[x.size](2.0, x, x, out)
m = np.ones((4, 4), np.float32)
grow[m.shape](m, np.arange(4, dtype=np.float32), 4)
t = pk.asarray(x)
u = pk.exp(t) + 1
v = pk.sqrt(x) * pk.zeros(8, dtype=pk.f32)
print(out.tolist(), m[0, 0], float(pk.sum(u - pk.exp(t))), v.shape)

reveal_type(saxpy)  # expect: Kernel
reveal_type(twice)  # expect: Func
reveal_type(pk.exp(t) + 1)  # expect: Tensor
reveal_type(pk.tanh(t))  # expect: Tensor
reveal_type(pk.exp(1.0))  # expect: float  (a kernel's view; run here it is a 0-d Tensor)
reveal_type(pk.sqrt(x))  # expect: Tensor
reveal_type(pk.pow(t, 2))  # expect: Tensor
reveal_type(pk.isnan(t))  # expect: Tensor
reveal_type(pk.max(t, axis=0))  # expect: Tensor
reveal_type(pk.max(3, 4))  # expect: int
reveal_type(pk.where(t > 0, t, 0.0))  # expect: Tensor
reveal_type(pk.zeros((2, 3), dtype=pk.f32))  # expect: Tensor
reveal_type(t.dtype)  # expect: DType
reveal_type(pk.f32.itemsize)  # expect: int
if TYPE_CHECKING:  # kernel-only: called here it raises
    reveal_type(pk.global_id(0))  # expect: int
'''

# each line a mistake that a checker must report (the pyright rule, mypy's error code)
MISTAKES = '''
import pykern as pk

t = pk.asarray([1.0, 2.0])
name: str = pk.exp(t)
pk.exp(t).no_such_method()
scale: float = pk.sum(t)
pk.kernel(print)[4]("too", "late")
pk.barrier(1)
'''
MISTAKE_LINES = [5, 6, 7, 9]  # the launch (line 8) of any kernel takes any arguments


def expected_reveals(source: str) -> dict[int, str]:
    return {n: line.split("# expect: ")[1].split()[0]
            for n, line in enumerate(source.splitlines(), 1) if "# expect: " in line}


def short(type_name: str) -> str:
    """`pykern.tensor.core.tensor.Tensor` and pyright's `Tensor` alike: the last dotted name."""
    return type_name.strip('"').rsplit(".", 1)[-1]


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_the_program_runs(tmp_path):
    write(tmp_path, "user_program.py", PROGRAM)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run([sys.executable, "user_program.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    out, m00, diff, shape = ran.stdout.strip().rsplit(" ", 3)
    x = np.arange(8, dtype=np.float32)
    assert eval(out.strip()) == (3 * x).tolist()  # the list it printed
    assert float(m00) == pytest.approx(np.sqrt(6.0) + 1.0, rel=1e-6)  # max(1, 2 * 3)
    # what the checkers are told is what the objects are, but for a math function of a
    # number outside a kernel (there the op library's 0-d Tensor)
    runtime = re.findall(r"Runtime type is '(\w+)'", ran.stderr)
    expected = [t for n, t in sorted(expected_reveals(textwrap.dedent(PROGRAM)).items())]
    assert runtime == [t.replace("float", "Tensor") for t in expected[:len(runtime)]]
    assert len(runtime) == len(expected) - 1  # all but the one under TYPE_CHECKING


def test_the_checker_view_covers_every_dtype_and_builtin():
    """A dtype or builtin added at run time but not to the checkers' view would be "not valid
    as a type", or untyped, to them: pykern/lang/checker_types.pyi and the declarations at the
    top of pykern/lang/builtins.py list them all."""
    import ast

    pytest.importorskip("mypy")  # the plugin imports mypy (a test extra; not on every machine)
    from pykern import mypy_plugin
    from pykern.lang import builtins, dtypes

    stub = ast.parse((ROOT / "pykern/lang/checker_types.pyi").read_text())
    classes = {node.name for node in stub.body if isinstance(node, ast.ClassDef)}
    names = {d.name for d in dtypes.ALL_DTYPES}
    assert names <= classes
    assert {n.rsplit(".", 1)[1] for n in mypy_plugin.DTYPE_CLASSES} == names
    module = ast.parse(Path(builtins.__file__).read_text())
    (checking,) = [node for node in module.body if isinstance(node, ast.If)
                   and ast.unparse(node.test) == "TYPE_CHECKING"]
    declared = {node.target.id for node in checking.body if isinstance(node, ast.AnnAssign)}
    defined = {name for name, value in vars(builtins).items()
               if isinstance(value, builtins.KernelBuiltin)}
    assert declared == defined


# ---- mypy --------------------------------------------------------------------------------

needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (pip install mypy, or '.[test]')")

MYPY_CONFIG = f"""
[mypy]
plugins = pykern.mypy_plugin
mypy_path = {ROOT}
python_version = 3.10
[mypy-pykern.*]
follow_imports = silent
"""
# Scalar, generic-array and constexpr parameters need no plugin (each was once "not valid as a
# type"); `pk.f32[:]` does, and without it mypy says so, on the line of that signature.
WITHOUT_PLUGIN = """
import pykern as pk


@pk.kernel
def k(a: pk.f32, b: pk.i64, s: pk.Array, n: pk.constexpr) -> None:
    s[pk.global_id(0)] = a * b + n


def needs_the_plugin(x: pk.f32[:]) -> None: ...
"""


def run_mypy(folder: Path, sources: dict[str, str],
             plugin: bool = True) -> dict[str, list[tuple[int, str]]]:
    """mypy's (line, message) pairs for each file of `sources` (name: source), in one run."""
    folder.mkdir(exist_ok=True)
    for name, source in sources.items():
        write(folder, name, source)
    config = MYPY_CONFIG
    if not plugin:  # (numpy unanalysed, for speed: these checks need nothing of it)
        config = config.replace("plugins = pykern.mypy_plugin\n", "")
        config += "[mypy-numpy.*]\nfollow_imports = skip\n"
    (folder / "mypy.ini").write_text(config)
    ran = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", *sources],
                         cwd=folder, capture_output=True, text=True, timeout=300)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr  # 2: mypy itself failed
    return {name: [(int(n), m) for n, m in re.findall(rf"^{re.escape(name)}:(\d+): (.*)$",
                                                       ran.stdout, re.M)]
            for name in sources}


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[int, str]]]:
    return run_mypy(tmp_path_factory.mktemp("mypy"),
                    {"program.py": PROGRAM, "mistakes.py": MISTAKES})


@needs_mypy
def test_mypy_accepts_the_program_and_infers_its_types(mypy_report):
    messages = mypy_report["program.py"]
    assert not [m for m in messages if m[1].startswith("error:")], messages
    revealed = {n: short(m.split("Revealed type is ")[1]) for n, m in messages
                if "Revealed type is" in m}
    assert revealed == expected_reveals(textwrap.dedent(PROGRAM))


@needs_mypy
def test_mypy_reports_the_mistakes(mypy_report):
    messages = mypy_report["mistakes.py"]
    assert sorted({n for n, m in messages if m.startswith("error:")}) == MISTAKE_LINES, messages


@needs_mypy
def test_without_the_plugin_mypy_takes_scalars_but_not_slices(tmp_path):
    messages = run_mypy(tmp_path, {"plain.py": WITHOUT_PLUGIN}, plugin=False)["plain.py"]
    assert {n for n, _ in messages} == {10}, messages
    assert any("[valid-type]" in m for _, m in messages), messages


# ---- pyright -----------------------------------------------------------------------------

needs_pyright = pytest.mark.skipif(
    importlib.util.find_spec("pyright") is None or shutil.which("node") is None,
    reason="pyright is not installed (pip install pyright, or '.[test]'), or Node.js it runs on")


@pytest.fixture(scope="module")
def pyright_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """pyright's diagnostics for the program and the mistakes, by file name, in one run."""
    folder = tmp_path_factory.mktemp("pyright")
    sources = {"program.py": PROGRAM, "mistakes.py": MISTAKES}
    for name, source in sources.items():
        write(folder, name, source)
    (folder / "pyrightconfig.json").write_text(json.dumps(
        {"extraPaths": [str(ROOT)], "pythonVersion": "3.10", "include": list(sources)}))
    ran = subprocess.run([sys.executable, "-m", "pyright", "--outputjson",
                          "--pythonpath", sys.executable], cwd=folder,
                         capture_output=True, text=True, timeout=600)
    try:
        diagnostics = json.loads(ran.stdout)["generalDiagnostics"]
    except (json.JSONDecodeError, KeyError):
        pytest.fail(f"pyright gave no report:\n{ran.stdout[-2000:]}\n{ran.stderr[-2000:]}")
    return {name: [d for d in diagnostics if Path(d["file"]).name == name] for name in sources}


@needs_pyright
def test_pyright_accepts_the_program_and_infers_its_types(pyright_report):
    diagnostics = pyright_report["program.py"]
    assert not [d for d in diagnostics if d["severity"] == "error"], diagnostics
    revealed = {d["range"]["start"]["line"] + 1:
                short(re.search(r'is "(.*)"$', d["message"]).group(1))
                for d in diagnostics if d["message"].startswith("Type of")}
    assert revealed == expected_reveals(textwrap.dedent(PROGRAM))


@needs_pyright
def test_pyright_reports_the_mistakes(pyright_report):
    diagnostics = pyright_report["mistakes.py"]
    lines = sorted({d["range"]["start"]["line"] + 1 for d in diagnostics
                    if d["severity"] == "error"})
    assert lines == MISTAKE_LINES, diagnostics
