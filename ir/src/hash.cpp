// A structural hash of a kernel: FNV-1a over its printed form.
#include "kiln/ir/ir.hpp"
#include "kiln/ir/printer.hpp"

namespace kiln::ir {

std::uint64_t structural_hash(const Function& fn) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : print(fn)) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace kiln::ir
