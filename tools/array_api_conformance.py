"""Runs the Python array API standard's own test suite (data-apis/array-api-tests) against
pykern's namespace of one version of the standard (2024.12 by default, or 2023.12) and prints
how many tests passed, failed and were skipped in each of its test modules.

    python tools/array_api_conformance.py /path/to/array-api-tests
    python tools/array_api_conformance.py /path/to/array-api-tests --api-version 2023.12
    python tools/array_api_conformance.py /path/to/array-api-tests --with-complex --max-examples 50
    python tools/array_api_conformance.py /path/to/array-api-tests -- -k test_sum

The checkout needs its `array-api` submodule and, in this Python, the suite's requirements
(`hypothesis`, `ndindex`) and `pytest-json-report`. By default complex dtypes and the linalg
and fft extensions are left out (`--with-complex`, `--with-extensions` put them back). Exits 0
when every test that ran passed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "error")
API_VERSIONS = ("2023.12", "2024.12")


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    checkout = Path(args.checkout).resolve()
    if not (checkout / "array_api_tests").is_dir():
        print(f"{checkout} is not a checkout of array-api-tests (no array_api_tests/ in it)",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        if not args.with_complex:
            checkout = _without_complex(checkout, Path(tmp) / "suite")
        subprocess.run(_command(args, report), cwd=checkout, env=_environment(args), check=False)
        if not report.exists():
            print("the suite produced no report (did it fail to start?)", file=sys.stderr)
            return 2
        tests = json.loads(report.read_text())["tests"]
    counts = count_by_module(tests)
    print(format_table(counts))
    if args.failures:
        for test in tests:
            if test["outcome"] in ("failed", "error"):
                print(test["nodeid"])
    return 0 if not any(c["failed"] or c["error"] for c in counts.values()) else 1


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a checkout of data-apis/array-api-tests")
    parser.add_argument("--max-examples", type=int, default=20,
                        help="hypothesis examples per test (default 20)")
    parser.add_argument("--with-complex", action="store_true",
                        help="test complex64 and complex128 too")
    parser.add_argument("--with-extensions", action="store_true",
                        help="test the linalg and fft extensions too")
    parser.add_argument("--api-version", default="2024.12", choices=API_VERSIONS,
                        help="the standard's version the suite tests (default 2024.12)")
    parser.add_argument("--failures", action="store_true",
                        help="list the ids of the failed tests after the table")
    # what follows `--` goes to pytest as it is (argparse would take `-k` for an option here)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    args = parser.parse_args(own)
    args.pytest_args = extra
    return args


# The suite cannot start with both complex dtypes skipped: dtype_helpers takes the widest one
# with a max() that fails on an empty list, test_signatures looks its name up, and the unary
# special cases of complex inputs run anyway. A copy of the suite with those three places
# patched (None, no complex probe, a skip) runs instead.
_NO_COMPLEX_PATCHES = (
    ("dtype_helpers.py", "for dt in complex_dtypes], key=lambda x: x[1]\n)[0]",
     "for dt in complex_dtypes], key=lambda x: x[1], default=(None,)\n)[0]"),
    ("test_signatures.py", "cmplx_name = dh.dtype_to_name[dh.widest_complex_dtype]",
     'cmplx_name = "complex128"'),
    ("test_special_cases.py", "            dtype = dh.widest_complex_dtype\n",
     "            dtype = dh.widest_complex_dtype\n"
     "            if dtype is None:\n"
     "                pytest.skip('complex dtypes are skipped')\n"),
)


def _without_complex(checkout: Path, copy: Path) -> Path:
    """A copy of the suite at `copy` that starts with no complex dtype (see above)."""
    shutil.copytree(checkout, copy, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    for name, old, new in _NO_COMPLEX_PATCHES:
        path = copy / "array_api_tests" / name
        path.write_text(path.read_text().replace(old, new))
    return copy


def _environment(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    # the namespace of the version tested: pykern.array_api is 2024.12's
    env["ARRAY_API_TESTS_MODULE"] = ("pykern.array_api" if args.api_version == "2024.12" else
                                     "pykern.array_api_" + args.api_version.replace(".", "_"))
    env["ARRAY_API_TESTS_VERSION"] = args.api_version
    if not args.with_complex:
        env["ARRAY_API_TESTS_SKIP_DTYPES"] = "complex64,complex128"
    # pykern itself, importable from a source tree that is not installed
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _command(args: argparse.Namespace, report: Path) -> list[str]:
    command = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider",
               f"--max-examples={args.max_examples}", "--disable-deadline",
               "--json-report", f"--json-report-file={report}", "--json-report-omit",
               "collectors", "log", "traceback", "streams", "keywords"]
    if not args.with_extensions:
        # (test_has_names checks the extensions' names even when they are disabled)
        command += ["--disable-extension", "linalg", "fft",
                    "-k", "not (test_has_names and (linalg or fft))"]
    return command + list(args.pytest_args)


def count_by_module(tests: list[dict]) -> dict[str, collections.Counter]:
    """Outcome counts per test module (the file part of each pytest node id)."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for test in tests:
        module = Path(test["nodeid"].split("::")[0]).stem
        counts[module][test["outcome"]] += 1
    return dict(sorted(counts.items()))


def format_table(counts: dict[str, collections.Counter]) -> str:
    """The counts as a plain-text table, a total row last, with the pass rate of the tests
    that ran (passed / (passed + failed + error))."""
    total: collections.Counter = collections.Counter()
    for c in counts.values():
        total.update(c)
    rows = [("module", *OUTCOMES)]
    rows += [(name, *(str(c[o]) for o in OUTCOMES)) for name, c in counts.items()]
    rows.append(("total", *(str(total[o]) for o in OUTCOMES)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(OUTCOMES) + 1)]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths))) for row in rows]
    ran = total["passed"] + total["failed"] + total["error"]
    rate = f"{100 * total['passed'] / ran:.1f}%" if ran else "n/a"
    return "\n".join(lines) + f"\npassed {total['passed']} of {ran} tests that ran ({rate})"


if __name__ == "__main__":
    sys.exit(main())
