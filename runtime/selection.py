"""The process's devices: listing, choosing the current one, and tearing down at exit.

Nothing here touches Vulkan at import (it only registers the fork handler below), nor imports
a module that loads it: `import pykern` works on a machine without Vulkan. The first call that
needs Vulkan reads the `Config` from the environment, loads the binding, creates the instance
and registers the exit handler. Where Vulkan is unusable (no `vulkan` package, no loader, no
driver, no device), `devices()` is empty and whatever needs a device raises `DeviceUnavailable`
saying what to install.

Switching devices keeps the old one open: buffers made on it stay valid and usable, and every
device is closed at exit (or by `shutdown()`). A device that became unusable (a kernel that ran
past PYKERN_TIMEOUT and still runs, a lost device, one closed by the user) is replaced by a
fresh one when `set_device` asks for it again.

After `os.fork()` the child inherits the parent's Vulkan objects but not the driver's threads:
using or destroying them there can hang (vkDestroyDevice at exit did). The child therefore
disowns everything it inherited: every use raises DeviceError, and nothing is destroyed at its
exit. Nor can it open a device of its own once the parent had opened one: the driver's global
state does not survive the fork (lavapipe works, then crashes at the child's exit, joining
threads of the parent). A child of a process that never opened a device starts a runtime of
its own on first use.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from dataclasses import replace
from typing import TYPE_CHECKING

from .config import Config
from .vulkan.device_files import detach_device_files
from .errors import (FORK_ADVICE, INSTALL_DRIVER, DeviceError, DeviceUnavailable, GraphError,
                     unavailable_message)
from .vulkan.forked_exit import end_with_os_exit
from .logs import configure as configure_logging

from .host.host_device import HostDevice, host_info

if TYPE_CHECKING:  # these load Vulkan: imported where a device is first needed
    from .description import DeviceInfo
    from .vulkan.device import Device
    from .vulkan.instance import Instance
    from .vulkan.validation import ValidationMessage

# the default device: a GPU, else the host backend (native code, all cores), and only then a
# Vulkan CPU implementation such as lavapipe (which runs a lane at a time)
KIND_PREFERENCE = ("discrete", "integrated", "virtual", "host", "cpu", "other")

_log = logging.getLogger("pykern.runtime")


class Runtime:
    """The instance, the devices it lists, the ones opened, and which one is current."""

    def __init__(self, config: Config, vulkan_refusal: str | None = None) -> None:
        self.config = config
        # why Vulkan is unusable in this process (None where it is usable)
        self.vulkan_unavailable: str | None = vulkan_refusal
        self.instance: Instance | None = None
        self.infos: list[DeviceInfo] = []
        if vulkan_refusal is None:
            self._list_vulkan_devices()
        else:  # a forked child: its parent's devices keep their indices, and refuse to open
            self.infos = list(_inherited_vulkan_infos)
        # the host device, listed after the Vulkan devices on every machine
        self.host_index = len(self.infos)
        self.infos.append(host_info(self.host_index))
        self.opened: dict[int, Device | HostDevice] = {}
        self.extra: list[Device | HostDevice] = []  # from open_device: closed at shutdown too
        self.replaced: list[Device | HostDevice] = []  # unusable devices set_device replaced
        self.current: Device | HostDevice | None = None

    def _list_vulkan_devices(self) -> None:
        """The first use of Vulkan in the process: where it has none, only the host device
        is listed and `vulkan_unavailable` says what to install."""
        try:
            from .vulkan.info import query_device_info  # these load the binding
            from .vulkan.instance import Instance  # (as above)

            self.instance = Instance(self.config)
        except DeviceUnavailable as error:
            self.vulkan_unavailable = str(error)
            return
        validate = self.instance.validation is not None
        self.infos = [query_device_info(i, p, self.instance.handle, validate)
                      for i, p in enumerate(self.instance.physical_devices)]
        if not self.infos:
            self.vulkan_unavailable = unavailable_message("the Vulkan driver lists no device",
                                                          INSTALL_DRIVER)

    def open(self, index: int) -> Device | HostDevice:
        """The shared device of index `index`: the one opened before, unless it became
        unusable (then a fresh one takes its place)."""
        device = self.opened.get(index)
        if device is not None and not device.usable:
            self.replaced.append(device)  # closed at shutdown, if it can be
            device = None
            _log.info("device [%d] is unusable: opening a fresh one in its place", index)
        if device is None:
            device = self.opened[index] = self.new_device(index, self.config)
        return device

    def new_device(self, index: int, config: Config) -> Device | HostDevice:
        """A fresh device of index `index`: the host device, or a Vulkan device with
        `config` (a DeviceError where this process cannot use Vulkan)."""
        if index == self.host_index:
            return HostDevice(self.infos[index], config.timeout)
        if self.instance is None:
            assert self.vulkan_unavailable is not None
            raise DeviceError(self.vulkan_unavailable)
        return _new_device(self, index, config)

    def default_index(self) -> int:
        if self.config.device is not None:
            return select(self.infos, self.config.device, "PYKERN_DEVICE",
                          self.vulkan_unavailable)
        return choose_default(self.infos)

    def close(self) -> bool:
        """Closes every device, then the instance (kept if a device could not be destroyed);
        False when one could not."""
        clean = True
        for device in self.devices():
            device.close()
            clean = clean and device.handle is None
        self.opened.clear()
        self.extra.clear()
        self.replaced.clear()
        self.current = None
        if clean and self.instance is not None:
            self.instance.close()
        return clean

    def devices(self) -> list[Device | HostDevice]:
        """Every device this runtime opened."""
        return [*self.opened.values(), *self.extra, *self.replaced]

    def disown(self, parent_pid: int) -> None:
        """In a child made by os.fork(): every device is the parent's (see `Device.disown`)."""
        for device in self.devices():
            device.disown(parent_pid)
        if self.instance is not None:
            self.instance.disown()


