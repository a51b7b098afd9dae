"""The GPU half's cases: each kernel at the shapes the comparison times, the
kiln command that times it, and the bytes and flops one launch must move and do
(the same formulas as kiln's reports). Plain Python: the dry run needs no GPU."""

from dataclasses import dataclass, field

NORM_SHAPES = [(8192, 4096), (4096, 16384)]
NORM_DTYPES = ["bf16", "f16"]
GEMM_SIZES = [4096, 8192]
ATTENTION = [(128, True), (128, False), (64, True), (64, False)]  # (head_dim, causal) at B=4 H=32 S=4096
# (label, batch, channels, size, out_channels, kernel, stride, pad)
CONV_LAYERS = [
    ("resnet50.layer1.3x3", 32, 64, 56, 64, 3, 1, 1),
    ("resnet50.layer2.3x3", 32, 128, 28, 128, 3, 1, 1),
    ("resnet50.layer3.1x1", 32, 1024, 14, 256, 1, 1, 0),
    ("resnet50.layer4.3x3", 32, 512, 7, 512, 3, 1, 1),
    ("yolov8.down.3x3s2", 16, 64, 160, 128, 3, 2, 1),
]
ELEMENTWISE_N = 1 << 28
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


@dataclass
class GpuCase:
    name: str
    kernel: str  # kiln's kernel name, also the key of the runners in gpu_runners.py
    dtype: str
    params: dict  # the kernel's sizes and choices, as kiln takes them
    bytes: float
    flops: float = 0.0
    notes: list = field(default_factory=list)
    # kiln timed again with each of these flag lists (label, flags): another
    # architecture's library configuration on the same GPU, so that one run
    # weighs the configuration kiln chose against the other.
    kiln_alternatives: list = field(default_factory=list)

    def kiln_command(self, kiln, extra=()):
        flags = []
        for name, value in self.params.items():
            flags += [f"--{name}", str(value)]
        return [kiln, "run", self.kernel, "--device", "cuda", "--bench", "--json", "--dtype", self.dtype, *flags,
                *extra]


# The sm_80 configuration of matmul and attention, timed beside the sm_90a one
# an H100 or H200 launches by default.
SM80_CONFIGURATION = [("sm_80 configuration", ["--arch", "sm_80"])]


def norm_cases():
    out = []
    for kernel in ("softmax", "layer_norm", "rms_norm", "layer_norm_backward"):
        for rows, cols in NORM_SHAPES:
            for dtype in NORM_DTYPES:
                e = ELEMENT_BYTES[dtype]
                params = {"rows": rows, "cols": cols} if kernel == "softmax" else {"m": rows, "n": cols}
                moved = {"softmax": 2 * rows * cols * e,
                         "layer_norm": (2 * rows * cols + 2 * cols) * e + 8 * rows,
                         "rms_norm": (2 * rows * cols + cols) * e + 4 * rows,
                         "layer_norm_backward": (3 * rows * cols + cols) * e + 4 * (2 * rows + 2 * cols)}[kernel]
                out.append(GpuCase(f"{kernel}.{rows}x{cols}.{dtype}", kernel, dtype, params, moved))
    return out


def gemm_cases():
    out = []
    for size in GEMM_SIZES:
        for epilogue in (True, False):
            params = {"m": size, "n": size, "k": size, "bias": "on" if epilogue else "off",
                      "gelu": "erf" if epilogue else "none", "dropout": 0.1 if epilogue else 0}
            moved = (2 * size * size + (size if epilogue else 0)) * 2 + size * size * 2
            name = f"matmul.{size}.bf16" + (".bias_gelu_dropout" if epilogue else "")
            out.append(GpuCase(name, "matmul", "bf16", params, moved, 2.0 * size ** 3,
                               kiln_alternatives=SM80_CONFIGURATION))
    return out


def attention_cases(batch=4, heads=32, seq=4096):
    out = []
    for head_dim, causal in ATTENTION:
        params = {"batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim, "causal": "on" if causal else "off"}
        elements = batch * heads * seq * head_dim
        flops = 4.0 * batch * heads * seq * seq * head_dim * (0.5 if causal else 1.0)
        name = f"attention.d{head_dim}" + (".causal" if causal else "")
        out.append(GpuCase(name, "attention", "f16", params, 4 * elements * 2 + 4 * batch * heads * seq, flops,
                           kiln_alternatives=SM80_CONFIGURATION))
    return out


def conv_cases():
    out = []
    for label, batch, channels, size, out_channels, kernel, stride, pad in CONV_LAYERS:
        out_size = (size + 2 * pad - kernel) // stride + 1
        params = {"n": batch, "c": channels, "h": size, "w": size, "k": out_channels, "r": kernel, "s": kernel,
                  "stride": stride, "pad": pad}
        moved = 2 * (batch * channels * size * size + out_channels * channels * kernel * kernel
                     + batch * out_channels * out_size * out_size) + 8 * out_channels
        flops = 2.0 * batch * out_channels * out_size * out_size * channels * kernel * kernel
        out.append(GpuCase(f"conv2d_bn_silu.{label}", "conv2d_bn_silu", "f16", params, moved, flops))
    return out


def elementwise_cases():
    n = ELEMENTWISE_N
    return [GpuCase("vector_add.2^28.f16", "vector_add", "f16", {"n": n}, 3 * n * 2),
            GpuCase("dropout.2^28.f16", "dropout", "f16", {"n": n, "p": 0.1}, 2 * n * 2, float(n))]


def all_cases():
    """Comparison order: the fused kernels first, so that a short budget
    still times the ones the comparison is mostly about."""
    return gemm_cases() + attention_cases() + norm_cases() + conv_cases() + elementwise_cases()
