"""`pk.optim`: optimizers that update all parameters of a dtype in one kernel launch.

    opt = pk.optim.AdamW(model.parameters(), lr=1e-3)
    opt.zero_grad(); loss.backward(); opt.step()

The design, in three parts: at construction the parameters of each dtype are moved into one
flat buffer (`flat.FlatStore`: each parameter is re-pointed at its segment, padded to a
64-element chunk), with flat state buffers beside it; before a step the per-tensor gradients
are copied into a flat gradient buffer (one copy each, none for a gradient that already is
its segment); the step is one kernel over the flat buffers (`kernels`, with the optimizer's
update rule from `rules`), where each element finds its parameter through a chunk table and
reads that parameter's hyperparameters, step size and skip flag (grad None) from a
per-parameter row computed on the host.

`lr_scheduler` sets the groups' learning rates between steps.
"""

from __future__ import annotations

from pykern.optim import lr_scheduler
from pykern.optim.adadelta import Adadelta
from pykern.optim.adagrad import Adagrad
from pykern.optim.adam import Adam, AdamW
from pykern.optim.optimizer import Optimizer
from pykern.optim.rmsprop import RMSprop
from pykern.optim.sgd import SGD

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD",
           "lr_scheduler"]
