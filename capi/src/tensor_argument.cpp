// Checks of a DLPack tensor argument (tensor_argument.hpp).
#include "tensor_argument.hpp"

#include <limits>
#include <optional>
#include <utility>

#include "api_error.hpp"

namespace kiln::capi {

namespace {

std::optional<ir::DType> kiln_dtype(const DLDataType& dtype) {
  if (dtype.lanes != 1) return std::nullopt;
  using ir::DType;
  switch (dtype.code) {
    case kDLInt:
      switch (dtype.bits) {
        case 8: return DType::i8;
        case 16: return DType::i16;
        case 32: return DType::i32;
        case 64: return DType::i64;
      }
      break;
    case kDLUInt:
      switch (dtype.bits) {
        case 8: return DType::u8;
        case 16: return DType::u16;
        case 32: return DType::u32;
        case 64: return DType::u64;
      }
      break;
    case kDLFloat:
      switch (dtype.bits) {
        case 16: return DType::f16;
        case 32: return DType::f32;
        case 64: return DType::f64;
      }
      break;
    case kDLBfloat:
      if (dtype.bits == 16) return DType::bf16;
      break;
    case kDLBool:
      if (dtype.bits == 8) return DType::i1;
      break;
  }
  return std::nullopt;
}

std::string memory_string(const DLDevice& device) {
  const std::string gpu = " of GPU " + std::to_string(device.device_id);
  switch (device.device_type) {
    case kDLCPU: return "host memory (kDLCPU)";
    case kDLCUDAHost: return "pinned host memory (kDLCUDAHost)";
    case kDLCUDA: return "the memory" + gpu + " (kDLCUDA)";
    case kDLCUDAManaged: return "managed memory" + gpu + " (kDLCUDAManaged)";
  }
  return "memory of DLPack device type " + std::to_string(static_cast<int>(device.device_type));
}

/// Why `device` cannot address memory on `memory`, or nothing when it can.
std::optional<std::string> unreachable(const DLDevice& memory, const Device& device) {
  const bool host = memory.device_type == kDLCPU || memory.device_type == kDLCUDAHost;
  const bool gpu = memory.device_type == kDLCUDA || memory.device_type == kDLCUDAManaged;
  if (device.kind() != Device::Kind::cuda) {
    if (host) return std::nullopt;
    return "is in " + memory_string(memory) + ", the device " + device.name() +
           " needs host memory (kDLCPU or kDLCUDAHost)";
  }
  if (gpu && memory.device_id == device.ordinal()) return std::nullopt;
  return "is in " + memory_string(memory) + ", the device " + device.name() + " needs the memory of GPU " +
         std::to_string(device.ordinal()) + " (kDLCUDA or kDLCUDAManaged)";
}

}  // namespace

std::string tuple_string(const std::vector<std::int64_t>& values) {
  std::string text = "(";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + (values.size() == 1 ? ",)" : ")");
}

std::string dlpack_dtype_string(const DLDataType& dtype) {
  if (auto known = kiln_dtype(dtype)) return std::string(ir::dtype_name(*known));
  return "DLPack code " + std::to_string(dtype.code) + " with " + std::to_string(dtype.bits) + " bits and " +
         std::to_string(dtype.lanes) + " lanes";
}

TensorArgument::TensorArgument(const DLManagedTensor* managed, const Device& device, std::string label)
    : label_(std::move(label)) {
  require(managed != nullptr, label_ + " is a null DLManagedTensor pointer");
  const DLTensor& tensor = managed->dl_tensor;
  const auto dtype = kiln_dtype(tensor.dtype);
  require(dtype.has_value(),
          label_ + " has dtype " + dlpack_dtype_string(tensor.dtype) + ", which kiln has no element type for");
  dtype_ = *dtype;
  require(tensor.ndim >= 0, label_ + " has ndim " + std::to_string(tensor.ndim));
  require(tensor.ndim == 0 || tensor.shape != nullptr,
          label_ + " has ndim " + std::to_string(tensor.ndim) + " and a null shape");
  shape_.assign(tensor.shape, tensor.shape + tensor.ndim);
  for (int d = 0; d < tensor.ndim; ++d)
    require(shape_[d] >= 0,
            label_ + " has shape " + shape_string() + ", with a negative size in dimension " + std::to_string(d));
  if (tensor.strides != nullptr) {
    strides_.assign(tensor.strides, tensor.strides + tensor.ndim);
  } else {
    strides_.assign(shape_.size(), 1);
    for (int d = tensor.ndim - 2; d >= 0; --d) strides_[d] = strides_[d + 1] * shape_[d + 1];
  }
  for (int d = 0; d < tensor.ndim; ++d)
    require(strides_[d] >= 0 || shape_[d] <= 1, label_ + " has strides " + tuple_string(strides_) +
                                                    "; kiln takes no negative strides (dimension " + std::to_string(d) +
                                                    ")");
  if (auto why = unreachable(tensor.device, device)) fail(KILN_ERROR_INVALID_ARGUMENT, label_ + " " + *why);
  address_ = reinterpret_cast<std::uintptr_t>(tensor.data) + tensor.byte_offset;
  const int element_bytes = ir::dtype_bytes(dtype_);
  require(elements() == 0 || tensor.data != nullptr,
          label_ + " has " + std::to_string(elements()) + " elements and a null data pointer");
  require(address_ % element_bytes == 0, label_ + " starts at address " + std::to_string(address_) +
                                             ", not a multiple of its " + std::to_string(element_bytes) +
                                             "-byte elements");
}

std::int64_t TensorArgument::elements() const {
  std::int64_t count = 1;
  for (std::int64_t size : shape_) count *= size;
  return count;
}

runtime::MemoryRange TensorArgument::range() const {
  std::uintptr_t end = address_;
  if (elements() > 0) {
    std::uint64_t last = 0;
    for (std::size_t d = 0; d < shape_.size(); ++d)
      if (shape_[d] > 1) last += static_cast<std::uint64_t>(shape_[d] - 1) * static_cast<std::uint64_t>(strides_[d]);
    end += (last + 1) * static_cast<std::uint64_t>(ir::dtype_bytes(dtype_));
  }
  return {address_, end, label_};
}

std::string TensorArgument::shape_string() const { return tuple_string(shape_); }

void TensorArgument::require_rank(int expected) const {
  require(rank() == expected, label_ + " has shape " + shape_string() + " (" + std::to_string(rank()) +
                                  "-D), the kernel expects a " + std::to_string(expected) + "-D tensor");
}

void TensorArgument::require_dtype(ir::DType expected, const std::string& expected_because) const {
  require(dtype_ == expected, label_ + " has dtype " + std::string(ir::dtype_name(dtype_)) + ", the kernel expects " +
                                  std::string(ir::dtype_name(expected)) +
                                  (expected_because.empty() ? "" : " (" + expected_because + ")"));
}

void TensorArgument::require_contiguous() const {
  std::int64_t expected = 1;
  for (int d = rank() - 1; d >= 0; --d) {
    require(shape_[d] <= 1 || strides_[d] == expected || elements() == 0,
            label_ + " has shape " + shape_string() + " and strides " + tuple_string(strides_) +
                " (in elements), the kernel needs it contiguous (row-major, strides " + contiguous_strides() + ")");
    expected *= shape_[d];
  }
}

void TensorArgument::require_unit_stride(int dim) const {
  require(shape_[dim] <= 1 || strides_[dim] == 1, label_ + " has strides " + tuple_string(strides_) +
                                                      " (in elements), the kernel needs dimension " +
                                                      std::to_string(dim) + " contiguous (stride 1)");
}

void TensorArgument::require_32bit_reach() const {
  constexpr std::uint64_t kLargest = std::numeric_limits<std::int32_t>::max();
  for (std::int64_t size : shape_)
    require(static_cast<std::uint64_t>(size) <= kLargest, label_ + " has shape " + shape_string() +
                                                              ", a size beyond the kernel's 32-bit indices (at most " +
                                                              std::to_string(kLargest) + ")");
  const std::uint64_t last = (range().end - address_) / ir::dtype_bytes(dtype_);
  require(last <= kLargest, label_ + " has shape " + shape_string() + " and strides " + tuple_string(strides_) +
                                ": its last element is " + std::to_string(last - 1) +
                                " elements from its first, beyond the kernel's 32-bit indices (at most " +
                                std::to_string(kLargest - 1) + ")");
}

std::string TensorArgument::contiguous_strides() const {
  std::vector<std::int64_t> strides(shape_.size(), 1);
  for (int d = rank() - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape_[d + 1];
  return tuple_string(strides);
}

}  // namespace kiln::capi
