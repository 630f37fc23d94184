"""`pykern.distributed`: data-parallel training on MPI, with torch.distributed's names.

    import pykern as pk
    import pykern.distributed as dist          # started as: mpirun -n 4 python train.py

    dist.init_process_group(backend="mpi")     # one process per device
    model = pk.nn.parallel.DistributedDataParallel(model)
    ...                                         # gradients averaged during backward()

The transport is MPI through mpi4py (`pip install 'pykern-vulkan[distributed]'`): the same
program runs on one machine or a cluster, as the MPI launcher starts it. Importing this module
needs neither: `init_process_group` does. Every wait has a deadline (PYKERN_TIMEOUT): a peer
that dies or a collective that cannot complete raises `pk.DistributedError`, never a hang.
See docs/distributed.md.
"""

from pykern.distributed.collectives import (all_gather, all_gather_into_tensor, all_reduce,
                                            barrier, broadcast, reduce_scatter,
                                            reduce_scatter_tensor)
from pykern.distributed.group import (ProcessGroup, destroy_process_group, get_local_rank,
                                      get_local_world_size, get_rank, get_world_size,
                                      init_process_group, is_available, is_initialized)
from pykern.distributed.reduce_op import ReduceOp
from pykern.errors import DistributedError

__all__ = ["DistributedError", "ProcessGroup", "ReduceOp", "all_gather",
           "all_gather_into_tensor", "all_reduce", "barrier", "broadcast",
           "destroy_process_group", "get_local_rank", "get_local_world_size", "get_rank",
           "get_world_size", "init_process_group", "is_available", "is_initialized",
           "reduce_scatter", "reduce_scatter_tensor"]
