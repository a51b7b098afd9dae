"""The CPU half's cases: each kiln sample kernel at one configuration, its
launches paired with the Triton kernels that do the same work, each Triton
kernel at one configuration Triton users run, and why that one.

Shapes are chosen so that every launch argument has the facts (divisible by
16, equal to 1) it has at the GPU half's shapes, while the host work `kiln
dump` does to record the run (drawing the inputs) stays small.
"""

from dataclasses import dataclass, field

import triton_attention
import triton_elementwise
import triton_gemm
import triton_norms

TRITON_DTYPE = {"f16": "fp16", "bf16": "bf16", "f32": "fp32"}


@dataclass
class TritonLaunch:
    fn: object
    # (name, type, value): type "*fp16" (a pointer, 16-byte aligned as every
    # allocation is), "i32" or "fp32"; value an int or float as launched.
    args: list
    constexprs: dict
    num_warps: int
    num_stages: int = 3


@dataclass
class Case:
    name: str
    kiln_kernel: str
    kiln_flags: list
    dtype: str
    triton: list
    config: str  # the Triton configuration and why it stands for the kernel
    ci: bool = True  # in the CI subset
    at_kiln_config: bool = False  # Triton runs kiln's own configuration (the warps must agree)
    notes: list = field(default_factory=list)


def ptr(dtype):
    return "*" + TRITON_DTYPE.get(dtype, dtype)


def next_power_of_2(n):
    return 1 << (n - 1).bit_length()


