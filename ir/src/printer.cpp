// Prints a kernel in the IR's text form (ir/OPS.md), numbering values in order of definition.
#include "kiln/ir/printer.hpp"

#include <charconv>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <unordered_map>

namespace kiln::ir {

namespace {

bool is_bare_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// Double-quoted, escaping what the lexer would not read back verbatim.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Shortest text that reads back as the same double, never mistakable for an integer.
std::string float_string(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, end);
  if (s.find_first_of(".ein") == std::string::npos) s += ".0";
  return s;
}

struct AttributeText {
  std::string operator()(std::int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const { return float_string(v); }
  std::string operator()(const std::string& v) const { return quoted(v); }
  std::string operator()(const Symbol& v) const { return v.name; }
  std::string operator()(DType v) const { return std::string(dtype_name(v)); }
  std::string operator()(const std::vector<std::int64_t>& v) const {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out + "]";
  }
};

class Printer {
 public:
  Printer(std::ostream& os, PrintOptions options) : os_(os), options_(options) {}

  void print(const Function& fn) {
    number_arguments(fn.body);
    number_ops(fn.body);
    os_ << "kernel @" << (is_bare_name(fn.name) ? fn.name : quoted(fn.name)) << "(" << kernel_arguments(fn) << ") {\n";
    print_ops(fn.body, 1);
    os_ << "}\n";
  }

 private:
  void number_arguments(const Block& block) {
    for (const Value* v : block.arguments) numbers_.emplace(v, static_cast<int>(numbers_.size()));
  }
  // Results of an op come before the arguments of its regions, as the parser creates them.
  void number_ops(const Block& block) {
    for (auto& op : block.ops) {
      for (const Value* v : op->results) numbers_.emplace(v, static_cast<int>(numbers_.size()));
      for (auto& region : op->regions) {
        number_arguments(*region);
        number_ops(*region);
      }
    }
  }

  std::string name(const Value* v) const {
    if (!v) return "<null>";
    auto it = numbers_.find(v);
    if (it == numbers_.end()) return "<undefined %" + std::to_string(v->id) + ">";
    return "%" + std::to_string(it->second);
  }

  // Typed arguments, each followed by its facts when the kernel is specialised:
  // `%1: i32 {divisibility = 16}`.
  std::string kernel_arguments(const Function& fn) const {
    std::string out;
    for (std::size_t i = 0; i < fn.body.arguments.size(); ++i) {
      out += (i ? ", " : "") + name(fn.body.arguments[i]) + ": " + to_string(fn.body.arguments[i]->type);
      if (i >= fn.argument_facts.size()) continue;
      const ArgumentFacts& facts = fn.argument_facts[i];
      if (facts.equal_to_1) out += " {equal_to = 1}";
      else if (facts.divisibility != 1) out += " {divisibility = " + std::to_string(facts.divisibility) + "}";
    }
    return out;
  }

  std::string typed_arguments(const Block& block) const {
    std::string out;
    for (std::size_t i = 0; i < block.arguments.size(); ++i)
      out += (i ? ", " : "") + name(block.arguments[i]) + ": " + to_string(block.arguments[i]->type);
    return out;
  }

  void print_ops(const Block& block, int depth) {
    for (auto& op : block.ops) print_op(*op, depth);
  }

  void print_op(const Operation& op, int depth) {
    const std::string indent(2 * depth, ' ');
    os_ << indent;
    for (std::size_t i = 0; i < op.results.size(); ++i) os_ << (i ? ", " : "") << name(op.results[i]);
    if (!op.results.empty()) os_ << " = ";
    os_ << op.name();
    for (std::size_t i = 0; i < op.operands.size(); ++i) os_ << (i ? ", " : " ") << name(op.operands[i]);
    if (!op.attributes.empty()) {
      os_ << " {";
      for (std::size_t i = 0; i < op.attributes.size(); ++i)
        os_ << (i ? ", " : "") << op.attributes[i].first << " = " << attribute_string(op.attributes[i].second);
      os_ << "}";
    }
    for (std::size_t i = 0; i < op.results.size(); ++i) os_ << (i ? ", " : " : ") << to_string(op.results[i]->type);
    if (options_.locations && op.loc.known()) os_ << " loc(" << quoted(op.loc.file) << ":" << op.loc.line << ")";
    for (std::size_t r = 0; r < op.regions.size(); ++r) {
      os_ << (r ? indent + "} {\n" : " {\n") << indent << "^(" << typed_arguments(*op.regions[r]) << "):\n";
      print_ops(*op.regions[r], depth + 1);
    }
    if (!op.regions.empty()) os_ << indent << "}";
    os_ << "\n";
  }

  std::ostream& os_;
  PrintOptions options_;
  std::unordered_map<const Value*, int> numbers_;
};

}  // namespace

std::string attribute_string(const Attribute& a) { return std::visit(AttributeText{}, a); }

void print(std::ostream& os, const Function& fn, PrintOptions options) { Printer(os, options).print(fn); }

std::string print(const Function& fn, PrintOptions options) {
  std::ostringstream os;
  print(os, fn, options);
  return os.str();
}

}  // namespace kiln::ir
