"""Measures how much of PyTorch runs on the "pykern" device: every entry of PyTorch's OpInfo
database (`op_db`) is run on its sample inputs on "pykern" and on the CPU, and the results are
compared.

    python tools/torch_opinfo.py                      # every op, the five dtypes, gradients
    python tools/torch_opinfo.py --ops add,sum,nn.functional.conv2d -v
    python tools/torch_opinfo.py --shard 0/4 --json part0.json     # a quarter of the ops
    python tools/torch_opinfo.py --merge part*.json                # the summary of the parts

For each op and dtype (float32, float16, bfloat16, int64, bool, where the op supports it on the
CPU) a sample is "pass" when every output matches the CPU's (shape, dtype and values within the
tolerance below), "wrong" when an output differs, "unsupported" when pykern raises
NotImplementedError (an ATen operator without a pykern implementation), "error" for any other
exception. A sample that the CPU itself rejects is not counted. An op passes a dtype when all
its samples pass. One gradient check per differentiable op: the first float64 sample (float32
on a device without float64) whose differentiable inputs have 4 elements or more, its outputs
reduced with fixed random weights and differentiated on both devices, every input gradient
compared.

Tolerances: exact for integers and bool; for floats rtol/atol of 1e-4/1e-5 (float32, complex64),
1e-7/1e-7 (float64), 1e-3/1e-3 (float16), 1.6e-2/1e-2 (bfloat16) — the float32 bound is what
a different summation order or a few ULP of a transcendental function give (PyTorch's own
CPU-vs-GPU comparison, test_compare_cpu, uses 1e-3 for every dtype). For 16-bit floats the
absolute bound is at least 2 epsilons of the dtype times the output's largest magnitude: PyTorch's
CPU kernels round intermediate results to the 16-bit type at some steps and not at others, so
where a result cancels (a small difference of large terms) any two orders of rounding differ
by that much. A 16-bit output that differs from the CPU's by more still passes where, element
by element, it is no farther (plus the tolerance) from the op's result on the inputs widened to
float64, rounded to the 16-bit type, than the CPU's 16-bit result is (where the CPU gave NaN
for a number: within the tolerance of that number): the CPU's kernel rounded or overflowed
where pykern did not, and pykern's value is the more accurate one. Operators whose result is
only defined up to an ordering of ties (sort, topk, kthvalue, mode, median) are compared by
their values and by the values their indices select. Random operators are seeded identically
on both sides (pykern draws PyTorch's CPU random stream). Outputs of `empty`-like operators
are compared by shape and dtype only.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import torch
from torch.utils._pytree import tree_flatten, tree_map

import pykern.torch  # noqa: F401  (registers the device)

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "int64": torch.int64, "bool": torch.bool}
TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.complex64: (1e-4, 1e-5),
              torch.float64: (1e-7, 1e-7), torch.complex128: (1e-7, 1e-7),
              torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}
UNINITIALISED = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
                 "new_empty_strided", "resize_", "resize_as_"}
TIES = {"sort", "argsort", "topk", "kthvalue", "mode", "median", "nanmedian", "msort",
        "max.reduction_with_dim", "min.reduction_with_dim", "cummax", "cummin"}
# 16-bit floats: also within this many epsilons of the output's largest magnitude, what two
# implementations that round intermediate results at different steps differ by
LOW_PRECISION_STEPS = 2
MAX_SAMPLES = 40
check_grad_mode = [False]  # gradients are compared after their move to the CPU
GRAD_FLOAT64 = [True]  # cleared where the device has no float64
DEVICE = "pykern"


class Timeout(Exception):
    """An op ran past its time limit."""


def _alarm(signum: int, frame: object) -> None:
    raise Timeout()


def to_device(x: object) -> object:
    """Tensors moved to "pykern" (with their requires_grad), the CPU device named as an
    argument (`device="cpu"` of a factory) replaced by "pykern", the rest as is."""
    def move(t: object) -> object:
        if isinstance(t, torch.device) and t.type == "cpu" or t == "cpu":
            return torch.device(DEVICE)
        if isinstance(t, torch.Tensor):
            m = _same_layout(t.detach())
            return m.requires_grad_(t.requires_grad) if t.is_floating_point() or \
                t.is_complex() else m
        return t
    return tree_map(move, x)


def _same_layout(t: torch.Tensor) -> torch.Tensor:
    """t on the device with its whole storage, strides and offset (a partial view stays a
    view of its whole storage, as sample inputs of as_strided need)."""
    if t.device.type != "cpu" or t.is_conj() or t.is_neg() or t.layout != torch.strided:
        return t.to(DEVICE)
    raw = torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage())
    dev = raw.to(DEVICE)
    return torch.empty(0, dtype=t.dtype, device=DEVICE).set_(
        dev.untyped_storage(), t.storage_offset(), t.size(), t.stride())


def to_cpu(x: object) -> object:
    return tree_map(lambda t: t.detach().cpu() if isinstance(t, torch.Tensor) else t, x)


def close(actual: object, expected: object, op_name: str, sample: object) -> str | None:
    """None when the outputs match, else a short reason."""
    a_leaves, a_spec = tree_flatten(actual)
    e_leaves, e_spec = tree_flatten(expected)
    if len(a_leaves) != len(e_leaves):
        return f"{len(a_leaves)} outputs, expected {len(e_leaves)}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        reason = _close_leaf(a, e, op_name)
        if reason is not None:
            if op_name in TIES and _tie_equivalent(a_leaves, e_leaves, sample):
                return None
            return f"output {i}: {reason}"
    return None


def _close_leaf(a: object, e: object, op_name: str) -> str | None:
    if isinstance(e, torch.Tensor):
        if not isinstance(a, torch.Tensor):
            return f"got {type(a).__name__}, expected a tensor"
        if a.device.type != DEVICE and not check_grad_mode[0]:
            return f"on {a.device}, expected {DEVICE}"
        a = a.cpu()
        if a.shape != e.shape:
            return f"shape {tuple(a.shape)}, expected {tuple(e.shape)}"
        if a.dtype != e.dtype:
            return f"dtype {a.dtype}, expected {e.dtype}"
        if op_name in UNINITIALISED:
            return None
        rtol, atol = TOLERANCES.get(e.dtype, (0, 0))
        if e.dtype in (torch.float16, torch.bfloat16) and e.numel():
            finite = e[e.isfinite()].float()
            scale = finite.abs().max().item() if finite.numel() else 0.0
            atol = max(atol, LOW_PRECISION_STEPS * torch.finfo(e.dtype).eps * scale)
        try:
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True,
                                       check_device=False, check_stride=False)
        except AssertionError as err:
            return " ".join(str(err).split())[:300]
        return None
    if isinstance(e, (int, float, complex, bool)) and isinstance(a, (int, float, complex, bool)):
        if e != e and a != a:
            return None
        return None if abs(a - e) <= 1e-5 * max(1.0, abs(e)) else f"{a} != {e}"
    return None if a == e else f"{a!r} != {e!r}"


def _tie_equivalent(actual: list, expected: list, sample: object) -> bool:
    """Whether (values, indices) outputs agree up to the order of equal values: the values
    match and each index selects a value equal to the one the CPU's index selects."""
    tensors_a = [t for t in actual if isinstance(t, torch.Tensor)]
    tensors_e = [t for t in expected if isinstance(t, torch.Tensor)]
    inp = sample.input if isinstance(sample.input, torch.Tensor) else None  # type: ignore
    if inp is None or len(tensors_a) != len(tensors_e) or not tensors_e:
        return False
    *values, (a_idx, e_idx) = list(zip(tensors_a, tensors_e))
    if any(_close_leaf(a, e, "") is not None for a, e in values):
        return False
    a_idx = a_idx.cpu()
    if e_idx.dtype != torch.int64 or e_idx.shape != a_idx.shape:
        return False
    return any(_selects_same(inp, d, a_idx, e_idx) for d in range(max(inp.dim(), 1)))


