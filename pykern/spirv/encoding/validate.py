"""spirv-val and spirv-dis, run as subprocesses (argument list, input on stdin, a timeout)."""

from __future__ import annotations

import shutil
import subprocess

# a Vulkan-free leaf of the runtime (the one place pykern's error classes below the front end
# live)
from pykern.runtime.errors import InternalError, ToolError

DEFAULT_TIMEOUT_S = 60.0
TIMEOUT_S = DEFAULT_TIMEOUT_S  # PYKERN_TOOL_TIMEOUT, applied by pykern.config (`set_timeout`)


class SpirvValidationError(InternalError):
    """The compiler emitted a module spirv-val rejects: a compiler bug, not a user error."""


class SpirvToolMissingError(ToolError):
    """spirv-val / spirv-dis is not installed (Debian/Ubuntu package `spirv-tools`)."""


class SpirvToolTimeoutError(ToolError):
    """spirv-val / spirv-dis ran past `TIMEOUT_S` and was killed: the tool on PATH is hung or
    broken (no module takes it that long)."""


class SpirvToolFailedError(ToolError):
    """spirv-dis failed on a module (spirv-val passed it, so the tool is broken)."""


def set_timeout(seconds: float) -> None:
    """How long spirv-val and spirv-dis may run before they are stopped (`TIMEOUT_S`)."""
    global TIMEOUT_S
    TIMEOUT_S = float(seconds)


def validate(words: bytes, target_env: str = "vulkan1.2") -> None:
    """Runs `spirv-val --target-env TARGET_ENV -` on `words`.

    Raises SpirvValidationError with spirv-val's message and the module's full disassembly.
    """
    result = _run("spirv-val", ["--target-env", target_env, "-"], words)
    if result.returncode != 0:
        _check_finished("spirv-val", result)
        message = (result.stdout + result.stderr).decode("utf-8", "replace").strip()
        if predates_module(message):
            return
        raise SpirvValidationError(
            f"spirv-val rejected the module:\n{message}\n\n--- disassembly ---\n"
            f"{_disassemble_for_report(words)}")


# capabilities newer than some spirv-val releases still shipped (Debian 12 has v2023.1, which
# predates SPV_KHR_cooperative_matrix and SPV_KHR_bfloat16): CooperativeMatrixKHR,
# BFloat16TypeKHR, BFloat16CooperativeMatrixKHR
_NEWER_CAPABILITIES = ("6022", "5116", "5118")


def predates_module(message: str) -> bool:
    """spirv-val refused the module only because it is older than a capability the module
    declares: then it cannot judge the module, and the driver is the check (SPIRV-Tools
    v2023.3 and newer know them all)."""
    first = message.splitlines()[0] if message else ""
    return any(first.endswith(f"Invalid capability operand: {c}") for c in _NEWER_CAPABILITIES)


def disassemble(words: bytes) -> str:
    """The `spirv-dis` text of `words`, with names (`%main`) rather than raw ids."""
    result = _run("spirv-dis", ["--no-color", "-"], words)
    if result.returncode != 0:
        _check_finished("spirv-dis", result)
        message = result.stderr.decode("utf-8", "replace").strip()
        raise SpirvToolFailedError(f"spirv-dis failed: {message}")
    return result.stdout.decode("utf-8")


def _disassemble_for_report(words: bytes) -> str:
    # an error report must not be lost because the module is too broken to disassemble
    try:
        return disassemble(words)
    except RuntimeError as e:
        return f"(no disassembly: {e})"


def _check_finished(tool: str, result: subprocess.CompletedProcess[bytes]) -> None:
    """Raises SpirvToolFailedError when `tool` did not finish as the SPIRV-Tools programs do
    (0: done, 1: the module is invalid): killed by a signal, or a code of its own (126/127:
    the shell could not run it)."""
    code = result.returncode
    if code in (0, 1):
        return
    how = f"crashed (signal {-code})" if code < 0 else f"exited with code {code}"
    said = result.stderr.decode("utf-8", "replace").strip()[:500]
    raise SpirvToolFailedError(
        f"{tool} ({result.args[0]}) {how}" + (f": {said}" if said else "") + "; this "
        f"{tool} is broken (reinstall SPIRV-Tools: Debian/Ubuntu package spirv-tools)")


def _run(tool: str, args: list[str], words: bytes) -> subprocess.CompletedProcess[bytes]:
    path = shutil.which(tool)
    if path is None:
        raise SpirvToolMissingError(
            f"{tool} is not installed or not on PATH; install SPIRV-Tools "
            "(Debian/Ubuntu: apt-get install spirv-tools)")
    try:
        return subprocess.run([path, *args], input=words, capture_output=True,
                              timeout=TIMEOUT_S, check=False)
    except OSError as e:  # found, but not runnable: a bad interpreter line, not a program
        raise SpirvToolFailedError(
            f"{tool} ({path}) could not be run ({e}); reinstall SPIRV-Tools (Debian/Ubuntu "
            "package spirv-tools)") from None
    except subprocess.TimeoutExpired:
        raise SpirvToolTimeoutError(
            f"{tool} ({path}) did not finish within {TIMEOUT_S:g} s and was stopped; it "
            f"checks a module of {len(words):,} bytes in well under a second, so this {tool} "
            "is hung or broken (reinstall SPIRV-Tools: Debian/Ubuntu package spirv-tools)"
        ) from None
