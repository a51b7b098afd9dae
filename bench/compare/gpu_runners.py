"""For each kernel: seeded random inputs on the GPU, the Triton launch (at the
configuration cases.py names), the PyTorch eager sequence, and the check that
the two outputs agree. Imported on a GPU machine only (needs torch)."""

import math

import torch
import torch.nn.functional as F
import triton

import cases
import triton_attention
import triton_elementwise
import triton_gemm
import triton_norms

TORCH_DTYPE = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
# Normwise relative error allowed between Triton's and torch's outputs: a few
# roundings of the output dtype (both accumulate in f32, in different orders).
TOLERANCE = {"f16": 4e-3, "bf16": 3e-2, "f32": 1e-5}


class Run:
    """triton() and torch() launch once each; outputs() gives (name, triton's,
    torch's, keep_mask_or_None) to compare after both ran."""

    def __init__(self, triton_fn, torch_fn, outputs):
        self.triton, self.torch, self.outputs = triton_fn, torch_fn, outputs


def uniform(shape, dtype, generator, lo=-4.0, hi=4.0):
    return (torch.rand(shape, generator=generator, device="cuda", dtype=torch.float32) * (hi - lo) + lo).to(dtype)


def vector_add(case, g):
    dt = TORCH_DTYPE[case.dtype]
    n = case.params["n"]
    x, y = uniform(n, dt, g), uniform(n, dt, g)
    out = torch.empty_like(x)
    ref = {}
    grid = (triton.cdiv(n, 1024), )
    return Run(lambda: triton_elementwise.vector_add[grid](x, y, out, n, BLOCK=1024, num_warps=4),
               lambda: ref.__setitem__("out", x + y), lambda: [("out", out, ref["out"], None)])


def dropout(case, g):
    dt = TORCH_DTYPE[case.dtype]
    n, p = case.params["n"], case.params["p"]
    x = uniform(n, dt, g)
    out = torch.empty_like(x)
    ref = {}
    grid = (triton.cdiv(n, 1024), )
    # Different generators drop different elements: compare where Triton kept.
    return Run(lambda: triton_elementwise.dropout[grid](x, out, n, p, 0, 0, BLOCK=1024, num_warps=4),
               lambda: ref.__setitem__("out", F.dropout(x, p, training=True)),
               lambda: [("out", out, (x.float() / (1 - p)).to(dt), out != 0)])


