#!/usr/bin/env python3
"""Checks the Triton kernels of bench/compare without a GPU: each runs under
Triton's interpreter (TRITON_INTERPRET=1) on small seeded random inputs, at the
configuration cases.py gives it, against a float64 NumPy reference; tolerances
come from the dtype and the reduction length. Prints one line per check and
exits 1 when any fails.

The interpreter expects torch tensors; HostTensor gives a NumPy array the part
of their interface it uses (pointer, dtype, storage), so torch is not needed.
"""

import gc
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
# With Python's cycle collector running, Triton 3.6's interpreter now and then
# reads freed memory in a kernel run after one that called tl.rand (garbage
# results, different checks failing from run to run); with it off, every run
# of these checks agrees.
gc.disable()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cases  # noqa: E402  (its TritonLaunch entries name the kernels)

U16, U32 = 2.0**-11, 2.0**-24  # unit roundoffs of f16 and f32
RNG = np.random.default_rng(2024)


class _Dtype:

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class HostTensor:
    """A NumPy array as the interpreter sees a CPU torch tensor."""

    def __init__(self, array):
        self.array = array
        self.dtype = _Dtype(array.dtype.name)

    def data_ptr(self):
        return self.array.ctypes.data

    def untyped_storage(self):
        return self

    def cpu(self):
        return self

    def copy_(self, other):
        return self

    def storage_offset(self):
        return 0

    def size(self):
        return self.array.shape

    def stride(self):
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def new_empty(self, *args, **kwargs):
        return HostTensor(self.array)

    def set_(self, storage, offset, size, stride):
        self.array = storage.array
        return self


def uniform(shape, lo=-4.0, hi=4.0, dtype=np.float16):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def relative_error(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


FAILURES = []


def check(name, error, tolerance):
    ok = error <= tolerance
    print(f"{'ok  ' if ok else 'FAIL'} {name}: relative error {error:.3g} (tolerance {tolerance:.3g})")
    if not ok:
        FAILURES.append(name)


def launch(spec, grid, *args, **constexprs):
    wrapped = [HostTensor(a) if isinstance(a, np.ndarray) else a for a in args]
    spec.fn[grid](*wrapped, **dict(spec.constexprs, **constexprs), num_warps=spec.num_warps)


def vector_add():
    n = 3000
    x, y = uniform(n), uniform(n)
    out = np.zeros(n, np.float16)
    launch(cases.vector_add(n).triton[0], (3, ), x, y, out, n)
    check("vector_add", relative_error(out, x.astype(np.float64) + y), U16)


def dropout():
    n, p = 5120, 0.25
    x = uniform(n)
    outs = []
    for seed in (0, 1):
        out = np.zeros(n, np.float16)
        launch(cases.dropout(n, p=p).triton[0], (5, ), x, out, n, p, seed, 0)
        outs.append(out)
    kept = outs[0] != 0
    scaled = (x.astype(np.float64) / (1 - p))
    check("dropout kept values", relative_error(outs[0][kept], scaled[kept]), 2 * U16)
    # The kept fraction within 4 standard deviations of 1 - p; seeds differ.
    sigma = (p * (1 - p) / n)**0.5
    check("dropout kept fraction", abs(kept.mean() - (1 - p)), 4 * sigma)
    check("dropout seeds give different masks", float((kept == (outs[1] != 0)).all()), 0.0)


def softmax():
    rows, cols = 7, 300
    x = uniform((rows, cols))
    out = np.zeros_like(x)
    launch(cases.softmax(rows, cols).triton[0], (3, ), out, x, cols, cols, rows, cols)
    e = np.exp(x - x.max(axis=1, keepdims=True).astype(np.float64))
    check("softmax", relative_error(out, e / e.sum(axis=1, keepdims=True)), U16 + (cols + 4) * U32)


def layer_norm():
    m, n = 5, 300
    x, w, b = uniform((m, n), -1, 7), uniform(n, 0.5, 1.5), uniform(n, -1, 1)
    y = np.zeros_like(x)
    mean, rstd = np.zeros(m, np.float32), np.zeros(m, np.float32)
    # BLOCK 128 makes the forward loop over the row in three chunks.
    launch(cases.layer_norm(m, n).triton[0], (m, ), x, y, w, b, mean, rstd, n, n, 1e-5, BLOCK=128)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=1, keepdims=True)
    r = 1 / np.sqrt(((xd - mu)**2).mean(axis=1, keepdims=True) + 1e-5)
    check("layer_norm y", relative_error(y, (xd - mu) * r * w + b), 4 * U16 + 2 * n * U32)
    check("layer_norm rstd", relative_error(rstd, r[:, 0]), 2 * n * U32)


