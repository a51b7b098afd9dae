// Row softmax of any width, one block per row: the CUDA C++ a user would
// write for kiln's softmax<f32, 1024>. Each thread keeps an online maximum and
// sum of exponentials over its strided columns; the block merges them with
// warp shuffles and shared memory, then writes exp(x - max) / sum. Only
// compiled (nvcc -ptx) by kiln_compile_bench, to compare compile latency.
#include <cfloat>

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;

// Merges two (max, sum of exp(x - max)) pairs into one.
__device__ void merge(float& max, float& sum, float other_max, float other_sum) {
  const float merged = fmaxf(max, other_max);
  // Guards -inf - -inf (empty partial results) from producing NaN.
  const float scaled = max == -INFINITY ? 0.f : sum * __expf(max - merged);
  const float other_scaled = other_max == -INFINITY ? 0.f : other_sum * __expf(other_max - merged);
  max = merged;
  sum = scaled + other_scaled;
}

// The block's merged (max, sum), returned to every thread.
__device__ void block_reduce(float& max, float& sum) {
  __shared__ float warp_max[kWarps], warp_sum[kWarps];
  for (int offset = 16; offset > 0; offset /= 2)
    merge(max, sum, __shfl_xor_sync(0xffffffffu, max, offset), __shfl_xor_sync(0xffffffffu, sum, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_max[warp] = max;
    warp_sum[warp] = sum;
  }
  __syncthreads();
  max = warp_max[0];
  sum = warp_sum[0];
  for (int w = 1; w < kWarps; ++w) merge(max, sum, warp_max[w], warp_sum[w]);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
    softmax(const float* __restrict__ in, float* __restrict__ out, int n_cols, int in_stride, int out_stride) {
  const float* in_row = in + static_cast<long long>(blockIdx.x) * in_stride;
  float* out_row = out + static_cast<long long>(blockIdx.x) * out_stride;
  float max = -INFINITY, sum = 0.f;
  for (int col = threadIdx.x; col < n_cols; col += kThreads) merge(max, sum, in_row[col], 1.f);
  block_reduce(max, sum);
  const float inverse = 1.f / sum;
  for (int col = threadIdx.x; col < n_cols; col += kThreads) out_row[col] = __expf(in_row[col] - max) * inverse;
}
