"""PyTorch programs trained on "pykern" and on the CPU from the same seed, their losses
compared step by step: a convolutional MNIST-style classifier with dropout, Adadelta and a
StepLR schedule; a ResNet-style CNN with BatchNorm2d and SGD with momentum; a small GPT with
weight tying, AdamW parameter groups, gradient clipping, dropout and sampling. The models are
written here in PyTorch's usual style; only the device string differs between the runs."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import pykern.torch  # noqa: E402,F401

DEV = "pykern"


# ---------------------------------------------------------------- an MNIST-style classifier


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def train_classifier(device, steps=4):
    torch.manual_seed(0)
    model = Net().to(device)
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    images = torch.randn(steps, 8, 1, 14, 14)
    labels = torch.randint(0, 10, (steps, 8))
    losses = []
    model.train()
    for step in range(steps):
        x, y = images[step].to(device), labels[step].to(device)
        opt.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        test = F.nll_loss(model(images[0].to(device)), labels[0].to(device), reduction="sum")
        correct = model(images[0].to(device)).argmax(dim=1).eq(labels[0].to(device)).sum()
    return losses + [test.item(), correct.item()]


def test_mnist_style_classifier_with_adadelta_and_steplr():
    cpu, dev = train_classifier("cpu"), train_classifier(DEV)
    assert dev == pytest.approx(cpu, rel=1e-4, abs=1e-5)


# ---------------------------------------------------------------- a ResNet-style CNN


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(inplace=True))
        self.layers = nn.Sequential(Block(8, 8, 1), Block(8, 16, 2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def train_resnet(device, steps=3):
    torch.manual_seed(1)
    model = ResNet().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    images = torch.randn(steps, 4, 3, 12, 12)
    labels = torch.randint(0, 5, (steps, 4))
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(images[step].to(device)), labels[step].to(device))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        losses.append(F.cross_entropy(model(images[0].to(device)),
                                      labels[0].to(device)).item())
    stats = [model.layers[1].bn2.running_mean.cpu(), model.layers[1].bn2.running_var.cpu()]
    return losses, stats


def test_resnet_style_cnn_with_batchnorm():
    (cpu, cpu_stats), (dev, dev_stats) = train_resnet("cpu"), train_resnet(DEV)
    assert dev == pytest.approx(cpu, rel=1e-4, abs=1e-5)
    for a, e in zip(dev_stats, cpu_stats):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- a small GPT


class SelfAttention(nn.Module):
    def __init__(self, dim, heads, block, dropout, fused):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.heads, self.dropout, self.fused = heads, dropout, fused
        self.attn_drop, self.resid_drop = nn.Dropout(dropout), nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block,
                                                                                 block))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        if self.fused:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training
                                               else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
            y = self.attn_drop(F.softmax(att, dim=-1)) @ v
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))


class GPTBlock(nn.Module):
    def __init__(self, dim, heads, block, dropout, fused):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads, block, dropout, fused)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=23, block=16, dim=32, heads=4, layers=2, dropout=0.0, fused=True):
        super().__init__()
        self.block = block
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(block, dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(GPTBlock(dim, heads, block, dropout, fused)
                                    for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.wte.weight = self.head.weight  # weight tying
        self.apply(self._init)

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        pos = torch.arange(idx.size(1), dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits[:, [-1], :], None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)

    def optimizer(self, lr):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))

    @torch.no_grad()
    def generate(self, idx, new_tokens, temperature=0.8, top_k=5):
        for _ in range(new_tokens):
            logits, _ = self(idx[:, -self.block:])
            logits = logits[:, -1, :] / temperature
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = -float("inf")
            nxt = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, nxt), dim=1)
        return idx


def train_gpt(device, steps=3, dropout=0.0, fused=True):
    torch.manual_seed(2)
    model = GPT(dropout=dropout, fused=fused).to(device)
    opt = model.optimizer(lr=3e-3)
    data = torch.randint(0, 23, (400,))
    losses = []
    for _ in range(steps):
        ix = torch.randint(len(data) - 16, (4,))
        x = torch.stack([data[i:i + 16] for i in ix]).to(device)
        y = torch.stack([data[i + 1:i + 17] for i in ix]).to(device)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    model.eval()
    torch.manual_seed(3)
    tokens = model.generate(torch.zeros((1, 1), dtype=torch.long, device=device), 6)
    return losses, tokens.cpu().tolist()


@pytest.mark.parametrize("fused", [True, False])
def test_gpt_training_and_generation(fused):
    (cpu, cpu_tokens), (dev, dev_tokens) = train_gpt("cpu", fused=fused), \
        train_gpt(DEV, fused=fused)
    assert dev == pytest.approx(cpu, rel=1e-4, abs=1e-5)
    assert dev_tokens == cpu_tokens


def test_gpt_with_dropout_draws_as_the_cpu_does():
    cpu, dev = train_gpt("cpu", steps=2, dropout=0.1), train_gpt(DEV, steps=2, dropout=0.1)
    assert dev[0] == pytest.approx(cpu[0], rel=1e-4, abs=1e-5)
