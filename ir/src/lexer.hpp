// Tokens of the IR text form and the on-demand lexer the parser reads them with.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "kiln/ir/ir.hpp"

namespace kiln::ir::text {

enum class TokenKind {
  identifier,   // op names, types, attribute names, symbols: `add`, `tile`, `lt`
  value,        // `%12`
  kernel_name,  // `@softmax` or `@"name with <odd> characters"`
  integer,      // `42`, `-1`
  floating,     // `1.5`, `1e-30`, `-inf`, `-nan`
  string,       // `"text"`
  punct,        // one of ( ) { } [ ] < > , : = ^
  end,
};

struct Token {
  TokenKind kind = TokenKind::end;
  std::string_view text;  // the token's source text
  int line = 1;
  int column = 1;
  std::string contents;  // unescaped string contents, or the kernel name without '@'

  bool is(char c) const { return kind == TokenKind::punct && text[0] == c; }
  bool is_word(std::string_view w) const { return kind == TokenKind::identifier && text == w; }
  /// "'text'", or "end of input": how error messages show what they found.
  std::string describe() const { return kind == TokenKind::end ? "end of input" : "'" + std::string(text) + "'"; }
};

/// Reads tokens from the text one at a time; the parser can look ahead
/// without consuming, and read tile shapes (`64x32xf16`) character by character.
class Lexer {
 public:
  Lexer(std::string_view text, std::string_view source_name) : text_(text), source_name_(source_name) {}

  Token next() { return lex(cursor_); }
  /// The token after the next `ahead` ones, without consuming anything.
  Token peek(int ahead = 0) const {
    Cursor c = cursor_;
    for (int i = 0; i < ahead; ++i) lex(c);
    return lex(c);
  }

  /// Consumes the character `c` after optional whitespace, if it is next.
  bool consume_char(char c) {
    skip_whitespace(cursor_);
    if (cursor_.pos < text_.size() && text_[cursor_.pos] == c) {
      advance(cursor_);
      return true;
    }
    return false;
  }
  /// True if the next non-blank character is a decimal digit.
  bool next_is_digit() {
    skip_whitespace(cursor_);
    return cursor_.pos < text_.size() && is_digit(text_[cursor_.pos]);
  }

  [[noreturn]] void error(int line, int column, const std::string& message) const {
    throw IRError(std::string(source_name_) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                  message);
  }
  [[noreturn]] void error(const Token& at, const std::string& message) const { error(at.line, at.column, message); }

 private:
  struct Cursor {
    std::size_t pos = 0;
    int line = 1;
    int column = 1;
  };

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_word_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
  static bool is_word_char(char c) { return is_word_start(c) || is_digit(c); }

  char at(const Cursor& c, std::size_t ahead = 0) const {
    return c.pos + ahead < text_.size() ? text_[c.pos + ahead] : '\0';
  }
  void advance(Cursor& c) const {
    if (text_[c.pos] == '\n') {
      ++c.line;
      c.column = 1;
    } else {
      ++c.column;
    }
    ++c.pos;
  }
  void skip_whitespace(Cursor& c) const {
    while (c.pos < text_.size() && (at(c) == ' ' || at(c) == '\t' || at(c) == '\n' || at(c) == '\r')) advance(c);
  }
  void skip_word(Cursor& c) const {
    while (c.pos < text_.size() && is_word_char(at(c))) advance(c);
  }
  bool at_word(const Cursor& c, std::string_view w) const {
    return text_.substr(c.pos, w.size()) == w && !is_word_char(at(c, w.size()));
  }

