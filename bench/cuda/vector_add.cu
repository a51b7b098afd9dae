// out = x + y, one element per thread, masked tail: the CUDA C++ a user
// would write for kiln's vector_add<f32, 1024>. Only compiled (nvcc -ptx) by
// kiln_compile_bench, to compare compile latency.
extern "C" __global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                                      float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
