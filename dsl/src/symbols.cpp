// Names of the memory option enums as IR symbols.
#include "kiln/dsl/memory.hpp"

namespace kiln::detail {

const char* to_symbol(Cache c) {
  switch (c) {
    case Cache::ca: return "ca";
    case Cache::cg: return "cg";
    case Cache::cs: return "cs";
    case Cache::cv: return "cv";
    default: return "none";
  }
}

const char* to_symbol(Evict e) {
  switch (e) {
    case Evict::first: return "first";
    case Evict::last: return "last";
    default: return "none";
  }
}

const char* to_symbol(MemoryOrder o) {
  switch (o) {
    case MemoryOrder::relaxed: return "relaxed";
    case MemoryOrder::acquire: return "acquire";
    case MemoryOrder::release: return "release";
    default: return "acq_rel";
  }
}

const char* to_symbol(Scope s) {
  switch (s) {
    case Scope::cta: return "cta";
    case Scope::sys: return "sys";
    default: return "gpu";
  }
}

}  // namespace kiln::detail
