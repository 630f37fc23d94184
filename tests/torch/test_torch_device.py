"""The "pykern" PyTorch device: device strings, memory, copies, views with PyTorch's semantics,
sharing memory with pk.Tensor, DLPack, seeding, autocast, saving, and the error for an
operator without a pykern implementation. Every value is compared with PyTorch on the CPU."""

from __future__ import annotations

import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pykern as pk  # noqa: E402
import pykern.torch  # noqa: E402,F401
from pykern.torch import from_pk, to_pk  # noqa: E402

DEV = "pykern"


def test_device_strings_name_pykerns_devices():
    t = torch.empty(3, device=DEV)
    assert t.device == torch.device("pykern", 0)
    assert torch.ones(2).to(DEV).device == t.device  # .to("pykern") lands on the same one
    assert to_pk(t).device is pk.get_device()  # "pykern" is pykern's current device
    assert torch.pykern.device_count() == len(pk.devices())
    assert torch.pykern.is_available()
    for n in range(torch.pykern.device_count()):
        u = torch.arange(4.0, device=f"pykern:{n}")
        assert u.device.index == n
        assert u.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_a_device_index_past_the_last_is_refused():
    with pytest.raises(RuntimeError, match="no device pykern:"):
        torch.empty(1, device=f"pykern:{torch.pykern.device_count()}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int8,
                                   torch.int16, torch.int32, torch.int64, torch.uint8,
                                   torch.bool, torch.complex64])
def test_copies_to_and_from_the_cpu_keep_every_value(dtype):
    cpu = (torch.randn(5, 7) * 50).to(dtype) if dtype != torch.complex64 else \
        torch.randn(5, 7, dtype=dtype)
    dev = cpu.to(DEV)
    assert dev.dtype == dtype and dev.device.type == DEV
    assert torch.equal(dev.cpu(), cpu)
    assert torch.equal(cpu.t().to(DEV).cpu(), cpu.t())  # a strided source
    assert torch.equal(dev.t().cpu(), cpu.t())  # a strided view read back
    np.testing.assert_array_equal(dev.cpu().numpy(), cpu.numpy()) if dtype != torch.bfloat16 \
        else None


def test_float64_where_the_device_has_it():
    if not pk.get_device().features.fp64:
        pytest.skip("the device has no float64")
    cpu = torch.randn(4, dtype=torch.float64)
    assert torch.equal((cpu.to(DEV) * 3).cpu(), cpu * 3)


def test_views_share_memory_as_pytorch_says():
    cpu = torch.arange(24.0).reshape(4, 6)
    dev = cpu.to(DEV)
    for t in (cpu, dev):  # the same program on both devices
        v = t.view(6, 4)
        v[1, 2] = -1.0
        t.t()[0, 3] = 100.0
        t[:, 1].add_(10)
        t.as_strided((2, 2), (1, 6), 2).mul_(-2)
        t.narrow(0, 2, 2).unsqueeze(0).expand(3, 2, 6).sum(0)
        t.view(-1)[::5] = 7.0
        t.diagonal().zero_()
    assert torch.equal(dev.cpu(), cpu)
    assert dev.view(-1).data_ptr() == dev.data_ptr()
    assert dev[1:].data_ptr() == dev.data_ptr() + 6 * 4
    assert dev.t()._base is dev


def test_distinct_tensors_have_distinct_addresses():
    a, b = torch.zeros(8, device=DEV), torch.zeros(8, device=DEV)
    assert a.data_ptr() != b.data_ptr()
    a.add_(b)  # PyTorch's overlap checks see two memories
    with pytest.raises(RuntimeError, match="single memory location"):
        a.view(2, 4).add_(a.view(2, 4)[0])  # as on the CPU: a partial overlap


def test_an_in_place_op_on_a_view_reaches_autograd():
    base_cpu = torch.randn(3, 4, requires_grad=True)
    base_dev = base_cpu.detach().to(DEV).requires_grad_()
    grads = []
    for base in (base_cpu, base_dev):
        y = base * 2
        y[:, 1:3].mul_(y[:, 0:2].clone())
        y.sum().backward()
        grads.append(base.grad)
    torch.testing.assert_close(grads[1].cpu(), grads[0])


def test_to_pk_and_from_pk_share_memory():
    t = torch.arange(6.0, device=DEV).reshape(2, 3)
    p = to_pk(t)
    assert isinstance(p, pk.Tensor) and p.shape == (2, 3)

    @pk.kernel
    def double(x: pk.f32[:, :]):
        i = pk.global_id(0)
        j = pk.global_id(1)
        x[i, j] = x[i, j] * 2.0

    double[p.shape](p)
    assert t.cpu().tolist() == [[0, 2, 4], [6, 8, 10]]
    column = to_pk(t[:, 1])  # a strided view
    assert column.numpy().tolist() == [2.0, 8.0]
    q = pk.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    u = from_pk(q)
    assert u.device.type == DEV and u.dtype == torch.float32
    u.add_(1)
    assert q.numpy().tolist() == [2.0, 3.0, 4.0]
    assert from_pk(q).data_ptr() == u.data_ptr()  # one buffer, one storage


def test_to_pk_refuses_a_cpu_tensor():
    with pytest.raises(TypeError, match="pykern device"):
        to_pk(torch.zeros(2))


def test_dlpack_both_ways():
    t = torch.arange(5.0, device=DEV)
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(5.0, dtype=np.float32))
    assert torch.from_dlpack(t).tolist() == [0, 1, 2, 3, 4]
    assert pk.from_dlpack(t).numpy().tolist() == [0, 1, 2, 3, 4]
    assert torch.from_dlpack(pk.arange(3, dtype=pk.f32)).tolist() == [0, 1, 2]
    assert pk.from_dlpack(torch.arange(3)).numpy().tolist() == [0, 1, 2]


