// Recursive-descent parser for the IR's text form (ir/OPS.md), the inverse of printer.cpp.
#include "kiln/ir/parser.hpp"

#include <charconv>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "lexer.hpp"

namespace kiln::ir {

namespace {

using text::Lexer;
using text::Token;
using text::TokenKind;

class Parser {
 public:
  Parser(std::string_view text, std::string_view source_name) : lex_(text, source_name) {}

  std::unique_ptr<Function> parse() {
    fn_ = std::make_unique<Function>();
    const Token keyword = lex_.next();
    if (!keyword.is_word("kernel")) lex_.error(keyword, "expected 'kernel', got " + keyword.describe());
    const Token name = lex_.next();
    if (name.kind != TokenKind::kernel_name)
      lex_.error(name, "expected kernel name '@name' after 'kernel', got " + name.describe());
    require_printable(name, "the kernel name");
    fn_->name = name.contents;
    expect('(', "after the kernel name");
    scopes_.emplace_back();
    if (!accept(')')) {
      do parse_kernel_argument();
      while (accept(','));
      expect(')', "after the kernel arguments");
    }
    // Facts are given for every argument or none.
    bool any_facts = false;
    for (const ArgumentFacts& facts : fn_->argument_facts) any_facts |= !facts.trivial();
    if (!any_facts) fn_->argument_facts.clear();
    expect('{', "to open the kernel body");
    parse_ops(fn_->body, "to close the kernel body");
    const Token rest = lex_.next();
    if (rest.kind != TokenKind::end) lex_.error(rest, "expected end of input after the kernel, got " + rest.describe());
    return std::move(fn_);
  }

 private:
  bool accept(char c) {
    if (!lex_.peek().is(c)) return false;
    lex_.next();
    return true;
  }
  void expect(char c, const std::string& context) {
    const Token t = lex_.next();
    if (!t.is(c)) lex_.error(t, std::string("expected '") + c + "' " + context + ", got " + t.describe());
  }

  // Kernel names and file names appear in every message about the kernel,
  // which must stay one line: no control characters, escaped or not.
  void require_printable(const Token& t, const std::string& what) const {
    for (char c : t.contents)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        char code[8];
        std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned char>(c));
        lex_.error(t, "control character " + std::string(code) + " in " + what);
      }
  }

  // A value name about to be defined; names are unique in the kernel.
  Token new_value_name() {
    const Token t = lex_.next();
    if (t.kind != TokenKind::value) lex_.error(t, "expected a value name, got " + t.describe());
    if (defined_.count(std::string(t.text))) lex_.error(t, "redefinition of value " + std::string(t.text));
    return t;
  }
  void define(const Token& name, Value* v) {
    defined_.insert(std::string(name.text));
    scopes_.back().emplace(std::string(name.text), v);
  }
  Value* use() {
    const Token t = lex_.next();
    if (t.kind != TokenKind::value) lex_.error(t, "expected a value name, got " + t.describe());
    const std::string key(t.text);
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
      if (auto it = scope->find(key); it != scope->end()) return it->second;
    if (defined_.count(key)) lex_.error(t, "use of value " + key + " outside its scope");
    lex_.error(t, "use of undefined value " + key);
  }

  // `%n: type` with optional facts `{divisibility = 16}` or `{equal_to = 1}`.
  void parse_kernel_argument() {
    parse_argument(fn_->body);
    ArgumentFacts facts;
    if (accept('{')) {
      const Token key = lex_.next();
      expect('=', "after argument fact " + key.describe());
      const Token value = lex_.next();
      if (key.is_word("divisibility") && value.kind == TokenKind::integer) {
        facts.divisibility = integer_value(value);
        if (facts.divisibility < 1 || (facts.divisibility & (facts.divisibility - 1)) != 0)
          lex_.error(value, "divisibility must be a positive power of two, got " + value.describe());
      } else if (key.is_word("equal_to") && value.kind == TokenKind::integer && integer_value(value) == 1) {
        facts.equal_to_1 = true;
      } else {
        lex_.error(key, "expected an argument fact 'divisibility = <power of two>' or 'equal_to = 1', got " +
                            key.describe() + " = " + value.describe());
      }
      expect('}', "to close the argument facts");
    }
    fn_->argument_facts.push_back(facts);
  }

