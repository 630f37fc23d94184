"""The command line: `python -m benchmarks [--json PATH] [--quick] [--only GROUPS]
[--write-docs [PATH]]`, and `python -m benchmarks tune [--quick] [--out DIR]` (the per-device
tuning sweep, benchmarks/tune.py).

The environment is set before pykern is imported: a fresh temporary PYKERN_CACHE_DIR (so that
"cold" means cold, and the developer's cache is left alone) and no validation layer.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from .ops_docs import DOCS
from .results import Results

BENCHMARKS = ("elementwise", "launch", "dispatch", "transfer", "compile", "memory", "ops",
              "train", "host", "graph", "fusion", "linalg", "linalg_spectral", "fft",
              "distributed", "torchdev")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--only", default=",".join(BENCHMARKS),
                        help=f"comma-separated subset of {','.join(BENCHMARKS)}")
    parser.add_argument("--ops-groups", default="", metavar="GROUPS",
                        help="the ops benchmark's groups to run, comma-separated (matmul, "
                             "attention, conv2d, ...; default: all)")
    parser.add_argument("--no-peers", action="store_true", help="numpy only, no torch/Taichi")
    parser.add_argument("--write-docs", type=Path, nargs="?", const=DOCS, metavar="PATH",
                        help="write the ops table into docs/performance.md (or PATH) between "
                             "its markers")
    parser.add_argument("--ops-peer-device", metavar="DEVICE",
                        help="the torch device the ops benchmark compares with (default: "
                             "cuda where there is one); `cpu` tries the torch code path "
                             "without a GPU")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["tune"]:  # the tuning sweep: benchmarks/tune.py
        from . import tune

        return tune.main(argv[1:])
    args = parse(argv)
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = set(only) - set(BENCHMARKS)
    if unknown:
        print(f"unknown benchmark(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if args.write_docs is not None and "ops" not in only:
        print("--write-docs writes the ops table: run the ops benchmark too", file=sys.stderr)
        return 2
    cache_dir = tempfile.mkdtemp(prefix="pykern-bench-cache-")
    os.environ["PYKERN_CACHE_DIR"] = cache_dir
    os.environ["PYKERN_VALIDATE"] = "0"
    try:
        return _run(args, only)
    finally:
        runtime = sys.modules.get("pykern.runtime")
        if runtime is not None:
            runtime.shutdown()  # saves the pipeline cache into cache_dir before it goes
        shutil.rmtree(cache_dir, ignore_errors=True)


def _run(args: argparse.Namespace, only: list[str]) -> int:
    import pykern as pk

    from . import (compile_latency, dispatch, distributed, elementwise, fft, fusion, graph,
                   host, launch_overhead, linalg, linalg_spectral, memory_cycles, ops,
                   torch_device, training, transfer)
    from .ops_docs import write_docs
    from .ops_table import ops_table
    from .peers import find_peers
    from .plan import plan_for

    started = time.perf_counter()
    dev = pk.get_device()
    info = dev.info
    plan = plan_for(info.kind, args.quick)
    print(f"device: {info.name} ({info.kind}, {info.driver})", flush=True)
    print(f"plan: {plan}", flush=True)
    peers = find_peers(want_taichi=not args.no_peers, want_torch=not args.no_peers)
    if args.ops_peer_device is not None and peers.torch is not None:
        peers.ops_device = args.ops_peer_device
    results = Results(notes=list(peers.notes))
    print(f"peers: {', '.join(f'{k} {v}' for k, v in peers.versions.items())}", flush=True)
    modules = {"elementwise": elementwise, "launch": launch_overhead, "dispatch": dispatch,
               "transfer": transfer,
               "compile": compile_latency, "memory": memory_cycles, "ops": ops,
               "train": training, "host": host, "graph": graph, "fusion": fusion,
               "linalg": linalg, "linalg_spectral": linalg_spectral, "fft": fft,
               "distributed": distributed, "torchdev": torch_device}
    ops.ONLY_GROUPS = {g.strip() for g in args.ops_groups.split(",") if g.strip()}
    seconds: dict[str, float] = {}
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([os.path.basename(sys.executable), "-m", "benchmarks",
                             *sys.argv[1:]]),
        "host": {"platform": platform.platform(), "python": platform.python_version(),
                 "cpus": os.cpu_count()},
        "device": {"name": info.name, "kind": info.kind, "driver": info.driver,
                   "api_version": ".".join(map(str, info.api_version)),
                   "vendor_id": info.vendor_id, "device_id": info.device_id,
                   "timestamp_period_ns": info.limits.timestamp_period},
        "plan": plan.as_dict(),
        "versions": {"pykern": pk.__version__, **peers.versions},
        "ops_peer": (f"torch {peers.versions['torch']} on {peers.ops_device}"
                     + (f" ({peers.versions['cuda device']})" if peers.ops_device == "cuda"
                        else "")) if peers.ops_device else None,
        "seconds": seconds,
    }
    for name in only:
        print(f"\n== {name}", flush=True)
        start = time.perf_counter()
        try:
            modules[name].run(plan, results, peers)
        except Exception as e:  # noqa: BLE001 - one benchmark failing must not lose the others
            traceback.print_exc()
            results.note(f"benchmark {name} failed: {type(e).__name__}: {e}")
        seconds[name] = time.perf_counter() - start
        print(f"   ({seconds[name]:.1f} s)", flush=True)
        if args.json is not None:  # after each benchmark: a run cut short keeps what it has
            results.save(args.json, meta)
    print("\n" + results.table())
    seconds["total"] = time.perf_counter() - started
    print(f"\ntotal {seconds['total']:.0f} s "
          f"({', '.join(f'{k} {v:.0f} s' for k, v in seconds.items() if k != 'total')})")
    if args.json is not None:
        results.save(args.json, meta)
        print(f"wrote {args.json}")
    if args.write_docs is not None:
        write_docs(args.write_docs, ops_table(results), meta)
        print(f"wrote the ops table into {args.write_docs}")
    return exit_code(results)


def exit_code(results: Results) -> int:
    """1 (after listing them) if a benchmark reported a wrong or failed result, else 0."""
    failures = results.failures
    if not failures:
        return 0
    print(f"\n{len(failures)} wrong or failed result(s):", file=sys.stderr)
    for text in failures:
        print(f"  {text}", file=sys.stderr)
    return 1
