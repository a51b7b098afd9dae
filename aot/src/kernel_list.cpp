// Checking and specialising the kernels a kernels file names.
#include "kiln/aot/kernel_list.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace kiln::aot {

namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string facts_text(const ir::ArgumentFacts& facts) {
  return facts.equal_to_1 ? "equal_to_1" : "divisibility " + std::to_string(facts.divisibility);
}

}  // namespace

void KernelList::add_program(const std::string& name, std::shared_ptr<const runtime::Program> program,
                             const KernelOptions& options) {
  const std::string where = "kiln_aot_kernels: kernel '" + name + "' (" + program->display_name() + ")";
  if (!is_identifier(name)) throw std::invalid_argument(where + ": the name must be a C++ identifier");
  for (const NamedKernel& kernel : kernels_)
    if (kernel.name == name) throw std::invalid_argument(where + ": the name is already used");
  const auto& arguments = program->traced().body.arguments;
  if (!options.facts.empty() && options.facts.size() != arguments.size())
    throw std::invalid_argument(where + ": " + std::to_string(options.facts.size()) + " argument facts for " +
                                std::to_string(arguments.size()) + " parameters");
  for (std::size_t i = 0; i < options.facts.size(); ++i) {
    const ir::ArgumentFacts& facts = options.facts[i];
    const ir::Type& type = arguments[i]->type;
    const bool integer = !type.is_pointer && ir::is_integer(type.dtype) && type.dtype != ir::DType::i1;
    const bool pointer_fact =
        type.is_pointer && !facts.equal_to_1 && (facts.divisibility == 1 || facts.divisibility == 16);
    const bool integer_fact =
        integer && (facts.equal_to_1 ? facts.divisibility == 1 : facts.divisibility == 1 || facts.divisibility == 16);
    if (!facts.trivial() && !pointer_fact && !integer_fact)
      throw std::invalid_argument(where + ": parameter " + std::to_string(i) + " is " + ir::to_string(type) +
                                  ", which cannot assume " + facts_text(facts) +
                                  " (pointers: aligned_16; integers: multiple_of_16 or equal_to_1)");
  }
  std::shared_ptr<const runtime::Program> specialised =
      options.facts.empty() ? program : program->specialized(options.facts);
  kernels_.push_back({name, std::move(specialised)});
}

}  // namespace kiln::aot
