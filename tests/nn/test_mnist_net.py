"""PyTorch's MNIST example network, written with pk.nn, trained step by step beside the same
network in PyTorch from the same weights: two convolutions, max pooling, dropout, two linear
layers, log_softmax + nll_loss, Adadelta(lr=1.0) and StepLR(gamma=0.7) per epoch, and the
example's evaluation (summed loss, argmax, eq, view_as). The network's code is the example's
with only the imports changed (`torch.flatten` is `pk.flatten`). On a few small batches of
made-up 28x28 images (a fast stand-in for MNIST), the losses match torch's at every step and
fall.

The comparison runs with dropout off (eval mode: this network has no other mode-dependent
layer), since the two libraries draw different masks; a last check trains with dropout on.
"""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern import nn
from pykern.nn import functional as F

torch = pytest.importorskip("torch")

BATCH, BATCHES, EPOCHS = 2, 2, 3


class Net(nn.Module):
    """The network of PyTorch's MNIST example, in pk.nn."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = pk.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def evaluate(model, batches):
    """The example's test(): the summed loss and the correct predictions (the one change from
    PyTorch's: argmax takes numpy's axis= and keepdims=)."""
    model.eval()
    test_loss, correct = 0, 0
    with pk.no_grad():
        for data, target in batches:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(axis=1, keepdims=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return test_loss, correct


def torch_net() -> object:
    """The same network in torch.nn."""
    tnn, tF = torch.nn, torch.nn.functional

    class TorchNet(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = tnn.Conv2d(1, 32, 3, 1)
            self.conv2 = tnn.Conv2d(32, 64, 3, 1)
            self.dropout1 = tnn.Dropout(0.25)
            self.dropout2 = tnn.Dropout(0.5)
            self.fc1 = tnn.Linear(9216, 128)
            self.fc2 = tnn.Linear(128, 10)

        def forward(self, x):
            x = tF.max_pool2d(tF.relu(self.conv2(tF.relu(self.conv1(x)))), 2)
            x = torch.flatten(self.dropout1(x), 1)
            x = self.dropout2(tF.relu(self.fc1(x)))
            return tF.log_softmax(self.fc2(x), dim=1)

    return TorchNet()


def torch_evaluate(model, batches):
    """The example's test() in PyTorch."""
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in batches:
            output = model(data)
            test_loss += torch.nn.functional.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return test_loss, correct


def fake_batches() -> list[tuple[np.ndarray, np.ndarray]]:
    """Images normalised as the example's (mean 0.1307, std 0.3081 of [0, 1] pixels)."""
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(BATCHES):
        pixels = rng.uniform(0, 1, (BATCH, 1, 28, 28)) ** 4
        batches.append((((pixels - 0.1307) / 0.3081).astype(np.float32),
                        rng.integers(0, 10, BATCH)))
    return batches


def test_mnist_example_net_trains_as_in_torch():
    torch.manual_seed(0)  # torch's initialisation, copied into the pk network
    theirs = torch_net()
    mine = Net()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    topt = torch.optim.Adadelta(theirs.parameters(), lr=1.0)
    popt = pk.optim.Adadelta(mine.parameters(), lr=1.0)
    tsched = torch.optim.lr_scheduler.StepLR(topt, step_size=1, gamma=0.7)
    psched = pk.optim.lr_scheduler.StepLR(popt, step_size=1, gamma=0.7)
    theirs.eval()
    mine.eval()
    batches = fake_batches()
    losses = []
    for _ in range(EPOCHS):
        for x, y in batches:
            topt.zero_grad()
            tloss = torch.nn.functional.nll_loss(theirs(torch.tensor(x)), torch.tensor(y))
            tloss.backward()
            topt.step()
            popt.zero_grad()
            ploss = F.nll_loss(mine(pk.asarray(x)), pk.asarray(y))
            ploss.backward()
            popt.step()
            losses.append((ploss.item(), tloss.item()))
        tsched.step()
        psched.step()
        assert psched.get_last_lr() == tsched.get_last_lr()
    got, expected = np.array(losses).T
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    per_epoch = got.reshape(EPOCHS, BATCHES).mean(axis=1)
    assert per_epoch[-1] < 0.8 * per_epoch[0]  # it learns the batches
    for name, p in mine.named_parameters():
        t = dict(theirs.named_parameters())[name].detach().numpy()
        np.testing.assert_allclose(p.numpy(), t, rtol=1e-4, atol=2e-5, err_msg=name)
    loss, correct = evaluate(mine, [(pk.asarray(x), pk.asarray(y)) for x, y in batches])
    tloss, tcorrect = torch_evaluate(theirs, [(torch.tensor(x), torch.tensor(y))
                                              for x, y in batches])
    assert loss == pytest.approx(tloss, rel=1e-4) and correct == tcorrect


def test_with_dropout_on_training_lowers_the_loss():
    pk.random.seed(5)
    model = Net()
    opt = pk.optim.Adadelta(model.parameters(), lr=1.0)
    x, y = (pk.asarray(a) for a in fake_batches()[0])
    model.eval()
    start = F.nll_loss(model(x), y).item()
    model.train()
    assert not np.array_equal(model(x).numpy(), model(x).numpy())  # masks differ each call
    for _ in range(4):
        opt.zero_grad()
        F.nll_loss(model(x), y).backward()
        opt.step()
    model.eval()
    assert F.nll_loss(model(x), y).item() < start
