"""The layering of docs/architecture.md, checked from the code: each arrow points one way only.

The imports and `raise` statements of every module are read with `ast` (nothing is run), and
the import of the front layers is tried in a Python where the `vulkan` package is blocked:

- `pykern/frontend`, `pykern/ir` and `pykern/lang` import no backend and not the runtime;
- `runtime/` (installed as `pykern.runtime`) imports nothing of pykern outside itself;
- the runtime's Vulkan-free leaf modules import only the standard library and each other, and
  the SPIR-V backend imports nothing else of the runtime;
- a backend (`pykern/spirv`, `pykern/interpret`) raises no user-facing error: what reaches it
  has been checked, so its failures are compiler bugs (AssertionError, RuntimeError);
- `import pykern`, `pykern.ir`, `pykern.frontend` and `pykern.lang` work without Vulkan, and
  `import pykern` loads no Vulkan even where it is installed;
- the compiler (`jit` and everything below it) binds arrays by a protocol and imports nothing
  of the tensor library, the autograd engine imports no op module (ops register their
  backward with their declaration), and the op registry imports nothing of pykern;
- the tensor library does not import the layers above it (`linalg`, `fft`, `nn`, `optim`, `io`)
  but for its array API face, which exports `xp.linalg` and `xp.fft`;
- the PyTorch device (`pykern/torch`) is imported by nothing else of pykern, which never imports
  torch; it uses pykern's public API, the op registry and a few named insides only;
- at most 30 imports of pykern sit inside functions (a cycle held apart at run time), each
  with its reason in a comment.

A case that fails because of work still pending elsewhere is marked xfail(strict=True) with the
file it is about: when that work lands, the case passes, strict xfail fails, and the mark goes.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pykern.errors import CompileError, LaunchError

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("pykern.spirv", "pykern.interpret", "pykern.llvm")
RUNTIME = "pykern.runtime"
# the runtime's modules that load no Vulkan, which the compiler may import: the binding-layout
# ABI, the errors, the device features and grid normalisation (not all of them exist yet)
RUNTIME_LEAVES = ("layout", "errors", "feature", "grid")


def module_name(path: Path) -> str:
    """The dotted name `path` is imported as (runtime/ is installed as pykern.runtime)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "runtime":
        parts[:1] = ["pykern", "runtime"]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources(folder: str) -> list[Path]:
    """The Python files of `folder` (relative to the repository), sorted."""
    return sorted((ROOT / folder).rglob("*.py"))


def ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


def imports(path: Path) -> Iterator[tuple[str, int]]:
    """Every name an import statement of `path` binds, as an absolute dotted name, with its
    line: `import a.b` gives "a.b", `from a import b` gives "a.b" (a submodule or an
    attribute), relative imports resolved against the file's package. Imports inside functions
    and `if TYPE_CHECKING:` blocks count too: the layer knows of what they name."""
    package = module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def violations(path: Path, allowed) -> list[str]:
    """`file:line: name` for each import of `path` that `allowed(name)` refuses."""
    return [f"{path.relative_to(ROOT)}:{line}: imports {name}"
            for name, line in imports(path) if not allowed(name)]


# ------------------------------------------------------------------ the front layers

FRONT = sources("pykern/frontend") + sources("pykern/ir") + sources("pykern/lang")


@pytest.mark.parametrize("path", FRONT, ids=ids(FRONT))
def test_front_layers_import_no_backend_and_no_runtime(path):
    def allowed(name: str) -> bool:
        return not any(within(name, p) for p in (*BACKENDS, RUNTIME))

    assert not violations(path, allowed)


# ------------------------------------------------------------------ the PyTorch device

BELOW_TORCH = [p for p in sources("pykern") + sources("runtime")
               if "pykern/torch/" not in p.as_posix()]


@pytest.mark.parametrize("path", BELOW_TORCH, ids=ids(BELOW_TORCH))
def test_nothing_below_the_pytorch_device_imports_it_or_torch(path):
    """pykern.torch is a layer on top: no other module imports it, and none imports PyTorch
    (an optional extra)."""
    def allowed(name: str) -> bool:
        return not within(name, "pykern.torch") and not within(name, "torch")

    assert not violations(path, allowed)