_lock = threading.RLock()
_runtime: Runtime | None = None
_exit_handler_registered = False
_inherited: list[Runtime] = []  # a forked child's runtimes of its parent: kept, never closed
_inherited_vulkan_infos: list[DeviceInfo] = []  # what they listed, for the child's indices
_device_opened = False  # a VkDevice was made in this process, or in a parent it was forked from
_forked_refusal: str | None = None  # why this forked process cannot use Vulkan
def _disown_after_fork() -> None:
    """Runs in the child of os.fork(): the runtime it inherited is the parent's."""
    global _lock, _runtime, _forked_refusal
    _lock = threading.RLock()  # another thread may have held it at the fork
    runtime, _runtime = _runtime, None
    parent = os.getppid()
    if runtime is not None:
        runtime.disown(parent)
        _inherited.append(runtime)
        _inherited_vulkan_infos[:] = [i for i in runtime.infos if i.kind != "host"]
        if any(info.kind not in ("cpu", "host") for info in runtime.infos):
            # a GPU driver's exit code in this child would damage the parent's device
            end_with_os_exit()
    if _device_opened and _forked_refusal is None:
        _forked_refusal = (
            f"pykern cannot use Vulkan in this process: it was made by os.fork() from a process "
            f"(pid {parent}) that had opened a Vulkan device, and the driver's state does not "
            f"survive a fork. {FORK_ADVICE}, or fork before the first device is opened."
        )


os.register_at_fork(after_in_child=_disown_after_fork)


def _describe(info: DeviceInfo) -> str:
    return f"[{info.index}] {info.name} ({info.kind})"


def _log_devices(runtime: Runtime) -> None:
    """Says what the runtime found: the devices, and why Vulkan is unusable where it is."""
    if runtime.vulkan_unavailable and _log.isEnabledFor(logging.INFO):
        _log.info("no Vulkan device is usable, so the host device is: %s",
                  runtime.vulkan_unavailable)
    if runtime.config.validate and runtime.instance is not None and \
            _log.isEnabledFor(logging.INFO):
        _log.info("the validation layer is on: cooperative matrices and bfloat16 are neither "
                  "queried nor enabled (the layer predates them)")
    if _log.isEnabledFor(logging.DEBUG):
        _log.debug("devices: %s", ", ".join(_describe(i) for i in runtime.infos))


def _get_runtime() -> Runtime:
    global _runtime, _exit_handler_registered
    with _lock:
        if _runtime is None:
            config = Config.from_env()
            configure_logging(config.log_level)
            _runtime = Runtime(config, _forked_refusal)
            _log_devices(_runtime)
            if not _exit_handler_registered:
                atexit.register(shutdown)
                _exit_handler_registered = True
        return _runtime


