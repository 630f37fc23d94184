"""A curated set of ATen operators on "pykern", each compared with PyTorch on the CPU: values
of the forward on the dtypes the models use, and the gradients PyTorch's autograd computes
through them. (tools/torch_opinfo.py runs PyTorch's whole OpInfo database; this is the small,
fast part that CI runs on the host device and on lavapipe.)"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import pykern.torch  # noqa: E402,F401

DEV = "pykern"
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float16: dict(rtol=1e-3, atol=1e-3),
       torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2)}


def _inputs(shapes, dtype, seed=0, positive=False):
    g = torch.Generator().manual_seed(seed)
    out = []
    for s in shapes:
        if dtype.is_floating_point:
            t = torch.randn(s, generator=g).to(dtype)
            out.append(t.abs() + 0.1 if positive else t)
        elif dtype == torch.bool:
            out.append(torch.randint(0, 2, s, generator=g).bool())
        else:
            out.append(torch.randint(-9, 9, s, generator=g).to(dtype))
    return out


def _compare(fn, inputs, dtype, grad=False):
    cpu = [t.clone().requires_grad_(grad) for t in inputs]
    dev = [t.to(DEV).requires_grad_(grad) for t in inputs]
    expected, actual = fn(*cpu), fn(*dev)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    for a, e in zip(actual, expected):
        assert a.device.type == DEV
        assert a.dtype == e.dtype and a.shape == e.shape
        torch.testing.assert_close(a.cpu(), e.detach(), equal_nan=True, **TOL.get(dtype, {}))
    if grad:
        weights = [torch.rand(e.shape, generator=torch.Generator().manual_seed(5))
                   for e in expected]
        sum(((e * w).sum() for e, w in zip(expected, weights) if e.requires_grad)).backward()
        sum(((a * w.to(DEV)).sum() for a, w in zip(actual, weights) if a.requires_grad)
            ).backward()
        for c, d in zip(cpu, dev):
            torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-4, atol=1e-5)


ELEMENTWISE = {
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=2), 2),
    "sub_scalar": (lambda a: a - 1.5, 1),
    "mul_broadcast": (lambda a, b: a * b[0], 2),
    "div": (lambda a, b: a / (b.abs() + 1), 2),
    "pow": (lambda a: (a.abs() + 0.5) ** 1.7, 1),
    "exp_log": (lambda a: torch.log(torch.exp(a) + 1), 1),
    "tanh_sigmoid": (lambda a: torch.tanh(a) * torch.sigmoid(a), 1),
    "gelu": (lambda a: F.gelu(a), 1),
    "gelu_tanh": (lambda a: F.gelu(a, approximate="tanh"), 1),
    "silu_relu": (lambda a: F.silu(a) + F.relu(a), 1),
    "clamp": (lambda a: a.clamp(-0.5, 0.7), 1),
    "where": (lambda a, b: torch.where(a > b, a, b * 2), 2),
    "maximum": (lambda a, b: torch.maximum(a, b), 2),
    "rsqrt": (lambda a: torch.rsqrt(a.abs() + 1), 1),
    "lerp": (lambda a, b: torch.lerp(a, b, 0.3), 2),
    "addcmul": (lambda a, b: torch.addcmul(a, a, b, value=0.5), 2),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise(name, dtype):
    fn, n = ELEMENTWISE[name]
    _compare(fn, _inputs([(4, 6)] * n, dtype), dtype)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_gradients(name):
    fn, n = ELEMENTWISE[name]
    _compare(fn, _inputs([(4, 6)] * n, torch.float32, seed=1), torch.float32, grad=True)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_integer_and_bool_ops(dtype):
    a, b = _inputs([(5, 4), (5, 4)], dtype)
    if dtype == torch.bool:
        _compare(lambda x, y: (x & y) | ~x, [a, b], dtype)
        _compare(lambda x, y: (x ^ y).sum(), [a, b], dtype)
        return
    _compare(lambda x, y: x * y - x // (y.abs() + 1) + x % 3, [a, b], dtype)
    _compare(lambda x, y: (x == y) | (x < y), [a, b], dtype)
    _compare(lambda x, y: torch.div(x, y.abs() + 1, rounding_mode="trunc"), [a, b], dtype)
    _compare(lambda x, y: torch.fmod(x, y.abs() + 1), [a, b], dtype)


REDUCTIONS = {
    "sum_dim": lambda a: a.sum(dim=1),
    "sum_all": lambda a: a.sum(),
    "mean_keepdim": lambda a: a.mean(dim=(0, 2), keepdim=True),
    "var": lambda a: a.var(dim=-1),
    "std_mean": lambda a: torch.std_mean(a, dim=0),
    "amax": lambda a: a.amax(dim=1),
    "max_dim": lambda a: a.max(dim=-1),
    "argmax": lambda a: a.argmax(dim=1),
    "logsumexp": lambda a: a.logsumexp(dim=-1),
    "norm": lambda a: torch.linalg.vector_norm(a, dim=-1),
    "cumsum": lambda a: a.cumsum(dim=1),
    "softmax": lambda a: a.softmax(dim=-1),
    "log_softmax": lambda a: F.log_softmax(a, dim=1),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    x = _inputs([(3, 5, 7)], torch.float32, seed=2)
    grad = name not in ("argmax",)
    _compare(REDUCTIONS[name], x, torch.float32, grad=grad)


def test_matrix_products_and_their_gradients():
    a, b, c = _inputs([(6, 5), (5, 4), (6, 4)], torch.float32, seed=3)
    _compare(lambda x, y, z: torch.addmm(z, x, y, beta=0.5, alpha=2), [a, b, c], torch.float32,
             grad=True)
    p, q = _inputs([(3, 4, 5), (3, 5, 2)], torch.float32, seed=4)
    _compare(lambda x, y: torch.bmm(x, y), [p, q], torch.float32, grad=True)
    _compare(lambda x, y: x @ y, [p, q], torch.float16 if False else torch.float32)
    h, w = _inputs([(2, 3, 8), (5, 8)], torch.float16, seed=5)
    _compare(lambda x, y: F.linear(x, y), [h, w], torch.float16)


def test_views_reshapes_and_joins():
    a, b = _inputs([(4, 6), (4, 6)], torch.float32, seed=6)
    _compare(lambda x: x.t().reshape(3, 8), [a], torch.float32, grad=True)
    _compare(lambda x, y: torch.cat([x, y[:, :2]], dim=1), [a, b], torch.float32, grad=True)
    _compare(lambda x, y: torch.stack([x, y], dim=1), [a, b], torch.float32, grad=True)
    _compare(lambda x: x.unsqueeze(1).expand(4, 3, 6).contiguous(), [a], torch.float32)
    _compare(lambda x: x.flip(0).roll(2, 1), [a], torch.float32)
    _compare(lambda x: torch.tril(x, -1) + torch.triu(x, 2), [a], torch.float32)
    _compare(lambda x: x.split([2, 4], dim=1)[1] * 2, [a], torch.float32, grad=True)
    _compare(lambda x: x.chunk(2)[0].permute(1, 0), [a], torch.float32, grad=True)


def test_indexing():
    x, = _inputs([(5, 6)], torch.float32, seed=7)
    idx = torch.tensor([4, 0, 2, 2])
    mask = x > 0.2
    _compare(lambda t: t[idx.to(t.device)], [x], torch.float32, grad=True)
    _compare(lambda t: t[:, idx.to(t.device)], [x], torch.float32, grad=True)
    _compare(lambda t: t[mask.to(t.device)], [x], torch.float32, grad=True)
    _compare(lambda t: t.gather(1, idx.repeat(5, 1).to(t.device)), [x], torch.float32,
             grad=True)
    _compare(lambda t: t.index_select(0, idx.to(t.device)), [x], torch.float32, grad=True)
    _compare(lambda t: t.masked_fill(mask.to(t.device), -1.0), [x], torch.float32, grad=True)

    def put(t):
        u = t.clone()
        u[idx.to(t.device)] = 0.5
        u.index_put_((idx.to(t.device),), torch.ones(6, device=t.device), accumulate=True)
        return u.scatter_add(0, idx.repeat(6, 1).t()[:3].to(t.device), t[:3])
    _compare(put, [x], torch.float32, grad=True)
    _compare(lambda t: torch.nonzero(t > 0), [x], torch.float32)
    _compare(lambda t: t[idx] * 2, [x], torch.float32, grad=True)  # a CPU index, as CUDA allows

    def bump(t):
        u = t.clone()
        u[idx] += 1.0  # a CPU index tensor again
        return u
    _compare(bump, [x], torch.float32, grad=True)


def test_sort_topk_and_their_indices():
    x, = _inputs([(4, 9)], torch.float32, seed=8)
    _compare(lambda t: torch.sort(t, dim=1, descending=True), [x], torch.float32, grad=True)
    _compare(lambda t: torch.topk(t, 3, dim=-1), [x], torch.float32, grad=True)
    _compare(lambda t: torch.argsort(t, dim=0, stable=True), [x], torch.float32)
    ties = torch.tensor([[3, 1, 3, 2, 1, 3]])
    _compare(lambda t: torch.sort(t, stable=True), [ties], torch.int64)


def test_convolution_pooling_and_norms():
    x, w, b = _inputs([(2, 3, 9, 9), (4, 3, 3, 3), (4,)], torch.float32, seed=9)
    _compare(lambda t, u, v: F.conv2d(t, u, v, stride=2, padding=1), [x, w, b], torch.float32,
             grad=True)
    g = _inputs([(6, 1, 3, 3)], torch.float32, seed=10)[0]
    _compare(lambda t, u: F.conv2d(t, u, groups=3, padding=1, dilation=1),
             [x, g], torch.float32, grad=True)
    wt = _inputs([(3, 2, 3, 3)], torch.float32, seed=11)[0]
    _compare(lambda t, u: F.conv_transpose2d(t, u, stride=2, padding=1, output_padding=1),
             [x, wt], torch.float32, grad=True)
    s, k = _inputs([(2, 4, 16), (5, 4, 3)], torch.float32, seed=12)
    _compare(lambda t, u: F.conv1d(t, u, padding=1), [s, k], torch.float32, grad=True)
    _compare(lambda t: F.max_pool2d(t, 2), [x], torch.float32, grad=True)
    _compare(lambda t: F.avg_pool2d(t, 3, stride=2, padding=1), [x], torch.float32, grad=True)
    _compare(lambda t: F.adaptive_avg_pool2d(t, (1, 1)), [x], torch.float32, grad=True)
    gamma, beta = _inputs([(3,), (3,)], torch.float32, seed=13)
    _compare(lambda t, u, v: F.batch_norm(t, None, None, u, v, training=True), [x, gamma, beta],
             torch.float32, grad=True)
    _compare(lambda t: F.layer_norm(t, (9,)), [x], torch.float32, grad=True)
    _compare(lambda t: F.group_norm(t, 3), [x], torch.float32, grad=True)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_and_grid_sample_with_gradients(mode):
    x, grid = _inputs([(2, 3, 5, 6), (2, 4, 7, 2)], torch.float32, seed=21)
    kwargs = {} if mode == "nearest" else {"align_corners": False}
    _compare(lambda t: F.interpolate(t, scale_factor=2, mode=mode, **kwargs), [x],
             torch.float32, grad=True)
    _compare(lambda t, g: F.grid_sample(t, g.tanh(), mode=mode, align_corners=True), [x, grid],
             torch.float32, grad=True)


def test_pooling_padding_and_losses_composed_on_pykern_with_gradients():
    x, v = _inputs([(2, 3, 7, 9), (2, 2, 5, 6, 7)], torch.float32, seed=22)
    _compare(lambda t: F.adaptive_max_pool2d(t, (3, 4), return_indices=True), [x],
             torch.float32, grad=True)
    _compare(lambda t: F.max_pool3d(t, 2, return_indices=True), [v], torch.float32, grad=True)
    _compare(lambda t: F.max_pool3d(t, (3, 2, 3), (2, 1, 2), (1, 1, 0), (1, 2, 1),
                                    ceil_mode=True, return_indices=True), [v], torch.float32,
             grad=True)
    _compare(lambda t: F.pad(t, (1, 2, 2, 0), mode="replicate"), [x], torch.float32,
             grad=True)
    _compare(lambda t: F.hardshrink(t, 0.5) + F.softshrink(t, 0.3), [x], torch.float32,
             grad=True)
    k, kt = _inputs([(4, 1, 3, 2, 3), (2, 3, 2, 3, 2)], torch.float32, seed=24)
    _compare(lambda t, u: F.conv3d(t, u, stride=(2, 1, 1), padding=1, groups=2), [v, k],
             torch.float32, grad=True)
    _compare(lambda t, u: F.conv_transpose3d(t, u, stride=2, padding=1, output_padding=1),
             [v, kt], torch.float32, grad=True)
    _compare(lambda t: F.avg_pool3d(t, (3, 2, 3), stride=2, padding=1, ceil_mode=True,
                                    count_include_pad=False), [v], torch.float32, grad=True)
    _compare(lambda t: F.adaptive_avg_pool3d(t, (2, 4, 3)), [v], torch.float32, grad=True)
    a, b = _inputs([(2, 6, 3), (2, 5, 3)], torch.float32, seed=25)
    for p in (1.0, 2.0):
        _compare(lambda t, u, p=p: torch.cdist(t, u, p=p), [a, b], torch.float32, grad=True)
    _compare(lambda t: F.pdist(t[0]), [a], torch.float32, grad=True)
    target = torch.tensor([1, 0, 4])
    _compare(lambda t: F.multi_margin_loss(t, target.to(t.device)),
             _inputs([(3, 5)], torch.float32, seed=23), torch.float32, grad=True)


def test_batch_norm_running_statistics():
    x, = _inputs([(4, 3, 5, 5)], torch.float32, seed=14)
    norms = [torch.nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3).to(DEV)]
    for norm, t in zip(norms, (x, x.to(DEV))):
        norm(t)
        norm(t * 2 + 1)
        norm.eval()
        norm(t)
    torch.testing.assert_close(norms[1].running_mean.cpu(), norms[0].running_mean)
    torch.testing.assert_close(norms[1].running_var.cpu(), norms[0].running_var)


def test_losses_embedding_and_dropout():
    logits, = _inputs([(6, 5)], torch.float32, seed=15)
    target = torch.tensor([0, 4, 2, 2, 1, 3])
    _compare(lambda t: F.cross_entropy(t, target.to(t.device)), [logits], torch.float32,
             grad=True)
    _compare(lambda t: F.cross_entropy(t, target.to(t.device), ignore_index=2,
                                       label_smoothing=0.1), [logits], torch.float32, grad=True)
    _compare(lambda t: F.nll_loss(F.log_softmax(t, 1), target.to(t.device), reduction="sum"),
             [logits], torch.float32, grad=True)
    pred, goal = _inputs([(4, 3), (4, 3)], torch.float32, seed=16)
    _compare(lambda p, q: F.mse_loss(p, q), [pred, goal], torch.float32, grad=True)
    _compare(lambda p, q: F.smooth_l1_loss(p, q), [pred, goal], torch.float32, grad=True)
    table, = _inputs([(10, 4)], torch.float32, seed=17)
    ids = torch.tensor([[1, 3, 3], [9, 0, 1]])
    _compare(lambda t: F.embedding(ids.to(t.device), t), [table], torch.float32, grad=True)

    def dropped(t):
        torch.manual_seed(0)
        return F.dropout(t, 0.4, training=True)
    _compare(dropped, [table], torch.float32, grad=True)


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(causal):
    q, k, v = _inputs([(2, 3, 8, 16)] * 3, torch.float32, seed=18)
    _compare(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=causal),
             [q, k, v], torch.float32, grad=True)
    mask = torch.rand(8, 8, generator=torch.Generator().manual_seed(1)) > 0.3
    _compare(lambda a, b, c: F.scaled_dot_product_attention(a, b, c,
                                                            attn_mask=mask.to(a.device)),
             [q, k, v], torch.float32, grad=True)


def test_optimizer_foreach_ops():
    params = _inputs([(3, 4), (5,)], torch.float32, seed=19)
    grads = _inputs([(3, 4), (5,)], torch.float32, seed=20)
    results = []
    for device in ("cpu", DEV):
        ps = [p.clone().to(device) for p in params]
        gs = [g.to(device) for g in grads]
        torch._foreach_mul_(ps, 0.9)
        torch._foreach_add_(ps, gs, alpha=-0.1)
        torch._foreach_addcdiv_(ps, gs, torch._foreach_add(torch._foreach_abs(gs), 1.0),
                                value=0.01)
        norms = torch._foreach_norm(ps)
        results.append([t.cpu() for t in (*ps, *norms)])
    for a, e in zip(results[1], results[0]):
        torch.testing.assert_close(a, e)


FOREACH = {
    "add_scalar": lambda ps, gs: torch._foreach_add(ps, 0.5),
    "add_list_alpha": lambda ps, gs: torch._foreach_add(ps, gs, alpha=-2),
    "sub_scalarlist": lambda ps, gs: torch._foreach_sub(ps, [0.5, -1.0]),
    "mul_tensor": lambda ps, gs: torch._foreach_mul(ps, ps[1].new_tensor(3.0)),
    "div_list": lambda ps, gs: torch._foreach_div(ps, torch._foreach_add(
        torch._foreach_abs(gs), 1.0)),
    "maximum": lambda ps, gs: torch._foreach_maximum(ps, gs),
    "sqrt_exp_neg": lambda ps, gs: torch._foreach_neg(torch._foreach_sqrt(
        torch._foreach_exp(ps))),
    "reciprocal_sigmoid": lambda ps, gs: torch._foreach_reciprocal(
        torch._foreach_sigmoid(gs)),
    "addcmul_scalarlist": lambda ps, gs: torch._foreach_addcmul(ps, gs, gs, [0.1, 0.2]),
    "addcdiv_tensor": lambda ps, gs: torch._foreach_addcdiv(
        ps, gs, torch._foreach_add(torch._foreach_abs(ps), 1.0), torch.tensor([0.3, 0.7])),
    "norm": lambda ps, gs: torch._foreach_norm(gs, 3.0),
}


@pytest.mark.parametrize("name", sorted(FOREACH))
def test_foreach_functional(name):
    ps = _inputs([(3, 4), (5,)], torch.float32, seed=21)
    gs = _inputs([(3, 4), (5,)], torch.float32, seed=22)
    expected = FOREACH[name](ps, gs)
    actual = FOREACH[name]([p.to(DEV) for p in ps], [g.to(DEV) for g in gs])
    for a, e in zip(actual, expected):
        assert a.device.type == DEV and a.dtype == e.dtype
        torch.testing.assert_close(a.cpu(), e)


def test_foreach_in_place_and_lerp():
    ps = _inputs([(3, 4), (5,)], torch.float32, seed=23)
    gs = _inputs([(3, 4), (5,)], torch.float32, seed=24)
    out = []
    for device in ("cpu", DEV):
        p = [t.clone().to(device) for t in ps]
        g = [t.to(device) for t in gs]
        torch._foreach_lerp_(p, g, 0.1)
        torch._foreach_lerp_(p, g, [0.2, 0.9])
        torch._foreach_mul_(p, g)
        torch._foreach_addcdiv_(p, g, torch._foreach_add(torch._foreach_abs(g), 2.0), value=-0.5)
        torch._foreach_zero_(g[:1]) if device == DEV else None
        out.append([t.cpu() for t in p])
    for a, e in zip(out[1], out[0]):
        torch.testing.assert_close(a, e)


def test_creation_and_random():
    torch.manual_seed(1)
    cpu = (torch.zeros(2, 3), torch.full((2,), math.pi), torch.eye(3), torch.arange(1, 7, 2),
           torch.linspace(-1, 1, 5), torch.randn(3, 3), torch.randperm(7), torch.rand(4) < 0.5,
           torch.tril_indices(4, 5, -1), torch.triu_indices(3, 3, 1))
    torch.manual_seed(1)
    dev = (torch.zeros(2, 3, device=DEV), torch.full((2,), math.pi, device=DEV),
           torch.eye(3, device=DEV), torch.arange(1, 7, 2, device=DEV),
           torch.linspace(-1, 1, 5, device=DEV), torch.randn(3, 3, device=DEV),
           torch.randperm(7, device=DEV), torch.rand(4, device=DEV) < 0.5,
           torch.tril_indices(4, 5, -1, device=DEV), torch.triu_indices(3, 3, 1, device=DEV))
    for a, e in zip(dev, cpu):
        assert a.device.type == DEV
        torch.testing.assert_close(a.cpu(), e)


def test_linear_algebra_and_fft():
    a, b = _inputs([(2, 4, 4), (2, 4, 3)], torch.float32, seed=26)
    a = a + 4 * torch.eye(4)  # well conditioned
    spd = a @ a.mT
    _compare(lambda t, u: torch.linalg.solve(t, u), [a, b], torch.float32, grad=True)
    _compare(lambda t: (torch.linalg.det(t), torch.linalg.inv(t)), [a], torch.float32,
             grad=True)
    _compare(lambda t: torch.linalg.cholesky(t), [spd], torch.float32, grad=True)
    _compare(lambda t: torch.linalg.matrix_exp(t / 4), [a], torch.float32, grad=True)
    _compare(lambda t: torch.linalg.eigvalsh(t), [spd], torch.float32, grad=True)
    _compare(lambda t: torch.linalg.svdvals(t), [a], torch.float32, grad=True)
    _compare(lambda t: torch.lu_unpack(*torch.linalg.lu_factor(t)), [a], torch.float32)
    _compare(lambda t: torch.fft.irfft(torch.fft.rfft(t, dim=-1) * 2, n=4, dim=-1), [b],
             torch.float32, grad=True)
    _compare(lambda t: torch.fft.fft(t).abs(), [b], torch.float32, grad=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh", "silu"])
def test_activation_gradients(activation, dtype):
    """The fused backward formulas of the registry (gelu's erf form, silu) and gelu's tanh
    form, through PyTorch's autograd, against the CPU's in each float dtype."""
    fn = {"gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
          "silu": F.silu}[activation]
    x, g = _inputs([(5, 7), (5, 7)], dtype, seed=3)
    xc = x.clone().requires_grad_()
    expected = torch.autograd.grad(fn(xc), xc, g)[0]
    xd = x.detach().to(DEV).requires_grad_()
    actual = torch.autograd.grad(fn(xd), xd, g.to(DEV))[0]
    assert actual.device.type == DEV and actual.dtype == dtype
    torch.testing.assert_close(actual.cpu(), expected, **TOL[dtype])