# what of pykern the PyTorch device uses: the public API (`import pykern as pk`), the op
# registry (the ATen names of the elementwise ops), the op device's context
# (runtime.selection), and the LU and triangular-solve kernels that pk.linalg uses inside
# (the array API's linalg names neither)
TORCH_DEVICE_USES = ("pykern.torch", "pykern.ops", "pykern.runtime.selection",
                     "pykern.linalg.lu", "pykern.linalg.pivots", "pykern.linalg.triangular_solve")
TORCH_DEVICE = sources("pykern/torch")


@pytest.mark.parametrize("path", TORCH_DEVICE, ids=ids(TORCH_DEVICE))
def test_the_pytorch_device_uses_the_public_api_and_named_insides(path):
    def allowed(name: str) -> bool:
        return not within(name, "pykern") or name == "pykern" or \
            any(within(name, m) for m in TORCH_DEVICE_USES)

    assert not violations(path, allowed)


def test_import_pykern_loads_no_torch():
    code = "import sys, pykern; sys.exit('torch' in sys.modules or 'pykern.torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


# ------------------------------------------------------------------ the runtime

RUNTIME_FILES = sources("runtime")


@pytest.mark.parametrize("path", RUNTIME_FILES, ids=ids(RUNTIME_FILES))
def test_runtime_imports_nothing_of_pykern_outside_it(path):
    def allowed(name: str) -> bool:
        return not within(name, "pykern") or within(name, RUNTIME)

    assert not violations(path, allowed)


def leaf_of(name: str) -> str | None:
    """The runtime module `name` (a module or a name in one) lies in, if it is a leaf."""
    if not within(name, RUNTIME) or name == RUNTIME:
        return None
    module = name[len(RUNTIME) + 1:].split(".")[0]
    return module if module in RUNTIME_LEAVES else None


LEAF_FILES = [p for p in RUNTIME_FILES if p.stem in RUNTIME_LEAVES]


def test_the_leaves_exist():
    assert {"layout", "errors"} <= {p.stem for p in LEAF_FILES}


@pytest.mark.parametrize("path", LEAF_FILES, ids=ids(LEAF_FILES))
def test_runtime_leaves_import_only_the_standard_library_and_each_other(path):
    def allowed(name: str) -> bool:
        return name.split(".")[0] in sys.stdlib_module_names or leaf_of(name) is not None

    assert not violations(path, allowed)


SPIRV_FILES = sources("pykern/spirv")


@pytest.mark.parametrize("path", SPIRV_FILES, ids=ids(SPIRV_FILES))
def test_spirv_imports_only_the_runtime_leaves(path):
    """Not the package (`from pykern.runtime import X`): only a leaf module by name."""
    def allowed(name: str) -> bool:
        return not within(name, RUNTIME) or leaf_of(name) is not None

    assert not violations(path, allowed)


# ------------------------------------------------------------------ backends raise no user error


def user_error_names() -> set[str]:
    """CompileError, LaunchError and every subclass pykern defines."""
    names, pending = set(), [CompileError, LaunchError]
    while pending:
        cls = pending.pop()
        names.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    return names


def raised_name(node: ast.Raise) -> str | None:
    """The name of what `raise X`, `raise X(...)` or `raise m.X(...)` raises."""
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    if isinstance(exc, ast.Name):
        return exc.id
    if isinstance(exc, ast.Attribute):
        return exc.attr
    return None


def user_errors_raised(path: Path, text: str | None = None) -> list[str]:
    """`file:line: raises X` for each user-facing error the module at `path` (or `text`)
    raises."""
    user_errors = user_error_names()
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    return [f"{path.name}:{node.lineno}: raises {raised_name(node)}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Raise) and node.exc is not None
            and raised_name(node) in user_errors]


BACKEND_FILES = sources("pykern/spirv") + sources("pykern/interpret")


