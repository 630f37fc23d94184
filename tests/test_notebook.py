"""The examples notebook runs top to bottom, and what its cells show is right.

Each code cell is registered in linecache under a name of its own, as Jupyter does, so kernels
defined in cells can be compiled. After a cell runs, the value it displays (its last expression,
as Jupyter shows it) and what it printed are checked against numpy or plain Python.

The training section (scikit-learn's digits, matplotlib's plot: both in the test extra) is
checked against a numpy MLP: one backward pass's gradients, the accuracy of the trained
weights, and the plotted curve against the losses the loop kept.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import hashlib
import importlib.util
import io
import json
import linecache
import pathlib

import numpy as np
import pytest

NOTEBOOK = pathlib.Path(__file__).parent.parent / "examples" / "tour.ipynb"
TRAINING_NEEDS = ("sklearn", "matplotlib")  # what the training section imports


def run_cell(source: str, name: str, namespace: dict) -> tuple[object, str]:
    """Runs a cell as Jupyter does: the value of a final expression is returned (displayed)."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    tree = ast.parse(source, name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(tree, name, "exec"), namespace)  # noqa: S102
        value = None
        if last is not None:
            value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)  # noqa: S307
    return value, printed.getvalue()


def collatz_steps(n: int) -> int:
    count = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        count += 1
    return count


def attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    scores = np.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return (weights / weights.sum(-1, keepdims=True)) @ v


def mlp_forward(params: list[np.ndarray], x: np.ndarray) -> tuple[np.ndarray, ...]:
    """Linear, ReLU, Linear in float64: (pre-activation h, hidden r, logits z)."""
    w1, b1, w2, b2 = (p.astype(np.float64) for p in params)
    h = x.astype(np.float64) @ w1.T + b1
    r = np.maximum(h, 0.0)
    return h, r, r @ w2.T + b2


def mlp_loss_and_grads(params: list[np.ndarray], x: np.ndarray, y: np.ndarray
                       ) -> tuple[float, list[np.ndarray]]:
    """The mean cross-entropy of the MLP and its gradients by the chain rule, in float64."""
    h, r, z = mlp_forward(params, x)
    z = z - z.max(axis=1, keepdims=True)
    prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    rows = np.arange(len(y))
    loss = float(-np.log(prob[rows, y]).mean())
    dz = prob.copy()
    dz[rows, y] -= 1.0
    dz /= len(y)
    dh = (dz @ params[2].astype(np.float64)) * (h > 0)
    return loss, [dh.T @ x, dh.sum(axis=0), dz.T @ r, dz.sum(axis=0)]


