"""Makes "pykern" a PyTorch device: PyTorch's PrivateUse1 backend renamed, with its device
module, hooks and device guard, every entry of the ATen table registered as its kernel, and a
fallback that names an operator without one."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

import pykern as pk
from pykern.runtime.selection import running_on
from pykern.torch import autocast, device_module, devices, dlpack, pinning, serialization
from pykern.torch.table import TABLE

_LIBRARIES: list[torch.library.Library] = []  # kept alive: dropping one unregisters its kernels


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    """What PyTorch asks of a backend before it runs anything on it."""

    def is_available(self) -> bool:
        return True

    def has_primary_context(self, device_index: int) -> bool:
        return True

    def is_built(self) -> bool:
        return True


class _Guard(torch._C._acc.DeviceGuard):
    """PyTorch's device guard: pykern ops run on their operands' device, so there is no
    current device to switch."""

    def type_(self) -> object:
        return torch._C._autograd.DeviceType.PrivateUse1


def _missing(op: torch._ops.OpOverload, *args: object, **kwargs: object) -> None:
    raise NotImplementedError(
        f"the pykern device has no implementation of the ATen operator {op_name(op)} "
        "(nothing runs it on the CPU instead; see docs/pytorch.md, 'Coverage')")


def op_name(op: torch._ops.OpOverload) -> str:
    """ATen's name of an overload: "aten::add.Tensor", "aten::relu"."""
    overload = op._schema.overload_name
    return op._schema.name + ("." + overload if overload else "")


def _operand_device(args: tuple, kwargs: dict) -> torch.device | None:
    """The device of the first "pykern" tensor among an operator's arguments (lists of
    tensors included), else its `device=` argument."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            if value.device.type == devices.NAME:
                return value.device
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, torch.Tensor) and item.device.type == devices.NAME:
                    return item.device
    device = kwargs.get("device")
    return torch.device(device) if device is not None else None


def on_operands_device(impl: Callable[..., object], overload: str) -> Callable[..., object]:
    """`impl` run with pykern's op device set to its operands' device, so that the pykern
    tensors it creates (constants, ranges, results) are made there. A dtype a pykern op
    refuses becomes the NotImplementedError of an unsupported operator."""
    def kernel(*args: object, **kwargs: object) -> object:
        device = _operand_device(args, kwargs)
        target = devices.pk_device_of_index(device.index or 0) if device is not None else None
        try:
            if target is None or target is pk.get_device():
                return impl(*args, **kwargs)
            with running_on(target):
                return impl(*args, **kwargs)
        except TypeError as e:
            if "dtype" in str(e) and "support" in str(e):
                raise NotImplementedError(f"the pykern device has no aten::{overload} for "
                                          f"these dtypes: {e}") from e
            raise
    kernel.__name__ = getattr(impl, "__name__", "kernel")
    return kernel


def register() -> None:
    """Registers the device (once per process)."""
    if _LIBRARIES:
        return
    if torch._C._get_privateuse1_backend_name() not in ("privateuseone", devices.NAME):
        raise RuntimeError(f"another backend ({torch._C._get_privateuse1_backend_name()!r}) "
                           "holds PyTorch's PrivateUse1 device slot: pykern cannot register")
    _setup_privateuseone_for_python_backend(devices.NAME, device_module, _Hooks(), _Guard())
    lib = torch.library.Library("aten", "IMPL")
    for entry in TABLE:
        lib.impl(entry.overload, on_operands_device(entry.impl, entry.overload), entry.key)
    fallback = torch.library.Library("_", "IMPL")
    fallback.fallback(_missing, dispatch_key="PrivateUse1")
    _LIBRARIES.extend([lib, fallback, *autocast.register(), *pinning.register()])
    serialization.register()
    dlpack.install()
    # Module.to() keeps a parameter object (and so weights tied between modules) only where
    # PyTorch finds the old and new tensor types "compatible", a check that leaves out every
    # PrivateUse1 device; its swap mode (the announced future default) keeps them everywhere.
    torch.__future__.set_swap_module_params_on_conversion(True)
