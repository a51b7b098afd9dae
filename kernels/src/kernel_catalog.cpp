// Every sample kernel's spec: name, summary, dims, dtypes and choices. How each
// one runs is in its own source file (registry.cpp pairs the two).
#include <stdexcept>
#include <utility>

#include "kiln/kernels/kernel_spec.hpp"

namespace kiln::kernels {

namespace {

const std::vector<std::string> kFloatDtypes = {"f32", "f16", "bf16", "f64"};
const std::vector<std::string> kDotDtypes = {"f32", "f16", "bf16"};

KernelSpec spec(std::string name, std::string summary, std::vector<Dim> dims, std::vector<std::string> dtypes,
                std::vector<Choice> choices = {}, std::string unfused = {}) {
  return {std::move(name),   std::move(summary), std::move(dims),
          std::move(dtypes), std::move(choices), std::move(unfused)};
}

/// matmul, or its unfused sequence: the same dims, dtypes and choices.
KernelSpec matmul_spec(std::string name, std::string summary, std::string unfused = {}) {
  return spec(
      std::move(name), std::move(summary),
      {{"m", 512, "rows of A and C"}, {"n", 512, "columns of B and C"}, {"k", 512, "columns of A, rows of B"}},
      kDotDtypes,
      {{"bias", "on", "add a bias per column of C", {"on", "off"}},
       {"gelu", "erf", "GELU after the bias: exact (erf), tanh approximation, or none", {"none", "erf", "tanh"}},
       {"dropout", "0.1", "dropout probability after GELU (0: no dropout)", {}},
       {"out", "same", "dtype of C (same: the input dtype)", {"same", "f32", "f16", "bf16"}}},
      std::move(unfused));
}

/// conv2d_bn_silu, or its unfused sequence: the same layer. The defaults, a
/// mid-network ResNet-like layer, keep --check under half a second on the cpu
/// interpreter with two threads (measured: gemm 0.14 s, scalar 0.26 s,
/// including the double reference).
KernelSpec conv2d_spec(std::string name, std::string summary, std::string unfused = {}) {
  return spec(std::move(name), std::move(summary),
              {{"n", 2, "batch"},
               {"c", 32, "input channels"},
               {"h", 28, "input height"},
               {"w", 28, "input width"},
               {"k", 48, "output channels"},
               {"r", 3, "kernel height"},
               {"s", 3, "kernel width"},
               {"stride", 1, "stride (both axes)"},
               {"pad", 1, "zero padding (both axes)", 0},
               {"dilation", 1, "dilation (both axes)"},
               {"groups", 1, "groups (c and k must be multiples; groups = c is depthwise)"}},
              kDotDtypes,
              {{"variant",
                "auto",
                "scalar strips, tiled outer products, implicit gemm with dot, or auto (chosen from the shape)",
                {"auto", "scalar", "tiled", "gemm"}}},
              std::move(unfused));
}

std::vector<KernelSpec> make_specs() {
  const std::vector<Dim> rows_of_m_by_n = {{"m", 4096, "number of rows (one program each)"},
                                           {"n", 1024, "row length (normalised dimension)"}};
  return {
      spec("vector_add", "out = x + y, elementwise, one 1024-element tile per program",
           {{"n", 1 << 20, "number of elements"}}, kFloatDtypes),
      spec("softmax", "row-wise softmax of a rows x cols matrix, any width, numerically stable",
           {{"rows", 4096, "number of rows (one program each)"}, {"cols", 1000, "row length"}}, kFloatDtypes),
      spec("attention",
           "attention forward, softmax(Q K^T / sqrt(head_dim)) V and its log-sum-exp, online softmax over key blocks",
           {{"batch", 2, "batch size"},
            {"heads", 4, "attention heads"},
            {"seq", 500, "sequence length (queries = keys)"}},
           {"f16", "bf16", "f32"},
           {{"head_dim", "64", "size of each head", {"64", "128"}},
            {"causal", "on", "each query sees only the keys up to its own position", {"on", "off"}},
            {"key_lengths",
             "none",
             "key padding: each batch's valid keys drawn from [0, seq] (random), or all seq (none); a row with no "
             "valid key outputs 0",
             {"none", "random"}}}),
      matmul_spec("matmul", "C = dropout(gelu(A @ B + bias)) in one kernel, grouped tile order, any sizes",
                  "matmul_unfused"),
      matmul_spec("matmul_unfused", "matmul's result in three launches: A @ B into f32, bias + GELU, dropout"),
      spec("dropout", "low-memory dropout: the mask regenerated from seed and offset, never stored",
           {{"n", 1 << 20, "number of elements"}}, kDotDtypes,
           {{"p", "0.1", "probability of dropping an element", {}}}),
      conv2d_spec("conv2d_bn_silu",
                  "y = silu(batchnorm(conv2d(x, w))), inference, NCHW, any kernel size, stride, padding, dilation, "
                  "groups",
                  "conv2d_bn_silu_unfused"),
      conv2d_spec("conv2d_bn_silu_unfused",
                  "conv2d_bn_silu as three launches: conv2d (the same variant), batchnorm scale/shift, SiLU"),
      spec("layer_norm", "layer norm over the rows of an m x n matrix, also writing each row's f32 mean and rstd",
           rows_of_m_by_n, kDotDtypes),
      spec("layer_norm_backward",
           "layer norm backward: dx per row, dw and db (f32) summed deterministically through partial rows",
           {{"m", 4096, "number of rows"}, {"n", 1024, "row length (normalised dimension)"}}, kDotDtypes),
      spec("rms_norm", "RMS norm over the rows of an m x n matrix, also writing each row's f32 rstd", rows_of_m_by_n,
           kDotDtypes),
  };
}

}  // namespace

const std::vector<KernelSpec>& kernel_specs() {
  static const std::vector<KernelSpec> specs = make_specs();
  return specs;
}

const KernelSpec& find_spec(std::string_view name) {
  std::string known;
  for (const KernelSpec& k : kernel_specs()) {
    if (k.name == name) return k;
    known += (known.empty() ? "" : ", ") + k.name;
  }
  throw std::invalid_argument("unknown kernel '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace kiln::kernels