def softmax(case, g):
    dt = TORCH_DTYPE[case.dtype]
    rows, cols = case.params["rows"], case.params["cols"]
    x = uniform((rows, cols), dt, g)
    out = torch.empty_like(x)
    ref = {}
    launch = cases.softmax(rows, cols, case.dtype).triton[0]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    compiled = triton_norms.softmax.warmup(out, x, cols, cols, rows, cols, **launch.constexprs,
                                          num_warps=launch.num_warps, grid=(1, ))
    compiled._init_handles()
    # Tutorial 02: as many persistent programs as fit on the SMs at once.
    per_sm = max(1, min(65536 // max(1, compiled.n_regs * 32 * launch.num_warps),
                        (228 * 1024) // max(1, compiled.metadata.shared)))
    grid = (min(rows, sms * per_sm), )
    return Run(lambda: triton_norms.softmax[grid](out, x, cols, cols, rows, cols, **launch.constexprs,
                                                  num_warps=launch.num_warps),
               lambda: ref.__setitem__("out", torch.softmax(x, dim=-1)), lambda: [("out", out, ref["out"], None)])


def layer_norm(case, g):
    dt = TORCH_DTYPE[case.dtype]
    m, n = case.params["m"], case.params["n"]
    x, w, b = uniform((m, n), dt, g, -1, 7), uniform(n, dt, g, 0.5, 1.5), uniform(n, dt, g, -1, 1)
    y = torch.empty_like(x)
    mean, rstd = torch.empty(m, device="cuda"), torch.empty(m, device="cuda")
    launch = cases.layer_norm(m, n, case.dtype).triton[0]
    ref = {}
    return Run(lambda: triton_norms.layer_norm_forward[(m, )](x, y, w, b, mean, rstd, n, n, 1e-5,
                                                              **launch.constexprs, num_warps=launch.num_warps),
               lambda: ref.__setitem__("y", F.layer_norm(x, (n, ), w, b, 1e-5)), lambda: [("y", y, ref["y"], None)])


def layer_norm_backward(case, g):
    dt = TORCH_DTYPE[case.dtype]
    m, n = case.params["m"], case.params["n"]
    x, w, b = uniform((m, n), dt, g, -1, 7), uniform(n, dt, g, 0.5, 1.5), uniform(n, dt, g, 0.5, 1.5)
    dy = uniform((m, n), dt, g, -0.5, 1.5)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [n], w, b, 1e-5)
    mean, rstd = mean.reshape(m).float(), rstd.reshape(m).float()
    dx_dx, dx_dwdb = cases.layer_norm_backward(m, n, case.dtype).triton
    groups = dx_dx.constexprs["GROUP_M"]
    dx = torch.empty_like(x)
    partial_dw = torch.empty((groups, n), device="cuda")
    partial_db = torch.empty((groups, n), device="cuda")
    locks = torch.zeros(2 * groups, dtype=torch.int32, device="cuda")
    dw, db = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
    ref = {}

    def run_triton():
        locks.zero_()
        triton_norms.layer_norm_backward_dx[(m, )](dx, dy, partial_dw, partial_db, x, w, mean, rstd, locks, n, n,
                                                   **dx_dx.constexprs, num_warps=dx_dx.num_warps)
        triton_norms.layer_norm_backward_dwdb[(triton.cdiv(n, 128), )](partial_dw, partial_db, dw, db, groups, n,
                                                                       **dx_dwdb.constexprs,
                                                                       num_warps=dx_dwdb.num_warps)

    def run_torch():
        ref["dx"], ref["dw"], ref["db"] = torch.ops.aten.native_layer_norm_backward(
            dy, x, [n], mean.reshape(m, 1), rstd.reshape(m, 1), w, b, [True, True, True])

    return Run(run_triton, run_torch, lambda: [("dx", dx, ref["dx"], None), ("dw", dw, ref["dw"].float(), None),
                                               ("db", db, ref["db"].float(), None)])


def rms_norm(case, g):
    dt = TORCH_DTYPE[case.dtype]
    m, n = case.params["m"], case.params["n"]
    x, w = uniform((m, n), dt, g, -1, 7), uniform(n, dt, g, 0.5, 1.5)
    y, rstd = torch.empty_like(x), torch.empty(m, device="cuda")
    launch = cases.rms_norm(m, n, case.dtype).triton[0]
    ref = {}
    return Run(lambda: triton_norms.rms_norm_forward[(m, )](x, y, w, rstd, n, n, 1e-5, **launch.constexprs,
                                                            num_warps=launch.num_warps),
               lambda: ref.__setitem__("y", F.rms_norm(x, (n, ), w, 1e-5)), lambda: [("y", y, ref["y"], None)])


def matmul(case, g):
    dt = TORCH_DTYPE[case.dtype]
    size, p = case.params["m"], float(case.params["dropout"])
    epilogue = case.params["bias"] == "on"
    a, b, bias = uniform((size, size), dt, g, -1, 1), uniform((size, size), dt, g, -1, 1), uniform(size, dt, g)
    c = torch.empty((size, size), dtype=dt, device="cuda")
    launch = cases.matmul(size, case.dtype).triton[0]
    k = dict(launch.constexprs, EPILOGUE=epilogue)
    grid = (triton.cdiv(size, k["BLOCK_M"]) * triton.cdiv(size, k["BLOCK_N"]), )
    ref = {}

    def run_torch():
        if epilogue:
            ref["c"] = F.dropout(F.gelu(torch.addmm(bias, a, b)), p, training=True)
        else:
            ref["c"] = a @ b

    def outputs():
        if not epilogue:
            return [("c", c, ref["c"], None)]
        return [("c", c, (F.gelu(torch.addmm(bias, a, b).float()) / (1 - p)).to(dt), c != 0)]

    return Run(lambda: triton_gemm.matmul_bias_gelu_dropout[grid](
        a, b, c, bias, size, size, size, size, 1, size, 1, size, 1, p, 0, 0, **k,
        num_warps=launch.num_warps, num_stages=launch.num_stages), run_torch, outputs)


def conv2d_bn_silu(case, g):
    dt = TORCH_DTYPE[case.dtype]
    q = case.params
    x = uniform((q["n"], q["c"], q["h"], q["w"]), dt, g, -1, 1)
    w = uniform((q["k"], q["c"], q["r"], q["s"]), dt, g, -1, 1) / math.sqrt(q["c"] * q["r"] * q["s"])
    scale, shift = uniform(q["k"], torch.float32, g, 0.5, 1.5), uniform(q["k"], torch.float32, g, -1, 1)
    out_size = (q["h"] + 2 * q["pad"] - q["r"]) // q["stride"] + 1
    y = torch.empty((q["n"], q["k"], out_size, out_size), dtype=dt, device="cuda")
    launch = cases.conv2d_bn_silu(case.dtype).triton[0]
    k = launch.constexprs
    grid = (triton.cdiv(q["n"] * out_size * out_size, k["BLOCK_M"]), triton.cdiv(q["k"], k["BLOCK_N"]))
    ref = {}

    def run_torch():
        z = F.conv2d(x, w, None, q["stride"], q["pad"])
        ref["y"] = F.silu(z * scale.to(dt)[:, None, None] + shift.to(dt)[:, None, None])

    return Run(lambda: triton_gemm.conv2d_bn_silu[grid](
        x, w, scale, shift, y, q["n"], q["c"], q["h"], q["w"], q["k"], out_size, out_size, q["r"], q["s"], q["stride"],
        q["pad"], 1, **k, num_warps=launch.num_warps, num_stages=launch.num_stages), run_torch,
        lambda: [("y", y, ref["y"], None)])


def attention(case, g):
    dt = TORCH_DTYPE[case.dtype]
    q_ = case.params
    batch, heads, seq, d = q_["batch"], q_["heads"], q_["seq"], q_["head_dim"]
    causal = q_["causal"] == "on"
    q, k, v = (uniform((batch, heads, seq, d), dt, g, -1, 1) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty((batch * heads, seq), device="cuda")
    launch = cases.attention(d, causal, case.dtype, heads, seq).triton[0]
    kc = launch.constexprs
    if seq % kc["BLOCK_M"] or seq % kc["BLOCK_N"]:
        raise SystemExit(f"compare.py: {case.name}: seq {seq} is not a multiple of the Triton kernel's blocks")
    grid = (seq // kc["BLOCK_M"], batch * heads)
    ref = {}
    return Run(lambda: triton_attention.attention_forward[grid](
        q, k, v, o, lse, seq, heads, d ** -0.5, heads * seq * d, seq * d, **kc, num_warps=launch.num_warps,
        num_stages=launch.num_stages),
        lambda: ref.__setitem__("o", F.scaled_dot_product_attention(q, k, v, is_causal=causal)),
        lambda: [("o", o, ref["o"], None)])


RUNNERS = {f.__name__: f for f in (vector_add, dropout, softmax, layer_norm, layer_norm_backward, rms_norm, matmul,
                                   conv2d_bn_silu, attention)}


def agreement(outputs, dtype):
    """Per output: normwise relative error of Triton's against torch's (where
    Triton kept an element, for dropout), and whether it is within tolerance."""
    report = []
    for name, got, want, keep in outputs:
        got, want = got.float(), want.float()
        if keep is not None:
            want = torch.where(keep, want, torch.zeros_like(want))
        error = (torch.linalg.vector_norm(got - want) / torch.linalg.vector_norm(want).clamp_min(1e-30)).item()
        entry = {"output": name, "relative_error": error, "tolerance": TOLERANCE[dtype],
                 "ok": error <= TOLERANCE[dtype]}
        if keep is not None:
            entry["kept_fraction"] = keep.float().mean().item()
        report.append(entry)
    return report