def _selects_same(inp: torch.Tensor, dim: int, a: torch.Tensor, e: torch.Tensor) -> bool:
    """Whether indices a and e pick equal values of inp along dim (NaN equal to NaN)."""
    try:
        src = inp.detach().reshape(1) if inp.dim() == 0 else inp.detach()
        if a.dim() == src.dim() - 1:
            a, e = a.unsqueeze(dim), e.unsqueeze(dim)
        elif a.dim() != src.dim():
            return False
        va, ve = src.gather(dim, a), src.gather(dim, e)
        return bool(((va == ve) | (va.isnan() & ve.isnan())).all())
    except (RuntimeError, IndexError):
        return False


def run_sample(op: object, sample: object, name: str) -> tuple[str, str]:
    """(status, reason) of one sample."""
    args = (sample.input, *sample.args)  # type: ignore[attr-defined]
    kwargs = sample.kwargs  # type: ignore[attr-defined]
    try:
        torch.manual_seed(1234)
        expected = op(*args, **kwargs)  # type: ignore[operator]
        expected = sample.output_process_fn_grad(expected)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - the CPU rejects this sample: not counted
        return "skip", ""
    if not _reaches_device(args, kwargs):
        return "skip", ""  # a factory call without a device: nothing runs on pykern
    try:
        actual = _run_on_device(op, sample, args, kwargs)
    except NotImplementedError as e:
        return "unsupported", _first_line(e)
    except Timeout:
        raise
    except Exception as e:  # noqa: BLE001
        return "error", f"{type(e).__name__}: {_first_line(e)}"
    try:
        reason = close(actual, to_cpu(expected), name, sample)
    except NotImplementedError as e:
        return "unsupported", _first_line(e)
    except Exception as e:  # noqa: BLE001 - reading the result back failed
        return "error", f"{type(e).__name__}: {_first_line(e)}"
    if reason is not None and _closer_than_cpu(op, args, kwargs, actual, expected, sample):
        reason = None
    return ("pass", "") if reason is None else ("wrong", reason)


