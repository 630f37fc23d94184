"""float64 numpy references of conv2d (groups, asymmetric padding) and conv_transpose2d, tap by
tap, for the gradient checks."""

from __future__ import annotations

import numpy as np


def np_conv2d(x, w, b, s, pads, d, groups):
    """pads: ((top, bottom), (left, right))."""
    (pt, pb), (pl, pr) = pads
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd + pl + pr - d[1] * (kw - 1) - 1) // s[1] + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for gi in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, gi * cg:(gi + 1) * cg,
                           i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                           j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]
                out[:, gi * og:(gi + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[gi * og:(gi + 1) * og, :, i, j])
    return out if b is None else out + b[None, :, None, None]


def np_conv_transpose2d(x, w, b, s, p, op, d, groups):
    """Each input pixel adds its filter-weighted taps into a full-size result, then the
    padding is cropped (output_padding extends the bottom and right)."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    oh = (h - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1
    ow = (wd - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1
    full = np.zeros((n, og * groups, p[0] + oh + s[0] * h + d[0] * kh,
                     p[1] + ow + s[1] * wd + d[1] * kw))
    for gi in range(groups):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", x[:, gi * cg:(gi + 1) * cg],
                                    w[gi * cg:(gi + 1) * cg, :, i, j])
                full[:, gi * og:(gi + 1) * og,
                     i * d[0]: i * d[0] + s[0] * (h - 1) + 1: s[0],
                     j * d[1]: j * d[1] + s[1] * (wd - 1) + 1: s[1]] += contrib
    out = full[:, :, p[0]:p[0] + oh, p[1]:p[1] + ow]
    return out if b is None else out + b[None, :, None, None]
