"""The update rules of the optimizers, as `@pk.func`s called by the fused step kernel
(`pykern.optim.kernels.step_kernel`), each PyTorch's single-tensor update in PyTorch's
order of operations.

A rule gets the parameter `p` and the gradient `g` (already negated when maximizing, with
the L2 weight decay added), three flat state buffers `s0, s1, s2`, the hyperparameter table
`h` with the parameter's row `r`, and the element `i`; it updates its state at `i` and
returns the new parameter. Its columns of the row follow the shared ones
(`kernels.FIRST_RULE_COLUMN`), computed on the host by the optimizer's `_row`.

Each rule is made by a factory of `uses` (a bool per state slot: whether a parameter of the
store keeps that state). The code of a slot no parameter uses (amsgrad's maximum, RMSprop's
momentum or average, SGD's momentum buffer) is left out of the variant, not just skipped at
run time: that slot is bound to a one-element placeholder, and an access of it, even one that
never runs, would keep the host backend from proving the kernel's accesses inside their
arrays (it would run every workgroup checked, and unvectorised).
"""

from __future__ import annotations

import functools

import pykern as pk

from pykern.optim.kernels import FIRST_RULE_COLUMN as F0

# SGD: s0 = momentum_buffer. DAMPENED is 1 - dampening; FIRST is 1.0 on the step that
# creates the momentum buffer (it starts as the gradient itself)
SGD_LR, SGD_MOMENTUM, SGD_DAMPENED, SGD_NESTEROV, SGD_FIRST = range(F0, F0 + 5)
SGD_COLUMNS = F0 + 5

# Adam and AdamW: s0 = exp_avg, s1 = exp_avg_sq, s2 = max_exp_avg_sq (amsgrad). DECAY is
# 1 - lr * weight_decay for AdamW (1 for Adam, whose decay is the shared L2 column),
# WEIGHT1 = 1 - beta1, WEIGHT2 = 1 - beta2, STEP_SIZE = lr / (1 - beta1**t),
# BC2_SQRT = sqrt(1 - beta2**t)
(ADAM_DECAY, ADAM_WEIGHT1, ADAM_BETA2, ADAM_WEIGHT2, ADAM_EPS, ADAM_STEP_SIZE, ADAM_BC2_SQRT,
 ADAM_AMSGRAD) = range(F0, F0 + 8)
ADAM_COLUMNS = F0 + 8

# RMSprop: s0 = square_avg, s1 = momentum_buffer, s2 = grad_avg (centered); WEIGHT = 1 - alpha
(RMS_LR, RMS_ALPHA, RMS_WEIGHT, RMS_EPS, RMS_MOMENTUM, RMS_CENTERED) = range(F0, F0 + 6)
RMS_COLUMNS = F0 + 6

# Adagrad: s0 = sum; CLR = lr / (1 + (t - 1) * lr_decay)
ADAGRAD_CLR, ADAGRAD_EPS = range(F0, F0 + 2)
ADAGRAD_COLUMNS = F0 + 2

# Adadelta: s0 = square_avg, s1 = acc_delta; WEIGHT = 1 - rho
ADADELTA_LR, ADADELTA_RHO, ADADELTA_WEIGHT, ADADELTA_EPS = range(F0, F0 + 4)
ADADELTA_COLUMNS = F0 + 4


@pk.func
def lerp(a, b, w):
    """a + w·(b - a) in torch's form, the one that is exact at its nearer end."""
    out = b - (b - a) * (1.0 - w)
    if w < 0.5:
        out = a + w * (b - a)
    return out


Uses = tuple[bool, bool, bool]


@functools.lru_cache(maxsize=None)
def sgd_rule(uses: Uses) -> pk.Func:
    """The SGD rule; without momentum in `uses[0]`, the plain step."""
    MOMENTUM = uses[0]  # noqa: N806

    @pk.func
    def sgd(p, g, s0, s1, s2, h, r, i):
        """torch.optim.SGD: b = g on the buffer's first step, else momentum·b + (1 -
        dampening)·g; d = g + momentum·b (nesterov) or b; p - lr·d."""
        d = g
        if MOMENTUM:
            momentum = h[r, SGD_MOMENTUM]
            if momentum != 0.0:
                b = g
                if h[r, SGD_FIRST] == 0.0:
                    b = momentum * s0[i] + h[r, SGD_DAMPENED] * g
                s0[i] = b
                d = b
                if h[r, SGD_NESTEROV] != 0.0:
                    d = g + momentum * b
        return p - h[r, SGD_LR] * d

    return sgd