@pytest.mark.parametrize("path", BACKEND_FILES, ids=ids(BACKEND_FILES))
def test_backends_raise_no_user_facing_error(path):
    assert not user_errors_raised(path)


def test_the_raise_check_finds_what_it_looks_for():
    """The check itself: it finds `raise X(...)`, `raise m.X(...)` and `raise X` of a user
    error, and leaves the others alone."""
    sample = ("from pykern import errors\n"
              "def f(x):\n"
              "    if x == 1:\n        raise CompileError('a')\n"
              "    if x == 2:\n        raise errors.KernelTypeError('b')\n"
              "    if x == 3:\n        raise LaunchError\n"
              "    raise RuntimeError('a bug')\n")
    assert user_errors_raised(Path("sample.py"), sample) == [
        "sample.py:4: raises CompileError", "sample.py:6: raises KernelTypeError",
        "sample.py:8: raises LaunchError"]


# ------------------------------------------------------------------ importing without Vulkan


@pytest.mark.parametrize("module", ["pykern", "pykern.ir", "pykern.frontend", "pykern.lang"])
def test_imports_without_vulkan(module):
    program = ("import sys\n"
               "sys.modules['vulkan'] = None  # import vulkan now fails\n"
               f"import {module}\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr


def test_import_pykern_loads_no_vulkan():
    """Where Vulkan is installed too, `import pykern` leaves it unloaded until a device is
    first used."""
    program = ("import sys\n"
               "import pykern\n"
               "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'vulkan'\n"
               "                or m == 'pykern.runtime.vulkan._vk')\n"
               "assert not loaded, loaded\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr


def test_the_import_check_sees_the_relative_imports():
    """`from .errors import DeviceError` in runtime/ is pykern.runtime.errors.DeviceError."""
    found = {name for name, _ in imports(ROOT / "runtime" / "selection.py")}
    assert "pykern.runtime.errors.DeviceError" in found
    # inside `if TYPE_CHECKING:` and a function
    assert "pykern.runtime.vulkan.device.Device" in found


# ------------------------------------------------------------------ the op library's layers

COMPILER = ("pykern/frontend", "pykern/ir", "pykern/lang", "pykern/passes", "pykern/spirv",
            "pykern/llvm", "pykern/interpret", "pykern/jit", "pykern/mathlib")
UPPER = ("pykern.tensor", "pykern.autograd", "pykern.linalg", "pykern.fft", "pykern.nn",
         "pykern.optim", "pykern.io", "pykern.fuse", "pykern.ops")
# jit/host_binding.py still names pk.Tensor in its fast path (the host runtime's work in
# progress elsewhere touches it; it moves to the array protocol of jit/arrays.py with it)
COMPILER_EXCEPTIONS = {"pykern/jit/host_binding.py"}
COMPILER_FILES = [p for folder in COMPILER for p in sources(folder)
                  if str(p.relative_to(ROOT)) not in COMPILER_EXCEPTIONS]


@pytest.mark.parametrize("path", COMPILER_FILES, ids=ids(COMPILER_FILES))
def test_the_compiler_imports_no_tensor_library(path):
    """The jit binds anything that offers buffer, shape, dtype, strides and offset
    (`pykern.jit.arrays`); nothing below the tensor library knows Tensor or an op."""
    def allowed(name: str) -> bool:
        return not any(within(name, p) for p in UPPER)

    assert not violations(path, allowed)


# the engine's few uses of ops, reached inside its functions (the distributed hooks being
# added there come first; they then go through pykern.autograd.library as the rest does)
AUTOGRAD_EXCEPTIONS = {
    ("pykern/autograd/engine.py", "pykern"),
    ("pykern/autograd/engine.py", "pykern.tensor.core.strided.has_internal_overlap")}
AUTOGRAD_FILES = sources("pykern/autograd")


@pytest.mark.parametrize("path", AUTOGRAD_FILES, ids=ids(AUTOGRAD_FILES))
def test_the_autograd_engine_imports_no_op_module(path):
    """Backward rules are declared with their ops (pykern.ops); the engine reaches the tensor
    functions it needs through `pykern.autograd.library`, which the tensor library fills."""
    rel = str(path.relative_to(ROOT))

    def allowed(name: str) -> bool:
        if (rel, name) in AUTOGRAD_EXCEPTIONS:
            return True
        return not (name == "pykern" or any(within(name, p) for p in UPPER
                                            if p != "pykern.autograd"))

    assert not violations(path, allowed)


def test_the_registry_imports_nothing_of_pykern():
    path = ROOT / "pykern" / "ops" / "registry.py"
    assert not violations(path, lambda name: not within(name, "pykern"))


TENSOR_FILES = [p for p in sources("pykern/tensor") if "api" not in p.relative_to(ROOT).parts]


@pytest.mark.parametrize("path", TENSOR_FILES, ids=ids(TENSOR_FILES))
def test_the_tensor_library_imports_no_layer_above_it(path):
    def allowed(name: str) -> bool:
        return not any(within(name, p) for p in ("pykern.linalg", "pykern.fft", "pykern.nn",
                                                 "pykern.optim", "pykern.io"))

    assert not violations(path, allowed)


def function_level_imports(path: Path) -> list[tuple[int, bool]]:
    """(line, whether it carries a comment saying why) for each import of pykern (or of the
    runtime's own modules) inside a function of `path`."""
    text = path.read_text()
    lines = text.split("\n")
    tree = ast.parse(text, str(path))
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom):
                ours = node.level > 0 or (node.module or "").startswith("pykern")
            elif isinstance(node, ast.Import):
                ours = any(a.name.startswith("pykern") for a in node.names)
            else:
                continue
            if ours:
                # the reason: a comment on its line or on the line before
                said = "#" in lines[node.lineno - 1] or "#" in lines[node.lineno - 2]
                found.append((node.lineno, said))
    return sorted(set(found))


ALL_FILES = sources("pykern") + sources("runtime")


def test_few_imports_hide_inside_functions():
    """A cycle held apart by an import inside a function is a smell: at most 30, each saying
    why (hostsafe's llvm/launch.py pair excepted from the comment until that work lands)."""
    found = {f"{p.relative_to(ROOT)}:{line}": said
             for p in ALL_FILES for line, said in function_level_imports(p)}
    assert len(found) <= 30, sorted(found)
    unexplained = [k for k, said in found.items() if not said
                   and not k.startswith("pykern/llvm/launch.py")]
    assert not unexplained, unexplained


# ------------------------------------------------------------------ the distributed layer

# data-parallel training sits on top of everything: pykern/distributed and pk.nn.parallel
# (DistributedDataParallel, which `pk.nn` loads only when `pk.nn.parallel` is first used)
DISTRIBUTED = ("pykern.distributed", "pykern.nn.parallel")


def test_nothing_below_the_distributed_layer_imports_it():
    below = [p for p in sources("pykern") + RUNTIME_FILES
             if not any(within(module_name(p), d) for d in DISTRIBUTED)]
    assert len(below) > 100

    def allowed(name: str) -> bool:
        return not any(within(name, d) for d in DISTRIBUTED)

    found = [v for path in below for v in violations(path, allowed)]
    assert not found, "\n".join(found)


def test_import_pykern_loads_neither_the_distributed_layer_nor_mpi():
    """pykern works without mpi4py: `import pykern` and `pk.nn` load neither it nor
    pykern.distributed; `pk.nn.parallel` loads the layer, still without mpi4py."""
    program = ("import sys\n"
               "import pykern as pk\n"
               "pk.nn.Linear(2, 2)\n"
               "def loaded():\n"
               "    return sorted(m for m in sys.modules if m.split('.')[0] == 'mpi4py'\n"
               "                  or m.startswith(('pykern.distributed', 'pykern.nn.parallel')))\n"
               "assert not loaded(), loaded()\n"
               "pk.nn.parallel.DistributedDataParallel\n"
               "assert 'pykern.distributed' in sys.modules\n"
               "assert not any(m.split('.')[0] == 'mpi4py' for m in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
