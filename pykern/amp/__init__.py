"""`pk.amp`: mixed precision, as `torch.amp`: `autocast` (also `pk.autocast`) and
`GradScaler`, the loss scaling that keeps f16 gradients from underflowing.

    scaler = pk.amp.GradScaler()
    with pk.autocast(dtype=pk.f16):
        loss = loss_fn(model(x), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)       # unscales the gradients; skips the step if one is inf or NaN
    scaler.update()        # halves the scale after a skipped step, doubles it after 2000 good ones
"""

from pykern.amp.grad_scaler import GradScaler
from pykern.tensor.core.autocast import autocast

__all__ = ["GradScaler", "autocast"]
