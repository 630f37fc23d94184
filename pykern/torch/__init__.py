"""PyTorch programs on pykern: `import pykern.torch` makes "pykern" a PyTorch device.

    import torch
    import pykern.torch

    model = MyModel().to("pykern")           # any torch.nn.Module
    x = torch.randn(32, 784, device="pykern")
    loss = model(x).sum(); loss.backward()    # PyTorch's autograd, pykern's kernels

"pykern" is "pykern:0", pykern's current device (PyTorch gives an index-less device index 0);
the others are "pykern:1", ... in the order of `pk.devices()`, so "pykern:N" is
`pk.devices()[N]` where pykern's choice is `pk.devices()[0]` (docs/pytorch.md, Devices). Every
ATen operator on "pykern" tensors runs as pykern ops (see `pykern.torch.table`); one without a
pykern implementation raises NotImplementedError naming it. `to_pk(t)` and `from_pk(p)` share
memory between "pykern" torch tensors and `pk.Tensor`s. docs/pytorch.md tells the rest.
"""

from __future__ import annotations

try:
    import torch as _torch
except ImportError as _e:  # pragma: no cover - depends on the environment
    raise ImportError("pykern.torch needs PyTorch: pip install 'pykern-vulkan[torch]'") from _e

if not hasattr(_torch._C, "_acc"):  # pragma: no cover
    raise ImportError(f"pykern.torch needs PyTorch 2.13 or newer (this is {_torch.__version__})")

from pykern.torch.memory import from_pk, to_pk
from pykern.torch.registration import register as _register

_register()

__all__ = ["from_pk", "to_pk"]
