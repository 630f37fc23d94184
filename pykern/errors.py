"""Every error pykern raises on purpose, all subclasses of `PykernError`:

    PykernError
    ├── CompileError ── KernelTypeError, (pk.fuse's FuseError)
    ├── LaunchError ── (the runtime's GridError, also a ValueError)
    ├── DeviceError (a RuntimeError) ── OutOfDeviceMemory, DeviceLost, DeviceUnavailable,
    │                                   GraphError
    ├── ToolError (a RuntimeError): spirv-val / spirv-dis missing, hung or broken
    ├── InternalError (a RuntimeError): a bug of pykern's that it caught (spirv-val rejected
    │                                   a module it emitted)
    ├── KernelIndexError (an IndexError), KernelAssertionError (an AssertionError): debug mode
    └── (pk.linalg.LinAlgError, a ValueError)

User mistakes get these; misuse of the Python API (a wrong argument to a tensor function)
gets the builtin exception numpy or PyTorch raise for it (TypeError, ValueError, ...); broken
invariants found by an `assert` are bugs (AssertionError)."""

from __future__ import annotations

# a Vulkan-free leaf of the runtime: importing it loads no Vulkan
from pykern.runtime.errors import (DeviceError, DeviceLost, DeviceUnavailable, GraphError,
                                   InternalError, LaunchError, OutOfDeviceMemory, PykernError,
                                   ToolError)

__all__ = [
    "PykernError", "CompileError", "KernelTypeError", "LaunchError", "DeviceError",
    "OutOfDeviceMemory", "DeviceLost", "DeviceUnavailable", "GraphError", "ToolError",
    "InternalError", "KernelIndexError", "KernelAssertionError", "TransferGuardError",
    "DistributedError",
]


class CompileError(PykernError):
    """What the user wrote cannot be compiled. The message starts `file.py:LINE:COL:`, names the
    construct and shows the source line with a caret under the column. `line` and `col` are
    1-based, as printed. An error inside a `@pk.func` also shows each call site that led to it,
    innermost first (`call_sites`: (file, line, col) triples), as "called from file.py:LINE:COL"
    lines, each with its source line and caret."""

    def __init__(self, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 source_line: str | None = None,
                 call_sites: tuple[tuple[str, int, int, str | None], ...] = ()):
        self.file, self.line, self.col, self.reason = file, line, col, message
        self.source_line = source_line
        self._sites = call_sites  # each with its source line, for called_from
        text = f"{file}:{line}:{col}: {message}" + _show(source_line, col)
        for site_file, site_line, site_col, site_source in call_sites:
            text += f"\ncalled from {site_file}:{site_line}:{site_col}" + _show(site_source,
                                                                              site_col)
        super().__init__(text)

    @property
    def call_sites(self) -> tuple[tuple[str, int, int], ...]:
        """(file, line, col) of each call site, innermost first."""
        return tuple(site[:3] for site in self._sites)

    def called_from(self, file: str, line: int, col: int, source_line: str | None = None
                    ) -> CompileError:
        """This error (same class, same location) with one more call site, the caller of the
        outermost one so far."""
        return type(self)(self.reason, self.file, self.line, self.col, self.source_line,
                          self._sites + ((file, line, col, source_line),))


def _show(source_line: str | None, col: int) -> str:
    """The source line and a caret under column `col`, as the lines after a location."""
    if source_line is None:
        return ""
    return f"\n    {source_line.rstrip()}\n    {' ' * max(col - 1, 0)}^"


class KernelTypeError(CompileError):
    """A type mismatch in a kernel: an operand, an assignment or an argument of the wrong type."""


class TransferGuardError(PykernError, RuntimeError):
    """An implicit copy of a tensor to host memory (`np.asarray(t)`, a numpy function pykern
    does not run on the device) inside `pk.transfer_guard("disallow")` or with
    PYKERN_TRANSFER_GUARD=disallow; raised before anything is copied."""


class DistributedError(DeviceError):  # a RuntimeError, as DeviceError is
    """A collective of `pykern.distributed` could not complete: a peer process died or stopped
    taking part within PYKERN_TIMEOUT, the ranks called different collectives or passed
    tensors of different shapes or dtypes, or the process group is not (or no longer) usable.
    Raised on every rank that notices; the process goes on (nothing aborts it)."""


class KernelIndexError(PykernError, IndexError):
    """Debug mode: a kernel indexed an array out of its bounds."""


class KernelAssertionError(PykernError, AssertionError):
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