  Token lex(Cursor& c) const {
    skip_whitespace(c);
    Token t;
    t.line = c.line;
    t.column = c.column;
    const std::size_t start = c.pos;
    if (c.pos >= text_.size()) {
      t.kind = TokenKind::end;
      return t;
    }
    const char ch = at(c);
    if (ch == '%') {
      advance(c);
      if (!is_word_char(at(c))) error(t.line, t.column, "expected a value name after '%'");
      skip_word(c);
      t.kind = TokenKind::value;
    } else if (ch == '@') {
      advance(c);
      if (at(c) == '"') {
        t.contents = lex_string(c);
      } else {
        if (!is_word_char(at(c))) error(t.line, t.column, "expected a kernel name after '@'");
        skip_word(c);
        t.contents = std::string(text_.substr(start + 1, c.pos - start - 1));
      }
      t.kind = TokenKind::kernel_name;
    } else if (ch == '"') {
      t.contents = lex_string(c);
      t.kind = TokenKind::string;
    } else if (is_digit(ch) || ch == '-') {
      t.kind = lex_number(c, t);
    } else if (is_word_start(ch)) {
      skip_word(c);
      t.kind = TokenKind::identifier;
    } else if (std::string_view("(){}[]<>,:=^").find(ch) != std::string_view::npos) {
      advance(c);
      t.kind = TokenKind::punct;
    } else {
      error(t.line, t.column, "unexpected character " + show_char(ch));
    }
    t.text = text_.substr(start, c.pos - start);
    return t;
  }

  // `[-]digits[.digits][e[+-]digits]`, or `-inf` / `-nan`.
  TokenKind lex_number(Cursor& c, const Token& t) const {
    bool is_float = false;
    if (at(c) == '-') {
      advance(c);
      if (at_word(c, "inf") || at_word(c, "nan")) {
        skip_word(c);
        return TokenKind::floating;
      }
      if (!is_digit(at(c))) error(t.line, t.column, "expected a number after '-'");
    }
    while (is_digit(at(c))) advance(c);
    if (at(c) == '.') {
      is_float = true;
      advance(c);
      while (is_digit(at(c))) advance(c);
    }
    const bool signed_exponent = (at(c, 1) == '+' || at(c, 1) == '-') && is_digit(at(c, 2));
    if ((at(c) == 'e' || at(c) == 'E') && (is_digit(at(c, 1)) || signed_exponent)) {
      is_float = true;
      advance(c);
      if (!is_digit(at(c))) advance(c);
      while (is_digit(at(c))) advance(c);
    }
    return is_float ? TokenKind::floating : TokenKind::integer;
  }

  // A double-quoted string with \" \\ \n \t \xHH escapes and no raw control character but tab;
  // the cursor is on the '"'.
  std::string lex_string(Cursor& c) const {
    const int line = c.line, column = c.column;
    advance(c);
    std::string out;
    while (true) {
      if (c.pos >= text_.size() || at(c) == '\n') error(line, column, "unterminated string");
      const char ch = at(c);
      if (ch == '"') {
        advance(c);
        return out;
      }
      // The printer escapes control characters; raw ones would end up in messages.
      if ((static_cast<unsigned char>(ch) < 0x20 && ch != '\t') || ch == 0x7f)
        error(c.line, c.column, "control character " + show_char(ch) + " in string; write it as an \\x escape");
      if (ch != '\\') {
        out += ch;
        advance(c);
        continue;
      }
      const int escape_line = c.line, escape_column = c.column;
      advance(c);
      const char e = at(c);
      if (e == '"' || e == '\\') {
        out += e;
      } else if (e == 'n') {
        out += '\n';
      } else if (e == 't') {
        out += '\t';
      } else if (e == 'x' && hex_value(at(c, 1)) >= 0 && hex_value(at(c, 2)) >= 0) {
        out += static_cast<char>(hex_value(at(c, 1)) * 16 + hex_value(at(c, 2)));
        advance(c);
        advance(c);
      } else {
        if (c.pos >= text_.size() || e == '\n') error(line, column, "unterminated string");
        const bool printable = e >= 0x20 && e < 0x7f;
        error(escape_line, escape_column,
              printable ? "unknown escape '\\" + std::string(1, e) + "' in string"
                        : "unknown escape in string: '\\' followed by " + show_char(e));
      }
      advance(c);
    }
  }

  static int hex_value(char c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  static std::string show_char(char c) {
    if (c >= 0x20 && c < 0x7f) return "'" + std::string(1, c) + "'";
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(c));
    return buf;
  }

  std::string_view text_;
  std::string_view source_name_;
  Cursor cursor_;
};

}  // namespace kiln::ir::text