def test_an_operator_without_an_implementation_names_it():
    x = torch.rand(3, device=DEV)
    with pytest.raises(NotImplementedError, match="aten::special_airy_ai"):
        torch.special.airy_ai(x)


def test_random_numbers_follow_torch_manual_seed_as_on_the_cpu():
    torch.manual_seed(3)
    on_cpu = [torch.randn(4, 5), torch.rand(7), torch.randint(0, 9, (6,)),
              torch.nn.functional.dropout(torch.ones(50), 0.3)]
    torch.manual_seed(3)
    on_dev = [torch.randn(4, 5, device=DEV), torch.rand(7, device=DEV),
              torch.randint(0, 9, (6,), device=DEV),
              torch.nn.functional.dropout(torch.ones(50, device=DEV), 0.3)]
    for a, b in zip(on_dev, on_cpu):
        assert torch.equal(a.cpu(), b)


@pytest.mark.parametrize("draw", [
    lambda t: t.normal_(), lambda t: t.normal_(2.0, 0.5), lambda t: t.uniform_(-3, 4),
    lambda t: t.bernoulli_(0.3), lambda t: t.random_(), lambda t: t.random_(17),
    lambda t: t.random_(-5, 9), lambda t: t.random_(3, None), lambda t: t.exponential_(2.5),
    lambda t: t.geometric_(0.2), lambda t: t.log_normal_(0.5, 0.25), lambda t: t.cauchy_(1.0, 3.0),
    lambda t: t.normal_(1.0, 2.0, generator=torch.Generator().manual_seed(7)),
])
def test_in_place_random_operators_draw_as_on_the_cpu(draw):
    torch.manual_seed(5)
    on_cpu = draw(torch.empty(5, 7))
    torch.manual_seed(5)
    on_dev = draw(torch.empty(5, 7, device=DEV))
    assert on_dev.device.type == DEV
    assert torch.equal(on_dev.cpu(), on_cpu)


def test_autocast_casts_products_down_and_sensitive_ops_up():
    x = torch.randn(4, 8, device=DEV)
    lin = torch.nn.Linear(8, 3).to(DEV)
    with torch.autocast(device_type="pykern"):
        y = lin(x)
        p = torch.softmax(y, dim=-1)
    assert y.dtype == torch.float16
    assert p.dtype == torch.float32
    with torch.autocast(device_type="pykern", dtype=torch.bfloat16):
        assert lin(x).dtype == torch.bfloat16
    torch.testing.assert_close(y.float().cpu(), lin.cpu()(x.cpu()), rtol=1e-2, atol=1e-2)


def test_a_state_dict_saves_and_loads_on_the_device():
    model = torch.nn.Linear(4, 3).to(DEV)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    back = torch.load(buf)
    assert back["weight"].device.type == DEV
    assert torch.equal(back["weight"].cpu(), model.weight.detach().cpu())
    buf.seek(0)
    on_cpu = torch.load(buf, map_location="cpu")
    fresh = torch.nn.Linear(4, 3).to(DEV)
    fresh.load_state_dict(on_cpu)
    assert torch.equal(fresh.bias.detach().cpu(), model.bias.detach().cpu())


def test_printing_a_tensor():
    text = repr(torch.tensor([1.5, -2.0], device=DEV))
    assert "1.5000" in text and "device='pykern:0'" in text


def test_module_to_and_parameters_stay_parameters():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).to(DEV)
    assert all(isinstance(p, torch.nn.Parameter) and p.device.type == DEV
               for p in model.parameters())
    assert model[1].running_mean.device.type == DEV
    model.cpu()
    assert model[0].weight.device.type == "cpu"


def test_tied_weights_stay_tied_through_moves():
    head = torch.nn.Linear(4, 10, bias=False)
    emb = torch.nn.Embedding(10, 4)
    emb.weight = head.weight
    model = torch.nn.ModuleDict({"emb": emb, "head": head}).to(DEV)
    assert model["emb"].weight is model["head"].weight
    assert model["emb"].weight.device.type == DEV
    model.cpu()
    assert model["emb"].weight is model["head"].weight


def test_torch_compile_with_an_ahead_of_time_backend_runs_on_the_device():
    """`torch.compile(backend="aot_eager")` runs the captured forward and backward graphs'
    ATen operators on "pykern" (docs/pytorch.md, "torch.compile")."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 1))
    x = torch.randn(16, 4)
    reference = model(x).square().mean()
    reference.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    on_device = model.to(DEV)
    on_device.zero_grad()
    loss = torch.compile(on_device, backend="aot_eager")(x.to(DEV)).square().mean()
    loss.backward()
    assert loss.device.type == DEV
    torch.testing.assert_close(loss.cpu(), reference.detach(), rtol=1e-4, atol=1e-6)
    for p, g in zip(on_device.parameters(), grads):
        assert p.grad.device.type == DEV
        torch.testing.assert_close(p.grad.cpu(), g, rtol=1e-4, atol=1e-6)


def test_a_device_closed_and_opened_again_serves_new_tensors():
    """A pykern device closed and opened again (pk.set_device) is a new runtime device: the
    "pykern" device uses it, not the closed one."""
    before = torch.ones(3, device="pykern") * 2
    assert before.cpu().tolist() == [2.0, 2.0, 2.0]
    device = pk.get_device()
    device.close()
    pk.set_device(device.info.index)
    after = torch.arange(3.0, device="pykern") + 1
    assert after.cpu().tolist() == [1.0, 2.0, 3.0]
