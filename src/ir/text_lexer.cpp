// Lexer of the IR text form.
#include "ir/text_lexer.h"

#include <algorithm>
#include <cstdio>

#include "support/error.h"

namespace sy::ir::text {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

[[noreturn]] void fail(int line, int col, const std::string& msg) {
  throw Error(std::to_string(line) + ":" + std::to_string(col) + ": " + msg);
}

std::string printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space();
      Token t;
      t.line = line_;
      t.col = col_;
      size_t start = i_;
      if (i_ >= s_.size()) {
        t.kind = Tok::End;
        out.push_back(std::move(t));
        return out;
      }
      char c = s_[i_];
      bool after_dot = !out.empty() && out.back().kind == Tok::Dot;
      if (after_dot && is_digit(c)) {
        // Tuple projection "%4.0.1": only digits, so "0.1" is not read as a number.
        while (i_ < s_.size() && is_digit(s_[i_])) advance();
        t.kind = Tok::Number;
      } else if (is_alpha(c)) {
        while (i_ < s_.size() && (is_alnum(s_[i_]) || s_[i_] == '.')) advance();
        t.kind = Tok::Ident;
      } else if (is_digit(c) || (c == '-' && i_ + 1 < s_.size() && (is_digit(s_[i_ + 1]) || s_[i_ + 1] == '.'))) {
        lex_number();
        t.kind = Tok::Number;
      } else if (c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') {
        advance(); advance();
        t.kind = Tok::Arrow;
      } else if (c == '-' && (s_.substr(i_, 4) == "-inf" || s_.substr(i_, 4) == "-nan") &&
                 (i_ + 4 >= s_.size() || !is_alnum(s_[i_ + 4]))) {
        for (int k = 0; k < 4; ++k) advance();
        t.kind = Tok::Number;
      } else if (c == '"') {
        lex_string();
        t.kind = Tok::String;
      } else if (c == '%' || c == '@') {
        advance();
        t.kind = c == '%' ? Tok::Local : Tok::Global;
        if (i_ < s_.size() && s_[i_] == '"') {
          size_t qs = i_;
          int ql = line_, qc = col_;
          lex_string();
          Token q;
          q.kind = Tok::String;
          q.text = s_.substr(qs, i_ - qs);
          q.line = ql;
          q.col = qc;
          t.name = unquote(q);
          t.quoted = true;
        } else {
          size_t ns = i_;
          while (i_ < s_.size() && is_alnum(s_[i_])) advance();
          if (i_ == ns) fail(t.line, t.col, std::string("expected a name after '") + c + "'");
          t.name = std::string(s_.substr(ns, i_ - ns));
        }
      } else if (c == '.' && s_.substr(i_, 3) == "...") {
        for (int k = 0; k < 3; ++k) advance();
        t.kind = Tok::Ellipsis;
      } else {
        switch (c) {
          case '(': t.kind = Tok::LParen; break;
          case ')': t.kind = Tok::RParen; break;
          case '[': t.kind = Tok::LBracket; break;
          case ']': t.kind = Tok::RBracket; break;
          case '{': t.kind = Tok::LBrace; break;
          case '}': t.kind = Tok::RBrace; break;
          case ',': t.kind = Tok::Comma; break;
          case ':': t.kind = Tok::Colon; break;
          case ';': t.kind = Tok::Semi; break;
          case '=': t.kind = Tok::Equal; break;
          case '.': t.kind = Tok::Dot; break;
          case '#': t.kind = Tok::Hash; break;
          default: fail(line_, col_, "unexpected character " + printable(c));
        }
        advance();
      }
      t.text = s_.substr(start, i_ - start);
      out.push_back(std::move(t));
    }
  }

 private:
  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }

  void skip_space() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') advance();
      } else {
        break;
      }
    }
  }

  void lex_number() {
    if (s_[i_] == '-') advance();
    while (i_ < s_.size() && is_digit(s_[i_])) advance();
    if (i_ < s_.size() && s_[i_] == '.' && s_.substr(i_, 3) != "...") {
      advance();
      while (i_ < s_.size() && is_digit(s_[i_])) advance();
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      size_t j = i_ + 1;
      if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
      if (j < s_.size() && is_digit(s_[j])) {
        while (i_ < j) advance();
        while (i_ < s_.size() && is_digit(s_[i_])) advance();
      }
    }
    if (i_ < s_.size() && is_alpha(s_[i_])) fail(line_, col_, "malformed number");
  }

  // Strings hold whole weight tensors (base64), so the scan is a tight loop and the position is
  // updated once at the end.
  void lex_string() {
    size_t j = i_ + 1;
    while (j < s_.size() && s_[j] != '"') j += s_[j] == '\\' ? 2 : 1;
    if (j >= s_.size()) fail(line_, col_, "unterminated string");
    ++j;  // closing quote
    std::string_view span = s_.substr(i_, j - i_);
    size_t last_nl = span.rfind('\n');
    if (last_nl == std::string_view::npos) {
      col_ += static_cast<int>(span.size());
    } else {
      line_ += static_cast<int>(std::count(span.begin(), span.end(), '\n'));
      col_ = static_cast<int>(span.size() - last_nl);
    }
    i_ = j;
  }

  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const char* tok_name(Tok k) {
  switch (k) {
    case Tok::Ident: return "an identifier";
    case Tok::Local: return "a %name";
    case Tok::Global: return "an @name";
    case Tok::Number: return "a number";
    case Tok::String: return "a string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Semi: return "';'";
    case Tok::Equal: return "'='";
    case Tok::Dot: return "'.'";
    case Tok::Arrow: return "'->'";
    case Tok::Hash: return "'#'";
    case Tok::Ellipsis: return "'...'";
    case Tok::End: return "end of input";
  }
  return "?";
}

std::vector<Token> lex(std::string_view src) { return Lexer(src).run(); }

std::string unquote(const Token& t) {
  std::string_view s = t.text;
  SY_CHECK(s.size() >= 2 && s.front() == '"' && s.back() == '"') << "not a string token";
  std::string out;
  out.reserve(s.size());
  int line = t.line, col = t.col + 1;
  for (size_t i = 1; i + 1 < s.size(); ++i, ++col) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      col = 0;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    char e = s[++i];
    ++col;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'x': {
        int hi = i + 1 < s.size() - 1 ? hex_value(s[i + 1]) : -1;
        int lo = i + 2 < s.size() - 1 ? hex_value(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) fail(line, col - 1, "expected two hex digits after \\x");
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        col += 2;
        break;
      }
      default: fail(line, col - 1, std::string("unknown escape \\") + (e == '\n' ? std::string("<newline>") : std::string(1, e)));
    }
  }
  return out;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

bool is_plain_name(std::string_view s) {
  if (s.empty() || !is_alpha(s[0])) return false;
  for (char c : s)
    if (!is_alnum(c)) return false;
  return true;
}

std::string name_text(std::string_view s) { return is_plain_name(s) ? std::string(s) : quote(s); }

}  // namespace sy::ir::text
