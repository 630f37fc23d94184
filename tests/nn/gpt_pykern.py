"""gpt_torch.py's GPT ported to pykern: the same code with `torch` replaced by `pk`, the
imports changed, and the lines that meet a documented difference between the two libraries
changed (`transpose(a, b)` -> `swapaxes(a, b)`, `torch.from_numpy` -> `pk.asarray`);
test_gpt_port.py checks that nothing else differs and that both train alike. docs/coming_from.md
("Porting a GPT from PyTorch") walks through the changes.
"""

import math
from dataclasses import dataclass

import numpy as np
import pykern as pk
import pykern.nn as nn
from pykern.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 65
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True
    fused_attention: bool = True  # F.scaled_dot_product_attention, else spelled out


class LayerNorm(nn.Module):
    """A layer norm whose bias can be left out."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(pk.ones(ndim))
        self.bias = nn.Parameter(pk.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        assert cfg.n_embd % cfg.n_head == 0
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.out_drop = nn.Dropout(cfg.dropout)
        self.n_head, self.n_embd, self.p_drop = cfg.n_head, cfg.n_embd, cfg.dropout
        self.fused = cfg.fused_attention
        if not self.fused:
            causal = pk.tril(pk.ones(cfg.block_size, cfg.block_size))
            self.register_buffer("mask", causal.view(1, 1, cfg.block_size, cfg.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(self.n_embd, dim=2)
        head = C // self.n_head
        q = q.view(B, T, self.n_head, head).swapaxes(1, 2)
        k = k.view(B, T, self.n_head, head).swapaxes(1, 2)
        v = v.view(B, T, self.n_head, head).swapaxes(1, 2)
        if self.fused:
            p = self.p_drop if self.training else 0
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=p,
                                               is_causal=True)
        else:
            scores = (q @ k.swapaxes(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            scores = scores.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            weights = self.attn_drop(F.softmax(scores, dim=-1))
            y = weights @ v
        y = y.swapaxes(1, 2).contiguous().view(B, T, C)
        return self.out_drop(self.c_proj(y))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = SelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = FeedForward(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
            wpe=nn.Embedding(cfg.block_size, cfg.n_embd),
            drop=nn.Dropout(cfg.dropout),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
            ln_f=LayerNorm(cfg.n_embd, bias=cfg.bias),
        ))
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # one matrix for both
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # residual projections start smaller
            if name.endswith("c_proj.weight"):
                pk.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            pk.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                pk.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            pk.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_params(self, non_embedding=True):
        n = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n -= self.transformer.wpe.weight.numel()
        return n

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.cfg.block_size, f"{t} tokens, block size {self.cfg.block_size}"
        pos = pk.arange(0, t, dtype=pk.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, [-1], :]), None  # the last position only
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                               ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = {name: p for name, p in self.named_parameters() if p.requires_grad}
        decay = [p for p in params.values() if p.dim() >= 2]
        no_decay = [p for p in params.values() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return pk.optim.AdamW(groups, lr=learning_rate, betas=betas)

    @pk.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            if idx.size(1) <= self.cfg.block_size:
                context = idx
            else:
                context = idx[:, -self.cfg.block_size:]
            logits, _ = self(context)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = pk.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = pk.multinomial(probs, num_samples=1)
            idx = pk.cat((idx, idx_next), dim=1)
        return idx


def get_lr(step, warmup, decay_steps, max_lr, min_lr):
    """Linear warm-up, then a cosine down to min_lr."""
    if step < warmup:
        return max_lr * (step + 1) / (warmup + 1)
    if step > decay_steps:
        return min_lr
    ratio = (step - warmup) / (decay_steps - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (max_lr - min_lr)


def get_batch(data, block_size, starts):
    """(inputs, targets) of the windows of `data` (a numpy array of token ids) at `starts`."""
    x = pk.stack([pk.asarray(data[i:i + block_size].astype(np.int64)) for i in starts])
    y = pk.stack([pk.asarray(data[i + 1:i + 1 + block_size].astype(np.int64))
                     for i in starts])
    return x, y


@pk.no_grad()
def estimate_loss(model, batches):
    model.eval()
    losses = pk.zeros(len(batches))
    for k, (x, y) in enumerate(batches):
        _, loss = model(x, y)
        losses[k] = loss.item()
    model.train()
    return losses.mean().item()


def train(model, data, schedule, lr=1e-2, warmup=2, grad_clip=1.0):
    """One AdamW step per batch of window starts in `schedule`; the losses as floats."""
    optimizer = model.configure_optimizers(0.1, lr, (0.9, 0.95))
    steps = len(schedule)
    losses = []
    model.train()
    for step, starts in enumerate(schedule):
        for group in optimizer.param_groups:
            group["lr"] = get_lr(step, warmup, steps, lr, lr / 10)
        x, y = get_batch(data, model.cfg.block_size, starts)
        _, loss = model(x, y)
        loss.backward()
        if grad_clip != 0.0:
            pk.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return losses