def _closer_than_cpu(op: object, args: tuple, kwargs: dict, actual: object, expected: object,
                     sample: object) -> bool:
    """Whether 16-bit float outputs that differ from the CPU's are, element by element, no
    farther from the op's float64 result than the CPU's own 16-bit result is (plus the
    tolerance): the CPU's kernel rounded to the 16-bit type where pykern did not."""
    a_leaves, e_leaves = tree_flatten(actual)[0], tree_flatten(to_cpu(expected))[0]
    if not any(isinstance(e, torch.Tensor) and e.dtype in (torch.float16, torch.bfloat16)
               for e in e_leaves):
        return False
    def wide(t: object) -> object:
        return t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t
    try:
        torch.manual_seed(1234)
        reference = op(*tree_map(wide, args), **tree_map(wide, kwargs))  # type: ignore
        r_leaves = tree_flatten(to_cpu(sample.output_process_fn_grad(reference)))[0]  # type: ignore
    except Exception:  # noqa: BLE001 - no float64 result to judge by
        return False
    if not len(a_leaves) == len(e_leaves) == len(r_leaves):
        return False
    for a, e, r in zip(a_leaves, e_leaves, r_leaves):
        if _close_leaf(a, e, "") is None:
            continue
        if not (isinstance(e, torch.Tensor) and e.dtype in (torch.float16, torch.bfloat16)
                and isinstance(r, torch.Tensor) and r.shape == e.shape):
            return False
        rtol, atol = TOLERANCES[e.dtype]
        # the float64 result rounded to the dtype (a number beyond its range is infinite)
        a64, e64, r64 = a.cpu().double(), e.double(), r.to(e.dtype).double()
        bound = (e64 - r64).abs() + atol + rtol * r64.abs()
        # where the CPU's 16-bit kernel gave NaN for a number: within the tolerance of it
        own = atol + (rtol + LOW_PRECISION_STEPS * torch.finfo(e.dtype).eps) * r64.abs()
        bound = torch.where(e64.isnan() & ~r64.isnan(), own, bound)
        ok = ((a64 - r64).abs() <= bound) | (a64.isnan() & r64.isnan()) | (a64 == e64) | \
            (a64 == r64)
        if not bool(ok.all()):
            return False
    return True


def _run_on_device(op: object, sample: object, args: tuple, kwargs: dict) -> object:
    """The op on the sample moved to the device; where PyTorch wants an argument on the CPU
    (tensor_split's sections, say), again with only the input moved."""
    try:
        dev_args, dev_kwargs = to_device(args), to_device(kwargs)
        torch.manual_seed(1234)
        actual = op(*dev_args, **dev_kwargs)  # type: ignore[operator]
    except NotImplementedError:
        raise
    except RuntimeError as e:
        if "on cpu" not in str(e) and "CPU" not in str(e):
            raise
        torch.manual_seed(1234)
        actual = op(to_device(args[0]), *args[1:], **kwargs)  # type: ignore[operator]
    return sample.output_process_fn_grad(actual)  # type: ignore[attr-defined]


def _reaches_device(args: object, kwargs: object) -> bool:
    leaves = tree_flatten((args, kwargs))[0]
    return any(isinstance(t, torch.Tensor) for t in leaves) or "device" in kwargs  # type: ignore


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else type(e).__name__


