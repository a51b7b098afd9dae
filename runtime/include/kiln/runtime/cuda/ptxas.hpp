// Finding and running ptxas, the CUDA toolkit's PTX assembler, to turn the code
// generator's PTX into a cubin for the exact GPU.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kiln::cuda {

/// The ptxas to use: $KILN_PTXAS when set and not empty ("none": no ptxas, the
/// driver compiles the PTX), else /usr/local/cuda/bin/ptxas, else `ptxas`
/// beside the running executable; nullopt when there is none. Throws
/// std::runtime_error when KILN_PTXAS names a file that does not exist.
std::optional<std::filesystem::path> find_ptxas();

/// Runs `ptxas -arch=<arch>` on `ptx` and returns the cubin. Throws
/// std::runtime_error with ptxas's messages on one line, naming `kernel_name`.
std::string assemble_cubin(const std::filesystem::path& ptxas, const std::string& ptx, const std::string& arch,
                           const std::string& kernel_name);

}  // namespace kiln::cuda