def layer_norm_backward():
    m, n = 40, 300
    x, w, dy = uniform((m, n), -1, 7), uniform(n, 0.5, 1.5), uniform((m, n), -0.5, 1.5)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=1, keepdims=True)
    r = 1 / np.sqrt(((xd - mu)**2).mean(axis=1, keepdims=True) + 1e-5)
    mean, rstd = mu[:, 0].astype(np.float32), r[:, 0].astype(np.float32)
    dx_spec, dwdb_spec = cases.layer_norm_backward(m, n).triton
    groups = 8  # several rows per partial row, so the lock's add path runs
    dx = np.zeros_like(x)
    partial_dw, partial_db = np.zeros((groups, n), np.float32), np.zeros((groups, n), np.float32)
    locks = np.zeros(2 * groups, np.int32)
    dw, db = np.zeros(n, np.float32), np.zeros(n, np.float32)
    launch(dx_spec, (m, ), dx, dy, partial_dw, partial_db, x, w, mean, rstd, locks, n, n, GROUP_M=groups)
    launch(dwdb_spec, ((n + 127) // 128, ), partial_dw, partial_db, dw, db, groups, n)
    x_hat = (xd - mean[:, None].astype(np.float64)) * rstd[:, None]
    wdy = w * dy.astype(np.float64)
    c1 = (x_hat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    check("layer_norm_backward dx", relative_error(dx, (wdy - (x_hat * c1 + c2)) * rstd[:, None]),
          4 * U16 + 2 * n * U32)
    check("layer_norm_backward dw", relative_error(dw, (dy * x_hat).sum(axis=0)), 2 * m * U32 + 4 * U32)
    check("layer_norm_backward db", relative_error(db, dy.astype(np.float64).sum(axis=0)), 2 * m * U32)


def rms_norm():
    m, n = 5, 300
    x, w = uniform((m, n), -1, 7), uniform(n, 0.5, 1.5)
    y, rstd = np.zeros_like(x), np.zeros(m, np.float32)
    launch(cases.rms_norm(m, n).triton[0], (m, ), x, y, w, rstd, n, n, 1e-5)
    xd = x.astype(np.float64)
    r = 1 / np.sqrt((xd**2).mean(axis=1, keepdims=True) + 1e-5)
    check("rms_norm y", relative_error(y, xd * r * w), 3 * U16 + 2 * n * U32)


def gelu(z):
    from math import erf
    return 0.5 * z * (1 + np.vectorize(erf)(z / 2**0.5))


def matmul():
    m, n, k, p = 100, 300, 70, 0.2
    a, b, bias = uniform((m, k), -1, 1), uniform((k, n), -1, 1), uniform(n, -1, 1)
    c = np.zeros((m, n), np.float16)
    spec = cases.matmul(k).triton[0]
    grid = (-(-m // spec.constexprs["BLOCK_M"]) * -(-n // spec.constexprs["BLOCK_N"]), )
    launch(spec, grid, a, b, c, bias, m, n, k, k, 1, n, 1, n, 1, p, 7, 0)
    want = gelu(a.astype(np.float64) @ b + bias) / (1 - p)
    kept = c != 0
    check("matmul epilogue kept values", relative_error(c[kept], want[kept]), 4 * U16 + 2 * k * U32)
    # GELU of a very negative sum rounds to 0 in f16: count only where it cannot.
    visible = np.abs(want) > 1e-3
    check("matmul dropout kept fraction", abs(kept[visible].mean() - (1 - p)),
          4 * (p * (1 - p) / visible.sum())**0.5)


def conv2d_bn_silu():
    # Both orders of the reduction: terms in order (3 channels, 7 x 7: 147
    # terms, so the steps' carries reach the kernel rows and the channels)
    # and taps outside the channels (34: a whole and a partial step of 32
    # per tap).
    for channels, kernel, taps_outer in ((3, 7, False), (34, 3, True)):
        batch, size, out_channels, pad = 2, 9, 20, kernel // 2
        x = uniform((batch, channels, size, size), -1, 1)
        w = uniform((out_channels, channels, kernel, kernel), -1, 1)
        scale, shift = uniform(out_channels, 0.5, 1.5, np.float32), uniform(out_channels, -1, 1, np.float32)
        y = np.zeros((batch, out_channels, size, size), np.float16)
        spec = cases.conv2d_bn_silu(channels=channels).triton[0]
        assert spec.constexprs["TAPS_OUTER"] == taps_outer
        grid = (-(-batch * size * size // spec.constexprs["BLOCK_M"]), -(-out_channels // spec.constexprs["BLOCK_N"]))
        launch(spec, grid, x, w, scale, shift, y, batch, channels, size, size, out_channels, size, size, kernel,
               kernel, 1, pad, 1)
        padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        z = np.zeros((batch, out_channels, size, size))
        for i in range(kernel):
            for j in range(kernel):
                z += np.einsum("nchw,kc->nkhw", padded[:, :, i:i + size, j:j + size],
                               w[:, :, i, j].astype(np.float64))
        z = z * scale[None, :, None, None] + shift[None, :, None, None]
        check(f"conv2d_bn_silu (taps outer: {taps_outer})", relative_error(y, z / (1 + np.exp(-z))),
              4 * U16 + 2 * channels * kernel * kernel * U32)


def attention():
    batch, heads, seq, d = 1, 2, 256, 64
    for causal in (True, False):
        q, k, v = (uniform((batch, heads, seq, d), -1, 1) for _ in range(3))
        o = np.zeros_like(q)
        lse = np.zeros((batch * heads, seq), np.float32)
        spec = cases.attention(d, causal, heads=heads, seq=seq).triton[0]
        launch(spec, (seq // spec.constexprs["BLOCK_M"], batch * heads), q, k, v, o, lse, seq, heads, d**-0.5,
               heads * seq * d, seq * d)
        s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k.astype(np.float64)) * d**-0.5
        if causal:
            s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
        top = s.max(axis=-1, keepdims=True)
        weights = np.exp(s - top)
        total = weights.sum(axis=-1, keepdims=True)
        want_o = np.einsum("bhqk,bhkd->bhqd", weights / total, v.astype(np.float64))
        want_lse = (top + np.log(total))[..., 0].reshape(batch * heads, seq)
        name = "attention " + ("causal" if causal else "full")
        # P is rounded to f16 before the P V product: a few f16 roundings.
        check(name + " o", relative_error(o, want_o), 8 * U16 + 2 * seq * U32)
        check(name + " lse", relative_error(lse, want_lse), 2 * seq * U32 + 4 * U32)


def main():
    for run in (vector_add, dropout, softmax, layer_norm, layer_norm_backward, rms_norm, matmul, conv2d_bn_silu,
                attention):
        run()
    if FAILURES:
        print(f"interpret_check.py: {len(FAILURES)} checks failed: {', '.join(FAILURES)}")
        return 1
    print("interpret_check.py: every Triton kernel agrees with its NumPy reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
