"""`pk.optim`: optimizers that update all parameters of a dtype in one kernel launch.

    opt = pk.optim.AdamW(model.parameters(), lr=1e-3)
    opt.zero_grad(); loss.backward(); opt.step()
"""

from __future__ import annotations

from pykern.optim.adamw import AdamW
from pykern.optim.optimizer import Optimizer
from pykern.optim.sgd import SGD

__all__ = ["AdamW", "Optimizer", "SGD"]