def _new_device(runtime: Runtime, index: int, config: Config) -> Device:
    from .vulkan.device import Device  # loads the Vulkan binding: only when a device is made

    global _device_opened
    _device_opened = True  # before: a fork during the creation must count it too
    try:
        return Device(
            runtime.instance, runtime.infos[index], runtime.instance.physical_devices[index],
            config,
        )
    except DeviceError as error:
        if not _inherited:
            raise
        # some drivers (NVIDIA's) refuse a device in a child forked from a process that had
        # used Vulkan at all, even without a device
        raise DeviceError(
            f"{error}. This process was made by os.fork() from one that had used Vulkan, which "
            f"this driver does not allow. {FORK_ADVICE}, or fork before pykern is first used."
        ) from error


def choose_default(infos: list[DeviceInfo]) -> int:
    """The index of the first discrete GPU, else integrated (or virtual) GPU, else the host
    device, else a Vulkan CPU implementation."""
    return min(infos, key=lambda i: (KIND_PREFERENCE.index(i.kind), i.index)).index


def select(infos: list[DeviceInfo], which: int | str, source: str = "set_device",
           vulkan_unavailable: str | None = None) -> int:
    """The index of the device `which` names: an index, "host", "vulkan" (the first Vulkan
    device in the default order), a kind ("discrete", "cpu", ...), or a case-insensitive
    substring of the name (the first match). Raises DeviceError, listing the devices (and why
    Vulkan is unusable, where it is), when nothing matches."""
    text = str(which).strip()
    vulkan = [i for i in infos if i.kind != "host"]
    if text.lower() == "vulkan" and vulkan:  # the device the default would be without host
        return choose_default(vulkan)
    if isinstance(which, int) or text.isdigit():
        index = int(text)
        if 0 <= index < len(infos):
            return index
    else:
        for info in sorted(infos, key=lambda i: (i.kind != text.lower(), i.index)):
            if text.lower() in info.name.lower() or text.lower() == info.kind:
                return info.index
    listing = "\n".join(f"  [{i.index}] {i.name} ({i.kind})" for i in infos)
    if vulkan_unavailable:
        raise DeviceUnavailable(f"{source}: no device matches {which!r}, and no Vulkan device is "
                                f"usable: {vulkan_unavailable} The devices are:\n{listing}")
    raise DeviceError(f"{source}: no device matches {which!r}; the devices are:\n{listing}")


def devices() -> list[DeviceInfo]:
    """Every device of the machine, in the order `set_device` indexes them: the Vulkan
    devices, then the host device (always there, also without Vulkan)."""
    return list(_get_runtime().infos)


class _OpDevice(threading.local):
    """The device an op runs on while it runs (`running_on`), per thread; None outside ops."""

    device: Device | HostDevice | None = None


_op_device = _OpDevice()


class running_on:  # noqa: N801  (used as a `with` block)
    """`with running_on(device):` makes `get_device()` answer `device` in this thread until
    the block ends, without changing the current device: the op library's edge runs an op
    inside one on its operands' device, so that every buffer and launch of the op lands
    there. Blocks nest."""

    __slots__ = ("device", "outer")

    def __init__(self, device: Device | HostDevice) -> None:
        self.device = device

    def __enter__(self) -> Device | HostDevice:
        self.outer = _op_device.device
        _op_device.device = self.device
        return self.device

    def __exit__(self, *exc: object) -> None:
        _op_device.device = self.outer


def device_for(which: object) -> Device | HostDevice:
    """The opened device that `which` names, without making it current: a Device itself, an
    entry of `devices()`, an index, or a name as `set_device` takes ("host", "vulkan", a
    kind, a substring of the name)."""
    if hasattr(which, "launch") and hasattr(which, "info"):
        return which  # type: ignore[return-value]  # a Device or HostDevice
    index = getattr(which, "index", None)  # a DeviceInfo
    with _lock:
        runtime = _get_runtime()
        if not isinstance(index, int):
            index = select(runtime.infos, which, "device", runtime.vulkan_unavailable)
        if not 0 <= index < len(runtime.infos):
            raise DeviceError(f"no device has index {index}; see pk.devices()")
        return runtime.open(index)


