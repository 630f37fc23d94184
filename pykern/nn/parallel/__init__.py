"""`pk.nn.parallel`: `DistributedDataParallel`, data-parallel training across processes.

It belongs to the distributed layer (pykern/distributed, which it imports): `pk.nn` loads
this module only when `pk.nn.parallel` is first used.
"""

from pykern.distributed.ddp import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
