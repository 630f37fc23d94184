"""A GPT written as PyTorch users write one (gpt_torch.py) and its pykern port
(gpt_pykern.py): the port differs only in the lines listed here (imports, and the documented
differences between the libraries), and from the same weights both train with the same losses
step by step (dropout off: the libraries draw different masks), evaluate alike and generate
the same greedy continuation. The model is small: 2 layers of width 32, 4 heads, a context of
16 tokens and 65 token ids, trained on a repeating sequence it can learn in a few steps.
"""

from __future__ import annotations

import ast
import difflib
import pathlib
import re

import numpy as np
import pytest

import pykern as pk

torch = pytest.importorskip("torch")
import gpt_pykern as mine_src  # noqa: E402  (after torch: the original needs it)
import gpt_torch as theirs_src  # noqa: E402

HERE = pathlib.Path(__file__).parent
STEPS, BATCH = 8, 6

# the lines a port changes once `torch.` is `pk.` everywhere: (PyTorch's, pykern's)
CHANGED_LINES = [
    ("import torch", "import pykern as pk"),
    ("import pk.nn as nn", "import pykern.nn as nn"),
    ("from pk.nn import functional as F", "from pykern.nn import functional as F"),
    # numpy's transpose permutes all axes: PyTorch's swap of two is swapaxes
    ("        q = q.view(B, T, self.n_head, head).transpose(1, 2)",
     "        q = q.view(B, T, self.n_head, head).swapaxes(1, 2)"),
    ("        k = k.view(B, T, self.n_head, head).transpose(1, 2)",
     "        k = k.view(B, T, self.n_head, head).swapaxes(1, 2)"),
    ("        v = v.view(B, T, self.n_head, head).transpose(1, 2)",
     "        v = v.view(B, T, self.n_head, head).swapaxes(1, 2)"),
    ("            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))",
     "            scores = (q @ k.swapaxes(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))"),
    ("        y = y.transpose(1, 2).contiguous().view(B, T, C)",
     "        y = y.swapaxes(1, 2).contiguous().view(B, T, C)"),
    # a device tensor is a copy of the host array, not a view of its memory
    ("    x = pk.stack([pk.from_numpy(data[i:i + block_size].astype(np.int64)) for i in starts])",
     "    x = pk.stack([pk.asarray(data[i:i + block_size].astype(np.int64)) for i in starts])"),
    ("    y = pk.stack([pk.from_numpy(data[i + 1:i + 1 + block_size].astype(np.int64))",
     "    y = pk.stack([pk.asarray(data[i + 1:i + 1 + block_size].astype(np.int64))"),
]


def _code_lines(name: str) -> list[str]:
    """The file's lines after its module docstring."""
    text = (HERE / name).read_text()
    docstring = ast.parse(text).body[0]
    return text.splitlines()[docstring.end_lineno:]


def test_the_port_changes_only_imports_and_documented_differences():
    theirs = [re.sub(r"\btorch\.", "pk.", line) for line in _code_lines("gpt_torch.py")]
    mine = _code_lines("gpt_pykern.py")
    changed = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, theirs, mine).get_opcodes():
        if tag != "equal":
            assert tag == "replace" and i2 - i1 == j2 - j1, (theirs[i1:i2], mine[j1:j2])
            changed += zip(theirs[i1:i2], mine[j1:j2])
    assert changed == CHANGED_LINES


def _corpus() -> tuple[np.ndarray, list[np.ndarray]]:
    """A sequence of 65 token ids repeating every 23, and the window starts of each step."""
    rng = np.random.default_rng(0)
    data = np.tile(rng.integers(0, 65, 23), 30)
    block = theirs_src.GPTConfig().block_size
    return data, [rng.integers(0, len(data) - block - 1, BATCH) for _ in range(STEPS)]


def _same_weights(fused: bool, dropout: float = 0.0, bias: bool = True
                  ) -> tuple[object, pk.nn.Module]:
    torch.manual_seed(0)
    settings = dict(fused_attention=fused, dropout=dropout, bias=bias)
    theirs = theirs_src.GPT(theirs_src.GPTConfig(**settings))
    mine = mine_src.GPT(mine_src.GPTConfig(**settings))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return theirs, mine


@pytest.mark.parametrize("fused, bias", [(True, True), (False, False)],
                         ids=["sdpa", "spelled_out_without_biases"])
def test_the_port_trains_as_in_torch_from_the_same_weights(fused, bias):
    theirs, mine = _same_weights(fused, bias=bias)
    assert mine.num_params() == theirs.num_params()  # the tied matrix counts once
    data, schedule = _corpus()
    expected = theirs_src.train(theirs, data, schedule)
    got = mine_src.train(mine, data, schedule)
    np.testing.assert_allclose(got, expected, rtol=2e-5)
    assert got[-1] < 0.75 * got[0]  # it learns the sequence
    assert mine.transformer.wte.weight is mine.lm_head.weight  # still tied
    for name, p in mine.named_parameters():  # (Adam moves a parameter whose gradient is
        # near 0 by about lr, either way: there rounding differences show up to 1% of lr)
        t = dict(theirs.named_parameters())[name].detach().numpy()
        np.testing.assert_allclose(p.numpy(), t, rtol=1e-4, atol=1e-4, err_msg=name)
    windows = [0, 7, 30]
    assert mine_src.estimate_loss(mine, [mine_src.get_batch(data, 16, windows)]) == \
        pytest.approx(theirs_src.estimate_loss(theirs, [theirs_src.get_batch(data, 16, windows)]),
                      rel=2e-5)
    prompt = data[None, :5].astype(np.int64)
    greedy = mine.generate(pk.asarray(prompt), 20, top_k=1)  # past the context of 16 too
    assert greedy.dtype == pk.i64
    np.testing.assert_array_equal(greedy.numpy(),
                                  theirs.generate(torch.tensor(prompt), 20, top_k=1).numpy())


def test_sampled_generation_draws_from_the_top_k_and_repeats_with_the_seed():
    _, mine = _same_weights(True)
    mine.eval()
    prompt = pk.asarray([[1, 2, 3], [4, 5, 6]], dtype=pk.long)
    pk.random.seed(7)
    first = mine.generate(prompt, 6, temperature=0.8, top_k=3).numpy()
    pk.random.seed(7)
    np.testing.assert_array_equal(mine.generate(prompt, 6, temperature=0.8, top_k=3).numpy(),
                                  first)
    with pk.no_grad():
        for t in range(3, first.shape[1]):
            logits = mine(pk.asarray(first[:, :t]))[0][:, -1, :].numpy()
            top3 = np.argsort(-logits, axis=-1)[:, :3]
            assert all(first[b, t] in top3[b] for b in range(2))


@pytest.mark.parametrize("fused", [True, False], ids=["sdpa", "spelled_out"])
def test_with_dropout_the_port_trains(fused):
    _, mine = _same_weights(fused, dropout=0.1)
    data, schedule = _corpus()
    x, y = mine_src.get_batch(data, 16, [0, 3])
    mine.train()
    assert not np.array_equal(mine(x, y)[0].numpy(), mine(x, y)[0].numpy())  # new masks
    losses = mine_src.train(mine, data, schedule)
    assert np.mean(losses[-2:]) < 0.85 * np.mean(losses[:2])