  void parse_argument(Block& block) {
    const Token name = new_value_name();
    expect(':', "after value name");
    define(name, fn_->add_argument(block, parse_type()));
  }

  // `i32`, `ptr<f32>`, `tile<64x32xf16>`, `tile<128xptr<f32>>`, `shared<3x64x32xf16>`.
  Type parse_type() {
    const Token t = lex_.next();
    const bool shared = t.is_word("shared");
    if (!shared && !t.is_word("tile")) return parse_element_type(t);
    expect('<', shared ? "after 'shared'" : "after 'tile'");
    Shape shape;
    do {
      const Token dim = lex_.next();
      if (dim.kind != TokenKind::integer || dim.text[0] == '-')
        lex_.error(dim, "expected a tile dimension, got " + dim.describe());
      shape.push_back(integer_value(dim));
      if (!lex_.consume_char('x')) {
        const Token after = lex_.peek();
        lex_.error(after, "expected 'x' after tile dimension, got " + after.describe());
      }
    } while (lex_.next_is_digit());
    const Token element_token = lex_.next();
    const Type element = parse_element_type(element_token);
    if (!shared) {
      expect('>', "to close the tile type");
      return element.with_shape(std::move(shape));
    }
    if (element.is_pointer) lex_.error(element_token, "a shared buffer holds numbers, got " + element_token.describe());
    expect('>', "to close the shared type");
    return Type::shared(element.dtype, std::move(shape));
  }
  Type parse_element_type(const Token& t) {
    if (t.is_word("ptr")) {
      expect('<', "after 'ptr'");
      const Token pointee = lex_.next();
      const auto dtype = pointee.kind == TokenKind::identifier ? parse_dtype(pointee.text) : std::nullopt;
      if (!dtype) lex_.error(pointee, "unknown pointee type " + pointee.describe());
      expect('>', "to close the pointer type");
      return Type::pointer(*dtype);
    }
    const auto dtype = t.kind == TokenKind::identifier ? parse_dtype(t.text) : std::nullopt;
    if (!dtype) lex_.error(t, "unknown type " + t.describe());
    return Type::scalar(*dtype);
  }