def check_dtype(op: object, dtype: torch.dtype, name: str, verbose: bool) -> dict:
    """The op's status on one dtype, with counts and the first reasons."""
    counts: Counter = Counter()
    reasons: list[str] = []
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))  # type: ignore
    except Exception as e:  # noqa: BLE001
        return {"status": "skip", "why": f"no samples: {_first_line(e)}"}
    for sample in samples[:MAX_SAMPLES]:
        status, reason = run_sample(op, sample, name)
        counts[status] += 1
        if reason and len(reasons) < 3:
            reasons.append(f"{status}: {reason}")
        if verbose and status not in ("pass", "skip"):
            print(f"    {name} {dtype}: {status}: {reason}", flush=True)
    counted = sum(v for k, v in counts.items() if k != "skip")
    if counted == 0:
        status = "skip"
    elif counts["wrong"]:
        status = "wrong"
    elif counts["error"]:
        status = "error"
    elif counts["unsupported"]:
        status = "unsupported"
    else:
        status = "pass"
    return {"status": status, "counts": dict(counts), "reasons": reasons}


def check_grad(op: object, name: str, count: int = 1) -> dict:
    """Gradient checks on `count` samples with inputs that require grad: float64 where
    the op and the device have it (as PyTorch's gradcheck), so that the check measures the
    backward formulas and not the float32 rounding of an ill-conditioned sample; else
    float32. The first check that does not pass gives the status."""
    supported = op.supported_dtypes("cpu")  # type: ignore[attr-defined]
    dtype = torch.float64 if torch.float64 in supported and GRAD_FLOAT64[0] else torch.float32
    if not getattr(op, "supports_autograd", False) or dtype not in supported:
        return {"status": "skip"}
    try:
        samples = _telling(op.sample_inputs("cpu", dtype, requires_grad=True),  # type: ignore
                           count)
    except Exception:  # noqa: BLE001
        return {"status": "skip"}
    result: dict = {"status": "skip"}
    for sample in samples:
        result = _check_grad_sample(op, sample, name)
        if result["status"] not in ("pass", "skip"):
            return result
    return result


def _check_grad_sample(op: object, sample: object, name: str) -> dict:
    try:
        inputs = [t for t in tree_flatten((sample.input, sample.args, sample.kwargs))[0]
                  if isinstance(t, torch.Tensor) and t.requires_grad]
        expected = _grads(op, sample.input, sample.args, sample.kwargs, inputs,  # type: ignore
                          sample)
    except Exception:  # noqa: BLE001
        return {"status": "skip"}
    try:
        try:
            actual = _device_grads(op, sample, to_device((sample.input, sample.args,
                                                          sample.kwargs)))
        except NotImplementedError:
            raise
        except RuntimeError as e:  # an argument PyTorch wants on the CPU: only the input moved
            if "on cpu" not in str(e) and "CPU" not in str(e):
                raise
            actual = _device_grads(op, sample, (to_device(sample.input), sample.args,
                                                sample.kwargs))
    except NotImplementedError as e:
        return {"status": "unsupported", "why": _first_line(e)}
    except Exception as e:  # noqa: BLE001
        return {"status": "error", "why": f"{type(e).__name__}: {_first_line(e)}"}
    check_grad_mode[0] = True
    try:
        return _compare_grads(actual, expected, name)
    finally:
        check_grad_mode[0] = False


def _telling(samples: object, count: int) -> list:
    """The first `count` samples whose differentiable inputs all have 4 elements or more (a
    scalar or 1 × 1 sample tells little about a backward formula), else the first sample."""
    first, chosen = None, []
    for i, sample in enumerate(samples):  # type: ignore[attr-defined]
        first = sample if first is None else first
        leaves = [t for t in tree_flatten((sample.input, sample.args, sample.kwargs))[0]
                  if isinstance(t, torch.Tensor) and t.requires_grad]
        if leaves and all(t.numel() >= 4 for t in leaves):
            chosen.append(sample)
        if len(chosen) >= count or i >= MAX_SAMPLES:
            break
    if not chosen and first is None:
        raise StopIteration
    return chosen or [first]


def _device_grads(op: object, sample: object, dev: tuple) -> list:
    dev_inputs = [t for t in tree_flatten(dev)[0]
                  if isinstance(t, torch.Tensor) and t.requires_grad]
    return [g.cpu() if g is not None else None
            for g in _grads(op, dev[0], dev[1], dev[2], dev_inputs, sample)]


def _compare_grads(actual: list, expected: list, name: str) -> dict:
    for a, e in zip(actual, expected):
        if (a is None) != (e is None):
            return {"status": "wrong", "why": "a gradient is missing on one side"}
        if e is not None:
            reason = _close_leaf(a, e, name)
            if reason is not None:
                return {"status": "wrong", "why": reason}
    return {"status": "pass"}


