// The registry of inline assembly host references: a map from key to
// reference behind a reader-writer lock (registered while tracing, read when
// a cpu or emu kernel is prepared and, on emu, by each element's hook call).
#include "kiln/runtime/host_reference.hpp"

#include <map>
#include <mutex>
#include <shared_mutex>

namespace kiln::runtime {

namespace {

struct Registry {
  std::shared_mutex mutex;
  std::map<std::string, HostReference, std::less<>> references;
};

Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: kernels may run during static destruction
  return *instance;
}

}  // namespace

bool register_host_reference(const std::string& key, const HostReference& reference) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  const auto [it, inserted] = r.references.emplace(key, reference);
  return inserted || it->second.function() == reference.function();
}

std::optional<HostReference> find_host_reference(std::string_view key) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  const auto it = r.references.find(key);
  if (it == r.references.end()) return std::nullopt;
  return it->second;
}

std::string missing_host_reference(const ir::Function& fn, std::string_view device) {
  std::string message;
  walk(fn.body, [&](ir::Operation& op) {
    if (!message.empty() || op.code != ir::OpCode::inline_asm || find_host_reference(op.string_attribute("key")))
      return;
    const std::string line = ir::to_string(op.loc);
    message = "kernel " + fn.name + ": inline_asm" + (line.empty() ? "" : " at " + line) +
              " has no host reference (kl::no_host_reference), so it runs on the cuda device only, not on " +
              std::string(device);
  });
  return message;
}

}  // namespace kiln::runtime
