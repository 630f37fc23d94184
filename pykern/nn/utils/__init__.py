"""`pk.nn.utils`: helpers around training, as `torch.nn.utils`.

    loss.backward()
    pk.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
"""

from __future__ import annotations

from pykern.nn.utils.clip_grad import clip_grad_norm_

__all__ = ["clip_grad_norm_"]
