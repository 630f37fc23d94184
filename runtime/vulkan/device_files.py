"""Letting go of a GPU driver's open device files without closing them as the driver would.

A process whose device still runs a kernel that never ends cannot destroy it, and the driver's
own exit code would then block the exit, waiting for that kernel (seen on an H200, driver 580).
`detach_device_files` points every descriptor of a GPU device node (NVIDIA's /dev/nvidia*, the
DRM nodes of other GPU drivers) at /dev/null: the driver's later calls on them fail harmlessly
and the kernel releases the real files, ending the runaway work with the process. Linux only;
elsewhere it does nothing.
"""

from __future__ import annotations

import os

# device nodes of GPU drivers: NVIDIA's, and DRM (render) nodes of the others
DEVICE_FILE_PREFIXES = ("/dev/nvidia", "/dev/dri/")
FD_DIRECTORY = "/proc/self/fd"


def device_file_descriptors() -> list[int]:
    """The open file descriptors of this process that name a GPU device node."""
    try:
        names = os.listdir(FD_DIRECTORY)
    except OSError:
        return []
    found = []
    for name in names:
        try:
            target = os.readlink(os.path.join(FD_DIRECTORY, name))
        except OSError:  # closed meanwhile (the listing's own descriptor among them)
            continue
        if target.startswith(DEVICE_FILE_PREFIXES):
            found.append(int(name))
    return sorted(found)


def detach_device_files() -> int:
    """Points every GPU device descriptor of this process at /dev/null; returns how many."""
    fds = device_file_descriptors()
    if not fds:
        return 0
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in fds:
            os.dup2(null, fd, inheritable=False)
    finally:
        os.close(null)
    return len(fds)
