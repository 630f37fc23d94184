"""Running one kernel on the host backend and in the interpreter, and comparing every array
argument afterwards: exactly (floats bit for bit but for NaN payloads, signed zeros
included) or within a relative and absolute tolerance where the operation is approximate."""

from __future__ import annotations

import numpy as np

import pykern as pk
import pykern.llvm


def copies(args: tuple) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def run_both(kernel: pk.Kernel, grid: int | tuple[int, ...], *args: object,
             threads: int | None = None) -> tuple[list, list]:
    """(the arguments after the host run on `threads` threads, after the interpreter run),
    each on copies."""
    host, ref = copies(args), copies(args)
    pykern.llvm.launch(kernel, grid, *host, threads=threads)
    interpreted = pk.kernel(kernel.__wrapped__, workgroup=kernel.workgroup, interpret=True)
    with np.errstate(all="ignore"):
        interpreted[grid](*ref)
    return host, ref


def assert_same(host: np.ndarray, ref: np.ndarray, rtol: float = 0.0, atol: float = 0.0,
                what: str = "") -> None:
    # bf16 (ml_dtypes) is a float numpy does not know as one: how numpy's testing compares
    # its NaNs depends on numpy's version, so it is compared as the floats above
    if host.dtype.kind != "f" and host.dtype.name != "bfloat16":
        np.testing.assert_array_equal(host, ref, err_msg=what)
        return
    h, r = host.astype(np.float64), ref.astype(np.float64)
    both_nan = np.isnan(h) & np.isnan(r)
    if rtol == 0.0 and atol == 0.0:
        same = both_nan | ((h == r) & (np.signbit(h) == np.signbit(r)))
    else:
        with np.errstate(invalid="ignore"):
            same = both_nan | (h == r) | (np.abs(h - r) <= atol + rtol * np.abs(r))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, (f"{what}: {bad.size} of {h.size} differ, first at {bad[:5]}: "
                           f"host {host.ravel()[bad[:5]]}, interpreter {ref.ravel()[bad[:5]]}")


def check(kernel: pk.Kernel, grid: int | tuple[int, ...], *args: object, rtol: float = 0.0,
          atol: float = 0.0, threads: int | None = None) -> list:
    """Runs `kernel` on both backends and compares every array argument; the host's
    arguments afterwards. `threads=1` where workgroups race through atomics on one location
    (the interpreter's order is one thread's)."""
    host, ref = run_both(kernel, grid, *args, threads=threads)
    for k, (h, r) in enumerate(zip(host, ref, strict=True)):
        if isinstance(h, np.ndarray):
            assert_same(h, r, rtol, atol, what=f"argument {k}")
    return host
