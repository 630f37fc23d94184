"""Helpers of the pk.nn tests that take PyTorch (CPU) as the reference: a pk module given a
torch module's state through numpy, and forward/backward compared for the same input and
upstream gradient."""

from __future__ import annotations

import re

import numpy as np

import pykern as pk

# (rtol, atol) relative to the largest magnitude of the compared array: sums of up to a few
# hundred products in f32; f64 to its rounding
TOLERANCE = {np.float32: (2e-5, 2e-5), np.float64: (1e-11, 1e-11)}


def load_from_torch(mine: pk.nn.Module, theirs: object) -> None:
    """`theirs`' state dict, as numpy arrays, loaded into `mine` (strict: same keys)."""
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def assert_close(got: np.ndarray, expected: np.ndarray, dtype: type, what: str = "") -> None:
    rtol, atol = TOLERANCE[dtype]
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol * scale, err_msg=what)


def compare_forward_backward(torch: object, mine: pk.nn.Module, theirs: object,
                             x: np.ndarray, seed: int = 0, mine_x: pk.Tensor | None = None
                             ) -> None:
    """mine(x) against theirs(x), then the gradients of the input and of every parameter
    for the same upstream gradient. `mine_x` replaces pk's copy of x (a strided view of the
    same values, say)."""
    dtype = x.dtype.type
    tx = torch.tensor(x, requires_grad=True)
    px = (pk.asarray(x) if mine_x is None else mine_x).requires_grad_()
    ty, py = theirs(tx), mine(px)
    assert_close(py.numpy(), ty.detach().numpy(), dtype, "output")
    g = np.random.default_rng(seed).standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(g))
    py.backward(pk.asarray(g))
    assert_close(px.grad.numpy(), tx.grad.numpy(), dtype, "input gradient")
    tparams = dict(theirs.named_parameters())
    for name, p in mine.named_parameters():
        assert_close(p.grad.numpy(), tparams[name].grad.numpy(), dtype, f"{name} gradient")


def torch_repr(module: object) -> str:
    """`repr(module)` of a module (torch's or pykern's) without what only some torch versions
    print: the normalisation layers' `bias=` (releases before its `bias` argument print none;
    later ones print it, some only where it is False)."""
    return re.sub(r", bias=(True|False), track_running_stats", ", track_running_stats",
                  repr(module))