def get_device() -> Device:
    """The current device, opened on first use: PYKERN_DEVICE if set, else the first discrete
    GPU, else an integrated one, else the host device. While an op runs, the device it runs
    on (that of its operands, `running_on`)."""
    op_device = _op_device.device
    if op_device is not None:
        return op_device
    runtime = _runtime  # every launch asks: once a device is current, answer without the lock
    if runtime is not None and runtime.current is not None:
        return runtime.current
    with _lock:
        runtime = _get_runtime()
        if runtime.current is None:
            index = runtime.default_index()
            runtime.current = runtime.open(index)
            if _log.isEnabledFor(logging.INFO):
                why = f"PYKERN_DEVICE={runtime.config.device!r}" if runtime.config.device \
                    else "the default order (discrete GPU, integrated GPU, host, CPU Vulkan)"
                _log.info("device %s, chosen by %s", _describe(runtime.infos[index]), why)
        return runtime.current


current = get_device


def current_device() -> Device | HostDevice:
    """The current device, whatever op runs (`get_device` answers the op's device inside
    one)."""
    with running_on(None):  # type: ignore[arg-type]
        return get_device()


def opened_devices() -> list[Device | HostDevice]:
    """The current device, then every other shared device opened so far (by `set_device`, or
    by `t.to(device)`), in index order."""
    first = current_device()
    with _lock:
        runtime = _get_runtime()
        others = [d for _, d in sorted(runtime.opened.items()) if d is not first and d.usable]
    return [first, *others]


def set_device(which: int | str) -> Device:
    """Makes the device with index `which`, or the first whose name contains `which`
    (case-insensitive), the current one and returns it. The previous device stays open."""
    with _lock:
        runtime = _get_runtime()
        if runtime.current is not None and getattr(runtime.current, "graph_recording", False):
            raise GraphError("set_device() inside pk.graph(): a graph records the launches of "
                             "one device; change devices outside the block")
        index = select(runtime.infos, which, "set_device", runtime.vulkan_unavailable)
        runtime.current = runtime.open(index)
        if _log.isEnabledFor(logging.INFO):
            _log.info("device %s, chosen by set_device(%r)", _describe(runtime.infos[index]),
                      which)
        return runtime.current


def open_device(which: int | str | None = None, **config: object) -> Device | HostDevice:
    """A new Device of its own (neither the current one nor shared), on the device `which`
    names (the default device when None), with fields of the process's Config replaced by
    `config` (e.g. `force_staging=True`). Close it when done; shutdown() closes it otherwise."""
    with _lock:
        runtime = _get_runtime()
        index = runtime.default_index() if which is None else \
            select(runtime.infos, which, "open_device", runtime.vulkan_unavailable)
        device = runtime.new_device(index, replace(runtime.config, **config))
        runtime.extra.append(device)
        return device


def sync() -> None:
    """Waits for everything recorded on the current device (nothing if none was opened)."""
    with _lock:
        device = _runtime.current if _runtime is not None else None
    if device is not None:
        device.sync()


def settle() -> None:
    """Waits for the work recorded on every open device that can still finish it (closed,
    hung and lost devices are skipped); opens nothing. Test harnesses call it before reading
    `validation_messages()`, since some errors are only reported when work is submitted."""
    with _lock:
        runtime = _runtime
        opened = [] if runtime is None else runtime.devices()
    for device in opened:
        if not (device.closed or device.hung or device.lost):
            device.sync()


def validation_messages(min_severity: str = "error") -> list[ValidationMessage]:
    """Messages the validation layer reported (PYKERN_VALIDATE=1) since the last clear."""
    runtime = _runtime
    if runtime is None or runtime.instance is None or runtime.instance.validation is None:
        return []
    return runtime.instance.validation.messages(min_severity)


def clear_validation_messages() -> None:
    """Forgets the validation messages recorded so far."""
    runtime = _runtime
    if runtime is not None and runtime.instance is not None and \
            runtime.instance.validation is not None:
        runtime.instance.validation.clear()


def validation_enabled() -> bool:
    """Whether the validation layer is on (it is decided when the runtime starts)."""
    instance = _get_runtime().instance
    return instance is not None and instance.validation is not None


def shutdown() -> None:
    """Closes every device and the instance (runs at exit). A later call starts afresh. A
    device still running work that never ends cannot be destroyed, and its driver would block
    the exit: its device files are let go of instead (`detach_device_files`)."""
    global _runtime
    with _lock:
        runtime, _runtime = _runtime, None
    if runtime is not None and not runtime.close():
        detach_device_files()