def check_training(source: str, value: object, ns: dict) -> bool:
    """Checks a cell of the training section; False when it is none of them."""
    params = [p.numpy() for p in ns["model"].parameters()] if "model" in ns else []
    if source.startswith("import pykern.nn.functional as F"):
        assert value is ns["model"] and "Linear(in_features=64, out_features=32" in repr(value)
        assert [p.shape for p in params] == [(32, 64), (32,), (10, 32), (10,)]
        assert np.abs(params[0]).max() <= 1 / 8 and np.abs(params[2]).max() <= 32 ** -0.5
    elif source.startswith("xb, yb = x_train[:100]"):
        x, y = ns["images"][ns["train"][:100]], ns["labels"][ns["train"][:100]]
        loss, expected = mlp_loss_and_grads(params, x, y)
        assert abs(value[0] - loss) <= 1e-5 * loss
        for (name, got), want in zip(ns["grads"].items(), expected):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=name)
    elif source.startswith("rng = np.random.default_rng(1)"):
        losses = ns["losses"]
        steps, first, last, accuracy = value
        assert steps == len(losses) == 6 * 14 and np.isfinite(losses).all()
        assert (first, last) == (round(losses[0], 3), round(losses[-1], 3))
        assert np.mean(losses[-10:]) < 0.25 * np.mean(losses[:10])  # from about 2.3 (ln 10)
        assert accuracy >= 0.9
        test = ns["test"]
        numpy_predicted = mlp_forward(params, ns["images"][test])[2].argmax(axis=1)
        numpy_accuracy = float((numpy_predicted == ns["labels"][test]).mean())
        assert abs(accuracy - numpy_accuracy) <= 2 / len(test)  # a near tie may flip
    elif source.startswith("from matplotlib.figure import Figure"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        losses = ns["losses"]
        assert value is ns["fig"] and value.axes[0].get_lines() == [ns["curve"]]
        np.testing.assert_array_equal(ns["curve"].get_ydata(), losses)
        np.testing.assert_array_equal(ns["curve"].get_xdata(), np.arange(1, len(losses) + 1))
        png = io.BytesIO()
        FigureCanvasAgg(value).print_png(png)  # renders off-screen, as Jupyter would inline
        assert png.getvalue()[:8] == b"\x89PNG\r\n\x1a\n" and len(png.getvalue()) > 10_000
    else:
        return False
    return True


def check(source: str, value: object, printed: str, ns: dict) -> bool:
    """Checks the cell whose source this is; False when no check knows it."""
    if source.startswith("@pk.kernel\ndef saxpy"):
        np.testing.assert_array_equal(value, 2 * ns["x"] + ns["y"])
    elif source.startswith("X, Y = pk.asarray"):
        np.testing.assert_array_equal(value, -ns["x"] + ns["y"])
    elif source.startswith("@pk.kernel\ndef collatz"):
        assert value.tolist() == [collatz_steps(int(n)) for n in ns["start"]]
    elif "def oops" in source:
        assert "cannot assign a f32 value to 's'" in printed and "^" in printed
    elif source.startswith("print(saxpy.ir"):
        assert "saxpy" in printed and "f32" in printed
    elif source.startswith("print(saxpy.asm"):
        assert "OpEntryPoint GLCompute" in printed
    elif "def block_sum_of_squares" in source:
        got, expected = value
        assert abs(got - expected) <= 1e-5 * expected
        assert expected == float((ns["v"].astype(np.float64) ** 2).sum())
    elif "def polar_grid" in source:
        rows, cols = np.mgrid[0:5, 0:5]
        x, y = cols - 2.0, rows - 2.0
        got = ns["grid"].numpy()
        np.testing.assert_allclose(got[..., 0], np.hypot(x, y), rtol=1e-15)
        np.testing.assert_allclose(got[..., 1], np.arctan2(y, x), rtol=1e-15, atol=1e-15)
        np.testing.assert_array_equal(value, got[1])
    elif "def shift_left" in source:
        assert "index (8,) of 'x'" in printed or "index (8,) is out of bounds" in printed
    elif source.startswith("a = pk.arange(12"):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        np.testing.assert_array_equal(value.numpy(), (a * 2 + 1)[:, ::2])
    elif source.startswith("q = pk.random.randn"):
        shape, total = value
        assert shape == (2, 16, 8) and abs(total - 3.0) < 1e-5
        expected = attention_reference(*(ns[n].numpy() for n in "qkv"))
        np.testing.assert_allclose(ns["out"].numpy(), expected, rtol=1e-4, atol=1e-5)
    elif source.startswith("m = pk.random.rand"):
        assert value is True or value == np.True_
    elif source.startswith("@pk.fuse"):
        assert value is True or value == np.True_
        assert "@pk.kernel" in ns["scaled"].source(ns["u"], ns["w"])
    elif source.startswith("x = pk.zeros(4)\nwith pk.graph()"):
        np.testing.assert_array_equal(value, 3 * np.arange(4) + 1)
    elif source.startswith("@pk.compile"):
        results, replayed = value
        assert results == [[max(i - 1.0, 0.0) * 2 + 1] * 3 for i in range(5)] and replayed
    elif source.startswith("on_device = bool(pk.get_device().info.coop_shapes)"):
        exact = ns["A"].astype(np.float64) @ ns["B"].astype(np.float64)
        assert value == float(np.abs(ns["C"] - exact).max()) and value < 32 * 2.0 ** -23 * 32
    elif source.startswith("import numpy as np"):
        assert printed.strip()
    elif source.startswith("t = np.linspace(0, 1, 256"):
        np.testing.assert_allclose(ns["spectrum"].numpy(), np.fft.rfft(ns["signal"]),
                                   atol=1e-10)
        assert value == [12, 40]
    elif source.startswith("target = pk.abs(spectrum)"):
        losses = ns["spectral_losses"]
        target = np.abs(np.fft.rfft(ns["signal"]))
        found = np.abs(np.fft.rfft(ns["x"].detach().numpy()))
        assert value == (round(losses[0], 1), True, [12, 40])
        assert losses[-1] < 1e-4 * losses[0]
        np.testing.assert_allclose(found, target, atol=0.05)  # the spectrum, recovered
    else:
        return check_training(source, value, ns)
    return True


def test_notebook_cells_show_the_right_results():
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    namespace: dict = {"__name__": "__notebook__"}
    checked = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        missing = [m for m in TRAINING_NEEDS if m in source and not importlib.util.find_spec(m)]
        if missing:
            pytest.skip(f"the cells from {i} on need {', '.join(missing)} (pykern's test "
                        f"extra); the {len(checked)} cells before them were right")
        value, printed = run_cell(source, f"<notebook-cell-{i}>", namespace)
        assert check(source, value, printed, namespace), \
            f"cell {i} has no check in this test: add one\n{source}"
        checked.append(i)
    assert len(checked) >= 18


def test_the_notebook_is_stored_with_the_outputs_of_its_cells_as_they_are():
    """examples/run_notebook.py ran the cells as they are now, top to bottom, without an error,
    and stored what each showed, the loss curve as an inline PNG among them."""
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    images = []
    for n, cell in enumerate(cells, 1):
        source = "".join(cell["source"])
        stale = f"re-run `python examples/run_notebook.py {NOTEBOOK.name}`: cell {n} changed"
        assert cell["metadata"].get("pykern", {}).get("source_sha256") == \
            hashlib.sha256(source.encode()).hexdigest(), stale
        assert cell["execution_count"] == n, stale
        assert cell["outputs"], f"code cell {n} shows nothing\n{source}"
        assert all(o["output_type"] != "error" for o in cell["outputs"]), source
        images += [o["data"]["image/png"] for o in cell["outputs"]
                   if "image/png" in o.get("data", {})]
    assert images, "no plot is stored"
    png = base64.b64decode(images[0])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