def _grads(op: object, inp: object, args: object, kwargs: object, inputs: list,
           sample: object) -> list:
    torch.manual_seed(1234)
    out = op(inp, *args, **kwargs)  # type: ignore[operator]
    out = sample.output_process_fn_grad(out)  # type: ignore[attr-defined]
    leaves = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and
              t.requires_grad]
    gen = torch.Generator().manual_seed(7)
    total = sum((t * torch.rand(t.shape, generator=gen, dtype=t.dtype).to(t.device)).sum()
                for t in leaves)
    return list(torch.autograd.grad(total, inputs, allow_unused=True))


def op_label(op: object) -> str:
    variant = op.variant_test_name  # type: ignore[attr-defined]
    return op.name + (f".{variant}" if variant else "")  # type: ignore[attr-defined]


def run(ops: list, dtypes: list[str], grad: bool, verbose: bool, timeout: int,
        grad_samples: int = 1) -> dict:
    """Every op's results: {name: {dtype: result, "grad": result}}."""
    signal.signal(signal.SIGALRM, _alarm)
    results: dict = {}
    for op in ops:
        name = op_label(op)
        start = time.perf_counter()
        entry: dict = {}
        for dname in dtypes:
            dtype = DTYPES[dname]
            if dtype not in op.supported_dtypes("cpu"):
                continue
            signal.alarm(timeout)
            try:
                entry[dname] = check_dtype(op, dtype, name, verbose)
            except Timeout:
                entry[dname] = {"status": "error", "reasons": [f"timeout after {timeout} s"]}
            finally:
                signal.alarm(0)
        if grad:
            signal.alarm(timeout)
            try:
                entry["grad"] = check_grad(op, name, grad_samples)
            except Timeout:
                entry["grad"] = {"status": "error", "why": f"timeout after {timeout} s"}
            finally:
                signal.alarm(0)
        entry["seconds"] = round(time.perf_counter() - start, 1)
        results[name] = entry
        line = " ".join(f"{d}={entry[d]['status']}" for d in dtypes if d in entry)
        if grad:
            line += f" grad={entry['grad']['status']}"
        print(f"{name:45s} {line} ({entry['seconds']} s)", flush=True)
    return results


def summary(results: dict, dtypes: list[str]) -> str:
    """The table docs/pytorch.md shows."""
    n = len(results)
    lines = [f"OpInfo entries: {n}", "", "| dtype | pass | wrong | error | unsupported | n/a |",
             "| --- | --- | --- | --- | --- | --- |"]
    for d in dtypes + ["grad"]:
        c = Counter(r[d]["status"] if d in r else "skip" for r in results.values())
        lines.append(f"| {d} | {c['pass']} | {c['wrong']} | {c['error']} | "
                     f"{c['unsupported']} | {c['skip']} |")
    f32 = sum(1 for r in results.values() if r.get("float32", {}).get("status") == "pass")
    wrong = sorted(name for name, r in results.items()
                   if any(isinstance(v, dict) and v.get("status") == "wrong"
                          for v in r.values()))
    lines += ["", f"ops passing all their float32 samples: {f32} of {n} "
              f"({100 * f32 / max(n, 1):.1f}%)",
              f"ops with a wrong value (any dtype or gradient): {len(wrong)}"
              + (": " + ", ".join(wrong) if wrong else "")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", help="comma-separated op names (default: all of op_db)")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--no-grad", action="store_true", help="skip the gradient checks")
    parser.add_argument("--grad-samples", type=int, default=1,
                        help="gradient checks per op (default 1)")
    parser.add_argument("--shard", help="i/n: run the i-th of n parts of the op list")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--merge", nargs="+", help="print the summary of these result files")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per op and dtype")
    parser.add_argument("-v", "--verbose", action="store_true")
    a = parser.parse_args(argv)
    dtypes = a.dtypes.split(",")
    if a.merge:
        results: dict = {}
        for path in a.merge:
            results.update(json.loads(Path(path).read_text()))
        print(summary(results, dtypes))
        return 0
    warnings.filterwarnings("ignore")
    from torch.testing._internal.common_methods_invocations import op_db
    ops = list(op_db)
    if a.ops:
        wanted = set(a.ops.split(","))
        ops = [op for op in ops if op_label(op) in wanted or op.name in wanted]
    if a.shard:
        i, n = (int(v) for v in a.shard.split("/"))
        ops = ops[i::n]
    probe = pykern.torch.to_pk(torch.empty(0, device=DEVICE))
    GRAD_FLOAT64[0] = bool(probe.device.features.fp64)
    results = run(ops, dtypes, not a.no_grad, a.verbose, a.timeout, a.grad_samples)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    print()
    print(summary(results, dtypes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
