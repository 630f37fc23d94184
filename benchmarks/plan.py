"""How big and how long each benchmark runs, chosen by the device.

On a GPU: elementwise over 2^26 and 2^28 f32 elements, as the anchor figures of the H200 were
measured. On lavapipe (Vulkan on the CPU, two cores here) everything is scaled down so that
`make bench` stays under five minutes, peers included.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .host_plan import HOST_FULL, HOST_QUICK, HostPlan
from .ops_plan import CPU_OPS, GPU_OPS, QUICK_OPS, OpsPlan
from .training_cases import CPU_TRAINING, GPU_TRAINING, QUICK_TRAINING, TrainCase


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...]  # elements of the elementwise benchmarks
    reps: tuple[int, ...]  # launches timed per size (after one warm-up launch)
    grid_stride_invocations: int  # the grid of add_grid_stride
    launches: int  # queued launches timed by the launch-overhead benchmark
    round_trips: int  # synchronous launches timed
    transfer_bytes: int
    transfer_reps: int
    compile_kernels: int  # distinct new kernels compiled cold (and then warm)
    memory_cycles: int  # create/free cycles of 1 MiB buffers
    peer_memory_cycles: int  # the same for each peer (they only give the scale)
    ops: OpsPlan  # the sizes of the `ops` benchmark (benchmarks/ops_plan.py)
    training: tuple[tuple[TrainCase, ...], int]  # the `train` cases and the steps timed
    host: HostPlan  # the sizes of the `host` benchmark (benchmarks/host_plan.py)
    fusion: tuple[tuple[int, int], ...] = ()  # (elements, calls timed) of `fusion`
    # `distributed`: f32 elements all-reduced, and DDP training steps timed per job
    distributed_sizes: tuple[int, ...] = (2**12, 2**16, 2**20, 2**22, 2**24)
    distributed_steps: int = 20

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


GPU = Plan(
    sizes=(2**26, 2**28),
    reps=(50, 20),
    grid_stride_invocations=2**20,
    launches=20_000,
    round_trips=2_000,
    transfer_bytes=2**30,
    transfer_reps=5,
    compile_kernels=5,
    memory_cycles=100_000,
    peer_memory_cycles=20_000,
    ops=GPU_OPS,
    training=(GPU_TRAINING, 10),
    host=HOST_FULL,
    fusion=((2**24, 50), (2**26, 30), (2**28, 20)),
)

CPU = Plan(
    # Taichi dispatches 128 invocations per workgroup and does not split a dispatch: past
    # 65,535 * 128 elements it fails on lavapipe, so 2^22 is the largest size it runs here
    sizes=(2**20, 2**22, 2**24),
    reps=(10, 8, 5),
    # lavapipe runs at most 65,535 loop iterations per invocation: 2^24 / 2^14 = 1024
    grid_stride_invocations=2**14,
    launches=5_000,
    round_trips=500,
    transfer_bytes=16 * 2**20,
    transfer_reps=5,
    compile_kernels=3,
    memory_cycles=100_000,
    peer_memory_cycles=20_000,
    ops=CPU_OPS,
    training=(CPU_TRAINING, 5),
    host=HOST_FULL,
    fusion=((2**20, 10), (2**22, 5)),
)

QUICK = Plan(
    sizes=(2**16,),
    reps=(3,),
    grid_stride_invocations=2**12,
    launches=500,
    round_trips=50,
    transfer_bytes=2**20,
    transfer_reps=2,
    compile_kernels=1,
    memory_cycles=2_000,
    peer_memory_cycles=500,
    ops=QUICK_OPS,
    training=(QUICK_TRAINING, 2),
    host=HOST_QUICK,
    fusion=((2**16, 3),),
    distributed_sizes=(2**10, 2**16),
    distributed_steps=3,
)


def plan_for(kind: str, quick: bool = False) -> Plan:
    """The plan for a device of `kind` ('discrete', 'cpu', 'host', ...); `quick` for a smoke
    run. The host device is a CPU too: it gets lavapipe's sizes."""
    if quick:
        return QUICK
    return CPU if kind in ("cpu", "host") else GPU
