"""DLPack for "pykern" tensors: PyTorch's own `__dlpack__` knows no PrivateUse1 device, so a
"pykern" tensor answers with its `pk.Tensor`'s capsule, which holds host memory (the tensor's
own memory on pykern's host device, a host copy on a Vulkan device, as `pk.Tensor.__dlpack__`
says). `torch.from_dlpack(t)`, `np.from_dlpack(t)` and `pk.from_dlpack(t)` then work; the
zero-copy exchange with device memory is `to_pk` / `from_pk`."""

from __future__ import annotations

from typing import Any

import torch

from pykern.torch.memory import is_pykern, to_pk

_TORCH_DLPACK = torch.Tensor.__dlpack__
_TORCH_DLPACK_DEVICE = torch.Tensor.__dlpack_device__


def _dlpack(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    if is_pykern(self):
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use "
                               "tensor.detach()")
        return to_pk(self).__dlpack__(*args, **kwargs)
    return _TORCH_DLPACK(self, *args, **kwargs)


def _dlpack_device(self: torch.Tensor) -> Any:
    if is_pykern(self):
        return to_pk(self).__dlpack_device__()
    return _TORCH_DLPACK_DEVICE(self)


def install() -> None:
    """Makes "pykern" tensors exporters of DLPack capsules."""
    torch.Tensor.__dlpack__ = _dlpack  # type: ignore[method-assign]
    torch.Tensor.__dlpack_device__ = _dlpack_device  # type: ignore[method-assign]
