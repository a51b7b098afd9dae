// Links NVIDIA's libdevice into a kernel module that calls its __nv_*
// functions, before O3, so the NVPTX backend compiles them inline (as Triton
// does). The code generator only declares those functions: the CPU emulator
// runs its output unlinked and maps each call to the host's libm.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "codegen.hpp"

namespace kiln::lowering {

namespace {

constexpr const char* kToolkitLibdevice = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
constexpr const char* kLibdeviceName = "libdevice.10.bc";

/// The op a libdevice function computes, for messages: `__nv_sinf` is `sin`.
std::string op_of(const std::string& symbol) {
  std::string name = symbol.substr(5);
  static const char* kDoubleNames[] = {"sin", "cos", "tanh", "erf", "exp", "exp2", "log", "log2", "fmod"};
  for (const char* double_name : kDoubleNames)
    if (name == double_name) return name == "fmod" ? "rem" : name;
  if (!name.empty() && name.back() == 'f') name.pop_back();
  return name == "fmod" ? "rem" : name;
}

/// KILN_LIBDEVICE, else the CUDA toolkit's, else the one next to the running
/// executable; LoweringError naming `symbol`'s op when none exists.
std::filesystem::path find_libdevice(const std::string& symbol) {
  if (const char* configured = std::getenv("KILN_LIBDEVICE"); configured && *configured) {
    if (std::filesystem::is_regular_file(configured)) return configured;
    throw LoweringError("`" + op_of(symbol) + "` needs libdevice (" + symbol + "), but KILN_LIBDEVICE names `" +
                        configured + "`, which is not a file");
  }
  if (std::filesystem::is_regular_file(kToolkitLibdevice)) return kToolkitLibdevice;
  std::error_code error;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path beside = executable.parent_path() / kLibdeviceName;
  if (!error && std::filesystem::is_regular_file(beside)) return beside;
  throw LoweringError("`" + op_of(symbol) + "` needs libdevice (" + symbol + "), found neither " + kToolkitLibdevice +
                      " nor " + kLibdeviceName + " next to the executable; set KILN_LIBDEVICE to its path");
}

/// The bytes of the bitcode file at `path`, read once per process.
const std::string& libdevice_bytes(const std::filesystem::path& path) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::string> cache;
  std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace(path);
  if (inserted) {
    std::ifstream file(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << file.rdbuf();
    it->second = bytes.str();
    if (!file || it->second.empty()) {
      cache.erase(it);
      throw LoweringError("cannot read libdevice at `" + path.string() + "`");
    }
  }
  return it->second;
}

}  // namespace

void link_libdevice(llvm::Module& module) {
  std::string first_symbol;
  for (const llvm::Function& function : module)
    if (function.isDeclaration() && function.getName().starts_with("__nv_") && !function.use_empty()) {
      first_symbol = function.getName().str();
      break;
    }
  if (first_symbol.empty()) return;

  const std::filesystem::path path = find_libdevice(first_symbol);
  const std::string& bytes = libdevice_bytes(path);
  // Lazily: only the functions the kernel reaches are read from the bitcode.
  llvm::Expected<std::unique_ptr<llvm::Module>> parsed = llvm::getLazyBitcodeModule(
      llvm::MemoryBufferRef(llvm::StringRef(bytes.data(), bytes.size()), path.string()), module.getContext());
  if (!parsed)
    throw LoweringError("cannot parse libdevice at `" + path.string() + "`: " + llvm::toString(parsed.takeError()));
  std::unique_ptr<llvm::Module> libdevice = std::move(*parsed);
  libdevice->setTargetTriple(module.getTargetTriple());
  libdevice->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(libdevice), llvm::Linker::Flags::LinkOnlyNeeded))
    throw LoweringError("linking libdevice from `" + path.string() + "` into kernel @" + module.getName().str() +
                        " failed");
  // Only the kernel stays visible: O3 inlines the library and drops what is unused.
  for (llvm::Function& function : module)
    if (!function.isDeclaration() && function.getCallingConv() != llvm::CallingConv::PTX_Kernel)
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable& global : module.globals())
    if (!global.isDeclaration()) global.setLinkage(llvm::GlobalValue::InternalLinkage);
}

}  // namespace kiln::lowering