@functools.lru_cache(maxsize=None)
def adam_rule(uses: Uses) -> pk.Func:
    """The Adam / AdamW rule; the amsgrad maximum only where `uses[2]`."""
    AMSGRAD = uses[2]  # noqa: N806

    @pk.func
    def adam(p, g, s0, s1, s2, h, r, i):
        """torch.optim.Adam / AdamW: p·(1 - lr·wd) (AdamW); m = lerp(m, g, 1 - beta1);
        v = beta2·v + (1 - beta2)·g²; with amsgrad v_max = max(v_max, v) divides instead
        of v; p - lr/(1 - beta1^t) · m / (sqrt(v)/sqrt(1 - beta2^t) + eps)."""
        p = p * h[r, ADAM_DECAY]
        m = lerp(s0[i], g, h[r, ADAM_WEIGHT1])
        v = s1[i] * h[r, ADAM_BETA2] + h[r, ADAM_WEIGHT2] * g * g
        s0[i] = m
        s1[i] = v
        if AMSGRAD:
            if h[r, ADAM_AMSGRAD] != 0.0:
                v = max(s2[i], v)
                s2[i] = v
        denom = pk.sqrt(v) / h[r, ADAM_BC2_SQRT] + h[r, ADAM_EPS]
        return p - h[r, ADAM_STEP_SIZE] * (m / denom)

    return adam


@functools.lru_cache(maxsize=None)
def rmsprop_rule(uses: Uses) -> pk.Func:
    """The RMSprop rule; momentum only where `uses[1]`, the centered average where `uses[2]`."""
    MOMENTUM, CENTERED = uses[1], uses[2]  # noqa: N806

    @pk.func
    def rmsprop(p, g, s0, s1, s2, h, r, i):
        """torch.optim.RMSprop: v = alpha·v + (1 - alpha)·g²; centered: a = lerp(a, g, 1 -
        alpha) and the root of v - a²; + eps; with momentum b = momentum·b + g/avg and p -
        lr·b, else p - lr·g/avg."""
        v = s0[i] * h[r, RMS_ALPHA] + h[r, RMS_WEIGHT] * g * g
        s0[i] = v
        avg = v
        if CENTERED:
            if h[r, RMS_CENTERED] != 0.0:
                a = lerp(s2[i], g, h[r, RMS_WEIGHT])
                s2[i] = a
                avg = v + (-a) * a
        avg = pk.sqrt(avg) + h[r, RMS_EPS]
        out = p - h[r, RMS_LR] * (g / avg)
        if MOMENTUM:
            momentum = h[r, RMS_MOMENTUM]
            if momentum > 0.0:
                b = s1[i] * momentum + g / avg
                s1[i] = b
                out = p - h[r, RMS_LR] * b
        return out

    return rmsprop


def adagrad_rule(uses: Uses) -> pk.Func:
    """The Adagrad rule (its one state slot is always used)."""
    return adagrad


def adadelta_rule(uses: Uses) -> pk.Func:
    """The Adadelta rule (its two state slots are always used)."""
    return adadelta


@pk.func
def adagrad(p, g, s0, s1, s2, h, r, i):
    """torch.optim.Adagrad: sum = sum + g²; p - clr·g/(sqrt(sum) + eps)."""
    total = s0[i] + g * g
    s0[i] = total
    return p - h[r, ADAGRAD_CLR] * (g / (pk.sqrt(total) + h[r, ADAGRAD_EPS]))


@pk.func
def adadelta(p, g, s0, s1, s2, h, r, i):
    """torch.optim.Adadelta: v = rho·v + (1 - rho)·g²; delta = sqrt(u + eps)/sqrt(v + eps)·g;
    u = rho·u + (1 - rho)·delta²; p - lr·delta."""
    rho = h[r, ADADELTA_RHO]
    w = h[r, ADADELTA_WEIGHT]
    eps = h[r, ADADELTA_EPS]
    v = s0[i] * rho + w * g * g
    s0[i] = v
    delta = pk.sqrt(s1[i] + eps) / pk.sqrt(v + eps) * g
    s1[i] = s1[i] * rho + w * delta * delta
    return p - h[r, ADADELTA_LR] * delta
