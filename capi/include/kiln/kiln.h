/* kiln's C API: open a device, compile a kernel (one of the sample library's
 * or tile-IR text), launch it on DLPack tensors. C99; libkiln_c.so.
 *
 *   kiln_device* device;
 *   kiln_kernel* softmax;
 *   if (kiln_device_open("cpu", &device) != KILN_OK ||
 *       kiln_kernel_from_library("softmax", &softmax) != KILN_OK) {
 *     fprintf(stderr, "%s\n", kiln_last_error());
 *   }
 *   kiln_argument args[2] = {kiln_tensor_argument(x), kiln_tensor_argument(out)};
 *   kiln_launch(device, softmax, args, 2, NULL);
 *
 * Every function returns a kiln_status; on failure kiln_last_error() gives
 * one line naming the function, the argument and the values. No function
 * keeps a tensor after it returns, and none calls a tensor's deleter: the
 * caller owns its DLManagedTensors. A launch has finished, its results in
 * the output tensors, when kiln_launch returns. Handles may be used from
 * several threads at once. */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/dlpack_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  KILN_OK = 0,
  /* A null pointer, a value out of range, or a tensor the kernel cannot take
   * (rank, shape, dtype, device, strides), or the wrong number or kind of
   * arguments. */
  KILN_ERROR_INVALID_ARGUMENT = 1,
  /* A device or library kernel name that is unknown, or a device that is not
   * available here (cuda without a driver or GPU). */
  KILN_ERROR_NOT_FOUND = 2,
  /* IR text that does not parse or verify, or a kernel the device's code
   * generator cannot lower. */
  KILN_ERROR_COMPILE = 3,
  /* The kernel faulted while running: an out-of-bounds access, an integer
   * division by zero, a failed device assert. */
  KILN_ERROR_KERNEL_FAULT = 4,
  /* Anything else: the CUDA driver failed, memory ran out, an internal error. */
  KILN_ERROR_RUNTIME = 5
} kiln_status;

/* The message of the last call on this thread that failed, one line, or ""
 * when the last call succeeded (every call but these two sets it). The
 * pointer stays valid until the next kiln call on this thread. */
const char* kiln_last_error(void);
/* "KILN_OK", "KILN_ERROR_INVALID_ARGUMENT", ...; "unknown status" otherwise. */
const char* kiln_status_name(kiln_status status);

/* ---- Devices ---------------------------------------------------------- */

typedef struct kiln_device kiln_device;

/* Opens the device `name`, the names of the kiln tool's --device: "cpu" (the
 * tile-IR interpreter), "emu" (the GPU code generator's output on this CPU),
 * "cpu:N" / "emu:N" (N host threads), "cuda" or "cuda:N" (GPU N). */
kiln_status kiln_device_open(const char* name, kiln_device** device);
/* Closes a device; null is accepted and does nothing. */
kiln_status kiln_device_close(kiln_device* device);
/* The device's name ("cpu", "emu:4", "cuda"); valid while the device is open. */
kiln_status kiln_device_name(const kiln_device* device, const char** name);

/* ---- Kernels ---------------------------------------------------------- */

typedef struct kiln_kernel kiln_kernel;

/* A kernel of kiln's sample library, which chooses its dtype, tile sizes and
 * grid from the tensors of each launch. Its arguments, all tensors:
 *   "softmax"     x [rows, cols], out [rows, cols]: out = softmax of each row
 *                 (f32, f16, bf16, f64; rows may be strided, columns contiguous)
 *   "matmul"      a [m, k], b [k, n], c [m, n]: c = a @ b with an f32
 *                 accumulator (f32, f16, bf16; any non-negative strides)
 *   "vector_add"  x, y, out of one shape, contiguous: out = x + y
 *                 (f32, f16, bf16, f64) */
kiln_status kiln_kernel_from_library(const char* name, kiln_kernel** kernel);
/* A kernel from the tile IR's text form (ir/OPS.md), parsed, verified and
 * optimised. Its arguments are the IR kernel's, in order; it runs over the
 * grid its launches give. */
kiln_status kiln_kernel_from_ir(const char* text, kiln_kernel** kernel);
/* Releases a kernel; null is accepted and does nothing. */
kiln_status kiln_kernel_release(kiln_kernel* kernel);
/* The kernel's name ("softmax", or the IR kernel's "@name" without the @);
 * valid while the kernel lives. */
kiln_status kiln_kernel_name(const kiln_kernel* kernel, const char** name);

/* ---- Launching -------------------------------------------------------- */

typedef enum {
  /* A DLPack tensor: a kernel pointer argument receives its first element's
   * address. Host memory (kDLCPU, kDLCUDAHost) on cpu and emu, the GPU's
   * memory (kDLCUDA, kDLCUDAManaged with its device_id) on cuda; used in
   * place, never copied. */
  KILN_ARGUMENT_TENSOR = 0,
  /* An integer scalar, for an integer (or i1: 0 or 1) kernel parameter whose
   * type it must fit. */
  KILN_ARGUMENT_INT = 1,
  /* A floating-point scalar, rounded to the parameter's float type. */
  KILN_ARGUMENT_FLOAT = 2
} kiln_argument_kind;

typedef struct {
  kiln_argument_kind kind;
  union {
    DLManagedTensor* tensor;
    int64_t int_value;
    double float_value;
  } value;
} kiln_argument;

static inline kiln_argument kiln_tensor_argument(DLManagedTensor* tensor) {
  kiln_argument argument;
  argument.kind = KILN_ARGUMENT_TENSOR;
  argument.value.tensor = tensor;
  return argument;
}
static inline kiln_argument kiln_int_argument(int64_t value) {
  kiln_argument argument;
  argument.kind = KILN_ARGUMENT_INT;
  argument.value.int_value = value;
  return argument;
}
static inline kiln_argument kiln_float_argument(double value) {
  kiln_argument argument;
  argument.kind = KILN_ARGUMENT_FLOAT;
  argument.value.float_value = value;
  return argument;
}

/* Runs `kernel` on `device` with `num_arguments` arguments and returns when
 * it has finished. `grid` is the number of programs along x, y and z (three
 * values, each at least 1) for an IR kernel, and must be NULL for a library
 * kernel, which derives its grid from the tensors. Tensors must be on the
 * device, hold the dtype the kernel expects, and (for IR kernels, whose
 * pointers address flat memory) be contiguous. On cuda kiln launches on a
 * stream of its own and waits for nothing else: work another library queued
 * on the tensors (a PyTorch kernel that wrote an input) must have finished
 * first, for instance through torch.cuda.synchronize(). */
kiln_status kiln_launch(kiln_device* device, const kiln_kernel* kernel, const kiln_argument* arguments,
                        size_t num_arguments, const int32_t* grid);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_H */