def norm_warps(block):
    # Tutorial 05's heuristic: a warp per 256 elements of the row tile, 1 to 8.
    return min(max(block // 256, 1), 8)


def vector_add(n=1 << 20, dtype="f16"):
    t = ptr(dtype)
    launch = TritonLaunch(triton_elementwise.vector_add, [("x_ptr", t, None), ("y_ptr", t, None),
                                                          ("out_ptr", t, None), ("n", "i32", n)],
                          {"BLOCK": 1024}, num_warps=4)
    return Case("vector_add", "vector_add", ["--n", str(n)], dtype, [launch],
                "tutorial 01: BLOCK_SIZE 1024, the default 4 warps")


def dropout(n=1 << 20, dtype="f16", p=0.1):
    t = ptr(dtype)
    launch = TritonLaunch(triton_elementwise.dropout,
                          [("x_ptr", t, None), ("out_ptr", t, None), ("n", "i32", n), ("p", "fp32", p),
                           ("seed", "i32", 0), ("offset", "i32", 0)], {"BLOCK": 1024}, num_warps=4)
    return Case("dropout", "dropout", ["--n", str(n), "--p", str(p)], dtype, [launch],
                "tutorial 04: BLOCK_SIZE 1024, 4 warps")


def softmax(rows=1024, cols=4096, dtype="f16"):
    t = ptr(dtype)
    launch = TritonLaunch(triton_norms.softmax,
                          [("out_ptr", t, None), ("in_ptr", t, None), ("in_row_stride", "i32", cols),
                           ("out_row_stride", "i32", cols), ("n_rows", "i32", rows), ("n_cols", "i32", cols)],
                          {"BLOCK": next_power_of_2(cols), "NUM_STAGES": 4}, num_warps=8)
    return Case("softmax", "softmax", ["--rows", str(rows), "--cols", str(cols)], dtype, [launch],
                "tutorial 02: BLOCK = next power of 2 of the row, 8 warps, 4 stages (over 200 KB of shared memory "
                "per SM, as on H100/H200)")


def layer_norm(m=1024, n=4096, dtype="f16"):
    t = ptr(dtype)
    block = min(65536 // 2, next_power_of_2(n))
    launch = TritonLaunch(triton_norms.layer_norm_forward,
                          [("x_ptr", t, None), ("y_ptr", t, None), ("w_ptr", t, None), ("b_ptr", t, None),
                           ("mean_ptr", "*fp32", None), ("rstd_ptr", "*fp32", None), ("row_stride", "i32", n),
                           ("n", "i32", n), ("eps", "fp32", 1e-5)], {"BLOCK": block}, num_warps=norm_warps(block))
    return Case("layer_norm", "layer_norm", ["--m", str(m), "--n", str(n)], dtype, [launch],
                f"tutorial 05: BLOCK = min(64 KB / element, next power of 2 of n) = {block}, "
                f"warps = BLOCK / 256 capped at 8")


def layer_norm_group_rows(n):
    # Tutorial 05's partial rows for dw and db by row length.
    return 256 if n <= 1024 else 128 if n <= 4096 else 96 if n <= 8192 else 64


def layer_norm_backward(m=4096, n=4096, dtype="f16"):
    t = ptr(dtype)
    block = next_power_of_2(n)
    groups = layer_norm_group_rows(n)
    dx = TritonLaunch(triton_norms.layer_norm_backward_dx,
                      [("dx_ptr", t, None), ("dy_ptr", t, None), ("partial_dw_ptr", "*fp32", None),
                       ("partial_db_ptr", "*fp32", None), ("x_ptr", t, None), ("w_ptr", t, None),
                       ("mean_ptr", "*fp32", None), ("rstd_ptr", "*fp32", None), ("locks_ptr", "*i32", None),
                       ("row_stride", "i32", n), ("n", "i32", n)], {"GROUP_M": groups, "BLOCK": block},
                      num_warps=norm_warps(block))
    dwdb = TritonLaunch(triton_norms.layer_norm_backward_dwdb,
                        [("partial_dw_ptr", "*fp32", None), ("partial_db_ptr", "*fp32", None),
                         ("dw_ptr", "*fp32", None), ("db_ptr", "*fp32", None), ("groups", "i32", groups),
                         ("n", "i32", n)], {"BLOCK_M": 32, "BLOCK_N": 128}, num_warps=4)
    return Case("layer_norm_backward", "layer_norm_backward", ["--m", str(m), "--n", str(n)], dtype, [dx, dwdb],
                f"tutorial 05: dx with {groups} lock-guarded partial rows (its choice for n <= 4096), "
                f"BLOCK {block}, {norm_warps(block)} warps; dw/db reduction 32 x 128 tiles, 4 warps",
                notes=["algorithms differ: kiln sums partials per program over strided rows, then reduces; "
                       "Triton's tutorial takes a spin lock per partial row"])


def rms_norm(m=1024, n=4096, dtype="f16"):
    t = ptr(dtype)
    block = next_power_of_2(n)
    launch = TritonLaunch(triton_norms.rms_norm_forward,
                          [("x_ptr", t, None), ("y_ptr", t, None), ("w_ptr", t, None), ("rstd_ptr", "*fp32", None),
                           ("row_stride", "i32", n), ("n", "i32", n), ("eps", "fp32", 1e-5)], {"BLOCK": block},
                          num_warps=norm_warps(block))
    return Case("rms_norm", "rms_norm", ["--m", str(m), "--n", str(n)], dtype, [launch],
                f"no tutorial; the layer-norm tutorial's heuristics: the whole row in one tile ({block}), "
                f"{norm_warps(block)} warps")


def matmul(size=2048, dtype="bf16", tiles=(128, 256, 64, 8, 3), name="matmul", ci=True):
    block_m, block_n, block_k, warps, stages = tiles
    t = ptr(dtype)
    launch = TritonLaunch(triton_gemm.matmul_bias_gelu_dropout,
                          [("a_ptr", t, None), ("b_ptr", t, None), ("c_ptr", t, None), ("bias_ptr", t, None),
                           ("m", "i32", size), ("n", "i32", size), ("k", "i32", size), ("stride_am", "i32", size),
                           ("stride_ak", "i32", 1), ("stride_bk", "i32", size), ("stride_bn", "i32", 1),
                           ("stride_cm", "i32", size), ("stride_cn", "i32", 1), ("p", "fp32", 0.1),
                           ("seed", "i32", 0), ("offset", "i32", 0)],
                          {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": 8,
                           "EPILOGUE": True},
                          num_warps=warps, num_stages=stages)
    flags = ["--m", str(size), "--n", str(size), "--k", str(size), "--bias", "on", "--gelu", "erf", "--dropout", "0.1"]
    why = (f"tutorial 03's first autotune entry, {block_m}x{block_n}x{block_k}, GROUP_M 8, {warps} warps, "
           f"{stages} stages (the large-tile config for big bf16 GEMMs)" if name == "matmul" else
           f"Triton at kiln's tiles {block_m}x{block_n}x{block_k}, {warps} warps, {stages} stages: "
           f"the code generators side by side on the same tile")
    return Case(name, "matmul", flags, dtype, [launch], why, ci=ci, at_kiln_config=name != "matmul")


def conv2d_bn_silu(dtype="f16", batch=32, channels=64, size=56, out_channels=64, kernel=3, stride=1, pad=1,
                   name="conv2d_bn_silu", ci=True):
    t = ptr(dtype)
    out_size = (size + 2 * pad - kernel) // stride + 1
    launch = TritonLaunch(triton_gemm.conv2d_bn_silu,
                          [("x_ptr", t, None), ("w_ptr", t, None), ("scale_ptr", "*fp32", None),
                           ("shift_ptr", "*fp32", None), ("y_ptr", t, None), ("batch", "i32", batch),
                           ("channels", "i32", channels), ("height", "i32", size), ("width", "i32", size),
                           ("out_channels", "i32", out_channels), ("out_height", "i32", out_size),
                           ("out_width", "i32", out_size), ("kernel_h", "i32", kernel), ("kernel_w", "i32", kernel),
                           ("stride", "i32", stride), ("pad", "i32", pad), ("dilation", "i32", 1)],
                          {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "TAPS_OUTER": channels >= 32}, num_warps=4,
                          num_stages=4)
    flags = ["--n", str(batch), "--c", str(channels), "--h", str(size), "--w", str(size), "--k", str(out_channels),
             "--r", str(kernel), "--s", str(kernel), "--stride", str(stride), "--pad", str(pad)]
    return Case(name, "conv2d_bn_silu", flags, dtype, [launch],
                "no tutorial; an implicit GEMM is a matmul, so tutorial 03's 128x64x32, 4 warps, 4 stages "
                "(64 output channels fill BLOCK_N); the reduction in kiln's order: taps outside the channels "
                "from 32 channels, else the terms in order with carries (conv2d_select.hpp)", ci=ci)


def attention(head_dim=128, causal=True, dtype="f16", heads=16, seq=4096, ci=True):
    t = ptr(dtype)
    launch = TritonLaunch(triton_attention.attention_forward,
                          [("q_ptr", t, None), ("k_ptr", t, None), ("v_ptr", t, None), ("o_ptr", t, None),
                           ("lse_ptr", "*fp32", None), ("seq", "i32", seq), ("heads", "i32", heads),
                           ("sm_scale", "fp32", head_dim ** -0.5), ("stride_batch", "i32", heads * seq * head_dim),
                           ("stride_head", "i32", seq * head_dim)],
                          {"HEAD_DIM": head_dim, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": causal}, num_warps=4,
                          num_stages=3)
    flags = ["--batch", "1", "--heads", str(heads), "--seq", str(seq), "--head_dim", str(head_dim), "--causal",
             "on" if causal else "off"]
    name = f"attention_d{head_dim}" + ("_causal" if causal else "")
    return Case(name, "attention", flags, dtype, [launch],
                "tutorial 06's list after its Hopper filter (which drops 8 warps below 128x128 tiles): "
                "BLOCK_M 128, BLOCK_N 64, 4 warps, 3 stages", ci=ci)


# kiln's matmul configuration per architecture (kMatmulSm90a and kMatmulSm80
# in kernels/include/kiln/kernels/matmul.hpp): BLOCK_M, BLOCK_N, BLOCK_K,
# warps, stages. cpu_half checks that kiln's launch has these warps and grid.
KILN_MATMUL_TILES = {"sm_90a": (128, 128, 64, 8, 3), "sm_80": (64, 64, 32, 4, 3)}


def all_cases(arch="sm_90a"):
    """Every case for `arch`; `ci` marks the subset CI runs (every kernel once)."""
    return [
        vector_add(), softmax(), layer_norm(), layer_norm_backward(), rms_norm(), dropout(),
        matmul(), matmul(tiles=KILN_MATMUL_TILES[arch], name="matmul_kiln_tiles", ci=False),
        conv2d_bn_silu(),
        conv2d_bn_silu(channels=3, size=224, kernel=7, stride=2, pad=3, name="conv2d_stem", ci=False),
        attention(128, True), attention(128, False, ci=False), attention(64, True, ci=False),
        attention(64, False, ci=False),
    ]
