/* A C program built against an installed kiln's C API (kiln::c): the
 * library's vector_add on two random host vectors through DLPack tensors,
 * compared with the sums in C (exact: one f32 rounding each, as C's own
 * float addition). Exits 1 on a mismatch or an error. */
#include <stdio.h>
#include <stdlib.h>

#include <kiln/kiln.h>

enum { N = 1000 };

int main(void) {
  static float x[N], y[N], out[N];
  srand(7);
  for (int i = 0; i < N; ++i) {
    x[i] = (float)rand() / RAND_MAX - 0.5f;
    y[i] = (float)rand() / RAND_MAX - 0.5f;
  }
  int64_t shape[1] = {N};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLManagedTensor tensors[3] = {{{x, {kDLCPU, 0}, 1, f32, shape, NULL, 0}, NULL, NULL},
                                {{y, {kDLCPU, 0}, 1, f32, shape, NULL, 0}, NULL, NULL},
                                {{out, {kDLCPU, 0}, 1, f32, shape, NULL, 0}, NULL, NULL}};
  kiln_argument arguments[3] = {kiln_tensor_argument(&tensors[0]), kiln_tensor_argument(&tensors[1]),
                                kiln_tensor_argument(&tensors[2])};
  kiln_device* device = NULL;
  kiln_kernel* vector_add = NULL;
  if (kiln_device_open("cpu", &device) != KILN_OK || kiln_kernel_from_library("vector_add", &vector_add) != KILN_OK ||
      kiln_launch(device, vector_add, arguments, 3, NULL) != KILN_OK) {
    fprintf(stderr, "c_consumer: %s\n", kiln_last_error());
    return 1;
  }
  int mismatches = 0;
  for (int i = 0; i < N; ++i) mismatches += out[i] != x[i] + y[i];
  kiln_kernel_release(vector_add);
  kiln_device_close(device);
  printf("c_consumer: vector_add of %d floats through the C API, %d mismatches\n", N, mismatches);
  return mismatches == 0 ? 0 : 1;
}
