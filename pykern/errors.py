"""Every error pykern raises on purpose. User mistakes get these; broken invariants are bugs
(AssertionError / RuntimeError)."""

from __future__ import annotations

from pykern.runtime.errors import DeviceError, DeviceLost, OutOfDeviceMemory

__all__ = [
    "CompileError", "KernelTypeError", "LaunchError", "DeviceError", "OutOfDeviceMemory",
    "DeviceLost", "KernelIndexError", "KernelAssertionError",
]


class CompileError(Exception):
    """What the user wrote cannot be compiled. The message starts `file.py:LINE:COL:`, names the
    construct and shows the source line with a caret under the column. `line` and `col` are
    1-based, as printed."""

    def __init__(self, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 source_line: str | None = None):
        self.file, self.line, self.col, self.reason = file, line, col, message
        text = f"{file}:{line}:{col}: {message}"
        if source_line is not None:
            text += f"\n    {source_line.rstrip()}\n    {' ' * max(col - 1, 0)}^"
        super().__init__(text)


class KernelTypeError(CompileError):
    """A type mismatch in a kernel: an operand, an assignment or an argument of the wrong type."""


class LaunchError(Exception):
    """Bad arguments or grid for a launch; raised before anything runs."""


class KernelIndexError(IndexError):
    """Debug mode: a kernel indexed an array out of its bounds."""


class KernelAssertionError(AssertionError):
    """Debug mode: an `assert` in a kernel failed."""


def outside_grid_hint(invocation: tuple[int, ...], grid: tuple[int, ...]) -> str:
    """The hint an error made by `invocation` of a kernel with `pk.barrier()` carries when the
    invocation lies outside the launch's `grid` (such kernels are not masked: every invocation
    of their workgroups runs the body); "" when it lies inside."""
    if all(i < g for i, g in zip(invocation, grid)):
        return ""
    return (f" (invocation {tuple(invocation)} lies outside the grid {tuple(grid)}: a kernel "
            "that calls pk.barrier() runs every invocation of its workgroups, so it must test "
            "pk.global_id(d) < pk.grid(d) itself before touching what lies past the grid)")
