// Evicting a device's caches between timed launches, so that every launch
// reads its inputs from memory rather than from what the previous one left
// in L2, as triton.testing.do_bench does: the times then compare with
// Triton's and PyTorch's measured that way.
#pragma once

#include <cstddef>

#include "kiln/runtime/device.hpp"

namespace kiln::runtime {

/// Bytes flush_caches writes on a GPU: more than any L2 (an H200's is 50 MB).
inline constexpr std::size_t kCacheFlushBytes = std::size_t{256} << 20;

/// On `cuda`: zeroes a device buffer of kCacheFlushBytes (allocated on the
/// first call for each GPU and kept) and waits for it. On `cpu` and `emu`:
/// nothing, their times are not a GPU's.
void flush_caches(const Device& device);

}  // namespace kiln::runtime
