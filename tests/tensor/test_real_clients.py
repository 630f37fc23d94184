"""Client libraries nobody here wrote, fed pykern tensors: scikit-learn with its array API
dispatch off (its default: estimators take the tensors through numpy) and SciPy's array-API
functions (SCIPY_ARRAY_API=1, set before scipy is imported, so in a subprocess) give numpy's
results."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import pykern as pk

rng = np.random.default_rng(31)
X = rng.standard_normal((60, 3))
Y = X @ np.array([1.0, -2.0, 0.5]) + 0.25 + 0.01 * rng.standard_normal(60)


def test_scikit_learn_estimators_take_tensors_and_give_numpys_results():
    linear_model = pytest.importorskip("sklearn.linear_model")
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    ours = linear_model.Ridge(alpha=0.5).fit(pk.asarray(X), pk.asarray(Y))
    theirs = linear_model.Ridge(alpha=0.5).fit(X, Y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict(pk.asarray(X)), theirs.predict(X), rtol=1e-12)
    np.testing.assert_allclose(preprocessing.StandardScaler().fit_transform(pk.asarray(X)),
                               preprocessing.StandardScaler().fit_transform(X), rtol=1e-12)


SCIPY_PROGRAM = r"""
import json, math
import numpy as np, pykern as pk
import scipy.stats as st, scipy.signal as sg
from scipy.interpolate import CubicSpline

rng = np.random.default_rng(7)
a, b, c = rng.standard_normal(30), rng.standard_normal(30) + 0.4, rng.standard_normal(30) - 0.3
bb, aa = sg.butter(3, 0.2)
x = np.linspace(0.0, 1.0, 12)


def cdf(v):  # the standard normal's, in whatever namespace v has
    xp = v.__array_namespace__() if hasattr(v, "__array_namespace__") else np
    return 0.5 * (1.0 + xp.asarray(np.vectorize(math.erf)(np.asarray(v) / math.sqrt(2.0))))


CALLS = {
    "iqr": lambda m, a, b, c: st.iqr(a),
    "rankdata": lambda m, a, b, c: st.rankdata(a),
    "median_abs_deviation": lambda m, a, b, c: st.median_abs_deviation(a),
    "quantile": lambda m, a, b, c: st.quantile(a, m([0.1, 0.5, 0.9])),
    "kruskal": lambda m, a, b, c: tuple(st.kruskal(a, b, c)),
    "levene": lambda m, a, b, c: tuple(st.levene(a, b, c)),
    "mannwhitneyu": lambda m, a, b, c: tuple(st.mannwhitneyu(a, b)),
    "wilcoxon": lambda m, a, b, c: tuple(st.wilcoxon(a, b)),
    "ks_1samp": lambda m, a, b, c: tuple(st.ks_1samp(a, cdf))[:2],
    "f_oneway": lambda m, a, b, c: tuple(st.f_oneway(a, b, c)),
    "lfilter": lambda m, a, b, c: sg.lfilter(m(bb), m(aa), a),
    "lfilter_zi": lambda m, a, b, c: sg.lfilter_zi(m(bb), m(aa)),
    "CubicSpline": lambda m, a, b, c: CubicSpline(m(x), m(np.sin(x)))(m([0.15, 0.5])),
}
report = {}
for name, call in CALLS.items():
    ours = call(pk.asarray, *(pk.asarray(v) for v in (a, b, c)))
    theirs = call(np.asarray, a, b, c)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    report[name] = {
        "tensor": any(isinstance(o, pk.Tensor) for o in ours),
        "match": all(np.allclose(np.asarray(o, dtype=np.float64), np.asarray(t, np.float64),
                                 rtol=1e-6, atol=1e-9, equal_nan=True)
                     for o, t in zip(ours, theirs))}
print(json.dumps(report))
"""


def test_scipy_array_api_functions_on_tensors_match_numpy():
    pytest.importorskip("scipy")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    run = subprocess.run([sys.executable, "-c", SCIPY_PROGRAM], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(report) == 13
    wrong = {name: r for name, r in report.items() if not (r["match"] and r["tensor"])}
    assert not wrong, wrong
