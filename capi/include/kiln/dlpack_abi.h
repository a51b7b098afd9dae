/* The DLPack tensor ABI (https://dmlc.github.io/dlpack/latest/c_api.html), as
 * much of it as the kiln C API reads: the structs every DLPack producer fills
 * (NumPy's and PyTorch's __dlpack__, CuPy, JAX) and the codes of the devices
 * and element types kiln handles. A program that includes the project's own
 * dlpack.h first gets that header's declarations instead (they are the same
 * layout); include dlpack.h before kiln/kiln.h when using both. */
#ifndef KILN_DLPACK_ABI_H
#define KILN_DLPACK_ABI_H

#include <stdint.h>

#ifndef DLPACK_VERSION

#ifdef __cplusplus
extern "C" {
#endif

/* Where a tensor's memory lives (DLDevice::device_type). */
typedef enum {
  kDLCPU = 1,         /* host memory */
  kDLCUDA = 2,        /* memory of CUDA GPU device_id */
  kDLCUDAHost = 3,    /* page-locked host memory from cudaMallocHost */
  kDLCUDAManaged = 13 /* CUDA unified memory */
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id; /* the GPU's ordinal; 0 for host memory */
} DLDevice;

/* The kind of element (DLDataType::code). */
typedef enum {
  kDLInt = 0,    /* signed integer */
  kDLUInt = 1,   /* unsigned integer */
  kDLFloat = 2,  /* IEEE binary floating point */
  kDLBfloat = 4, /* bfloat16 */
  kDLBool = 6    /* boolean, 8 bits per element */
} DLDataTypeCode;

/* An element type: code, bits per lane, lanes (1 for scalars). */
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/* A strided view of memory. The first element is at (char*)data +
 * byte_offset; element (i0, i1, ...) is strides[0] * i0 + strides[1] * i1 + ...
 * elements further. strides in elements, NULL meaning compact row-major. */
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

/* A tensor together with its owner's context and the function that releases
 * it; the consumer that takes ownership calls deleter once when done. */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_VERSION */

#endif /* KILN_DLPACK_ABI_H */
