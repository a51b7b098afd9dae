/* Chapter 22, "From C and Python": the library's softmax called from C
 * through kiln's C API (kiln/kiln.h) on DLPack tensors in host memory, each
 * row checked against double arithmetic, then an error the API reports. The
 * device is $KILN_DEVICE, else cpu. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kiln/kiln.h"

enum { ROWS = 2, COLS = 5 };

/* Whether out is the softmax of each row of x, within the bound of chapter
 * 20: a sum of COLS f32 terms, exp and a division. */
static int softmax_matches(float x[ROWS][COLS], float out[ROWS][COLS]) {
  const double bound = (COLS + 5) * 0x1p-24;
  for (int r = 0; r < ROWS; ++r) {
    double sum = 0;
    for (int c = 0; c < COLS; ++c) sum += exp(x[r][c]);
    for (int c = 0; c < COLS; ++c)
      if (fabs(out[r][c] - exp(x[r][c]) / sum) > bound * exp(x[r][c]) / sum) return 0;
  }
  return 1;
}

int main(void) {
  const char* device_name = getenv("KILN_DEVICE") ? getenv("KILN_DEVICE") : "cpu";
  float x[ROWS][COLS] = {{1, 2, 3, 4, 5}, {-1, 0, 0.5f, 0, -1}};
  float out[ROWS][COLS];
  // [book:c_api]
  int64_t shape[2] = {ROWS, COLS};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLManagedTensor x_tensor = {{x, {kDLCPU, 0}, 2, f32, shape, NULL, 0}, NULL, NULL};
  DLManagedTensor out_tensor = {{out, {kDLCPU, 0}, 2, f32, shape, NULL, 0}, NULL, NULL};

  kiln_device* device;
  kiln_kernel* softmax;
  kiln_argument arguments[2] = {kiln_tensor_argument(&x_tensor), kiln_tensor_argument(&out_tensor)};
  if (kiln_device_open(device_name, &device) != KILN_OK || kiln_kernel_from_library("softmax", &softmax) != KILN_OK ||
      kiln_launch(device, softmax, arguments, 2, NULL) != KILN_OK) {
    fprintf(stderr, "%s\n", kiln_last_error());
    return 1;
  }
  // [/book:c_api]
  for (int r = 0; r < ROWS; ++r) {
    for (int c = 0; c < COLS; ++c) printf(" %.4f", out[r][c]);
    printf("\n");
  }
  int ok = softmax_matches(x, out);
  // [book:c_api_error]
  out_tensor.dl_tensor.dtype.bits = 16; /* out now claims to hold f16 */
  kiln_status status = kiln_launch(device, softmax, arguments, 2, NULL);
  printf("%s: %s\n", kiln_status_name(status), kiln_last_error());
  // [/book:c_api_error]
  ok = ok && status == KILN_ERROR_INVALID_ARGUMENT;
  kiln_kernel_release(softmax);
  kiln_device_close(device);
  printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