  std::int64_t integer_value(const Token& t) const {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc()) lex_.error(t, "integer out of range " + t.describe());
    return v;
  }
  double float_value(const Token& t) const {
    double v = 0;
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc()) lex_.error(t, "float out of range " + t.describe());
    return v;
  }

  // Ops up to the block's closing '}', which is consumed.
  void parse_ops(Block& block, const char* closing) {
    while (true) {
      const Token t = lex_.peek();
      if (t.is('}')) {
        lex_.next();
        return;
      }
      if (t.kind == TokenKind::end) lex_.error(t, std::string("expected '}' ") + closing + ", got end of input");
      parse_op(block);
    }
  }

  // `[results =] name [operands] [{attributes}] [: types] [loc("file":line)] [regions]`
  void parse_op(Block& block) {
    std::vector<Token> result_names;
    if (lex_.peek().kind == TokenKind::value) {
      do {
        const Token r = new_value_name();
        for (const Token& earlier : result_names)
          if (earlier.text == r.text) lex_.error(r, "redefinition of value " + std::string(r.text));
        result_names.push_back(r);
      } while (accept(','));
      expect('=', "after result names");
    }
    const Token name = lex_.next();
    if (name.kind != TokenKind::identifier) lex_.error(name, "expected an op name, got " + name.describe());
    const auto code = parse_opcode(name.text);
    if (!code) lex_.error(name, "unknown op " + name.describe());

    auto op = std::make_unique<Operation>();
    op->code = *code;
    op->parent = &block;
    // An op without operands (barrier) may be followed by the next op's results.
    if (op->info().num_operands != 0 && lex_.peek().kind == TokenKind::value) {
      do op->operands.push_back(use());
      while (accept(','));
    }
    if (starts_attributes(*op)) parse_attributes(*op);
    std::vector<Type> types;
    if (accept(':')) {
      do types.push_back(parse_type());
      while (accept(','));
    }
    if (types.size() != result_names.size())
      lex_.error(name, "'" + std::string(name.text) + "' has " + std::to_string(result_names.size()) +
                           " result names but " + std::to_string(types.size()) + " result types");
    if (lex_.peek().is_word("loc")) parse_loc(*op);

    for (std::size_t i = 0; i < types.size(); ++i) {
      Value* v = fn_->new_value(types[i]);
      v->def = op.get();
      v->index = static_cast<int>(i);
      op->results.push_back(v);
      defined_.insert(std::string(result_names[i].text));
    }
    while (accept('{')) parse_region(*op);
    for (std::size_t i = 0; i < result_names.size(); ++i) define(result_names[i], op->results[i]);
    block.ops.push_back(std::move(op));
  }

  // A '{' after the operands opens the attributes, or the first region: that
  // starts with '^', or (for ops that take regions) lacks the `name =` start.
  bool starts_attributes(const Operation& op) const {
    if (!lex_.peek().is('{') || lex_.peek(1).is('^')) return false;
    return op.info().num_regions == 0 || (lex_.peek(1).kind == TokenKind::identifier && lex_.peek(2).is('='));
  }

  // `{key = value, …}`
  void parse_attributes(Operation& op) {
    expect('{', "to open the attributes");
    do {
      const Token key = lex_.next();
      if (key.kind != TokenKind::identifier) lex_.error(key, "expected an attribute name, got " + key.describe());
      if (op.has_attribute(key.text)) lex_.error(key, "duplicate attribute " + key.describe());
      expect('=', "after attribute name " + key.describe());
      op.attributes.emplace_back(std::string(key.text), parse_attribute_value());
    } while (accept(','));
    expect('}', "to close the attributes");
  }

  Attribute parse_attribute_value() {
    const Token t = lex_.next();
    switch (t.kind) {
      case TokenKind::integer: return integer_value(t);
      case TokenKind::floating: return float_value(t);
      case TokenKind::string: return t.contents;
      case TokenKind::identifier:
        if (t.text == "inf" || t.text == "nan") return float_value(t);
        if (auto dtype = parse_dtype(t.text)) return *dtype;
        return Symbol{std::string(t.text)};
      default: break;
    }
    if (!t.is('[')) lex_.error(t, "expected an attribute value, got " + t.describe());
    std::vector<std::int64_t> list;
    if (accept(']')) return list;
    do {
      const Token element = lex_.next();
      if (element.kind != TokenKind::integer)
        lex_.error(element, "expected an integer in the list, got " + element.describe());
      list.push_back(integer_value(element));
    } while (accept(','));
    expect(']', "to close the integer list");
    return list;
  }

  // `loc("file":line)`
  void parse_loc(Operation& op) {
    lex_.next();
    expect('(', "after 'loc'");
    const Token file = lex_.next();
    if (file.kind != TokenKind::string) lex_.error(file, "expected a quoted file name in loc, got " + file.describe());
    require_printable(file, "the file name in loc");
    expect(':', "after the file name in loc");
    const Token line = lex_.next();
    const std::int64_t number = line.kind == TokenKind::integer ? integer_value(line) : 0;
    if (number < 1 || number > std::numeric_limits<int>::max())
      lex_.error(line, "expected a positive line number in loc, got " + line.describe());
    expect(')', "to close loc");
    op.loc = SourceLoc{file.contents, static_cast<int>(number)};
  }

  // After the '{': `^(args): ops }`
  void parse_region(Operation& op) {
    auto block = std::make_unique<Block>();
    block->parent = &op;
    Block& region = *block;
    op.regions.push_back(std::move(block));
    expect('^', "to open the region's block");
    expect('(', "after '^'");
    scopes_.emplace_back();
    if (!accept(')')) {
      do parse_argument(region);
      while (accept(','));
      expect(')', "after the block arguments");
    }
    expect(':', "after the block arguments");
    parse_ops(region, "to close the region");
    scopes_.pop_back();
  }

  Lexer lex_;
  std::unique_ptr<Function> fn_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
  std::unordered_set<std::string> defined_;
};

}  // namespace

std::unique_ptr<Function> parse_function(std::string_view text, std::string_view source_name) {
  return Parser(text, source_name).parse();
}

}  // namespace kiln::ir
