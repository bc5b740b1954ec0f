// Parser of the IR text form. The whole text is tokenised first; signatures of all functions and
// the constants section are read before any body, so bodies may refer to functions defined later
// and to constants listed at the end. Bodies are flat let-lists, so recursion is bounded by the
// nesting of fn literals, types and inline expressions (limited by kMaxDepth).
#include "ir/parser.h"

#include <bit>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <limits>
#include <set>
#include <unordered_map>

#include "ir/text_lexer.h"
#include "support/base64.h"
#include "support/shape_limits.h"

namespace sy::ir {
namespace {

using text::Tok;
using text::Token;

constexpr int kMaxDepth = 200;

std::string pos(const Token& t) { return std::to_string(t.line) + ":" + std::to_string(t.col); }

[[noreturn]] void fail_at(const Token& t, const std::string& msg) { throw Error(pos(t) + ": " + msg); }

std::string describe(const Token& t) {
  if (t.kind == Tok::End) return "end of input";
  std::string s(t.text.substr(0, 24));
  if (t.text.size() > 24) s += "...";
  return "'" + s + "'";
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// A let-bound %N (as opposed to a variable %name or %"0").
bool is_let_name(const Token& t) { return t.kind == Tok::Local && !t.quoted && all_digits(t.name); }

struct Binding {
  Expr e;
  const Token* at = nullptr;
  bool used = false;
};

struct Scope {
  const Scope* parent = nullptr;  // only for messages: nested functions are closed
  std::unordered_map<std::string, Expr> vars;
  std::unordered_map<std::string, Binding> lets;
  std::vector<std::string> let_order;

  bool outer_has(const std::string& name, bool let) const {
    for (const Scope* s = parent; s; s = s->parent)
      if (let ? s->lets.count(name) != 0 : s->vars.count(name) != 0) return true;
    return false;
  }
};

struct Signature {
  std::string name;
  const Token* at = nullptr;
  Scope scope;
  std::vector<Expr> params;
  Type ret;
  FuncAttrs attrs;
  size_t body = 0;  // token index of the body's '{'
};

struct ConstEntry {
  Expr e;
  const Token* at = nullptr;
  bool used = false;
};

class Parser {
 public:
  Parser(std::string_view src, std::optional<std::string_view> blob) : toks_(text::lex(src)), blob_(blob) {}

  Module run() {
    Module m;
    headers(m);
    std::vector<Signature> sigs;
    size_t constants_at = 0;
    while (peek().kind != Tok::End) {
      if (is_word(peek(), "def")) {
        sigs.push_back(signature());
      } else if (is_word(peek(), "constants")) {
        if (constants_at) fail_at(peek(), "a second constants section");
        next();
        constants_at = pos_;
        skip_braces();
      } else {
        fail_at(peek(), "expected 'def' or 'constants', got " + describe(peek()));
      }
    }
    if (constants_at) {
      pos_ = constants_at;
      constants();
    }
    for (Signature& s : sigs) {
      pos_ = s.body;
      const Token* result_at = nullptr;
      Expr body = parse_body(s.scope, result_at);
      if (!type_equal(body->type, s.ret))
        fail_at(*result_at, "@" + s.name + " is declared to return " + type_str(s.ret) + " but its body has type " +
                               type_str(body->type));
      m.functions[s.name] = function(s.params, body, s.attrs);
    }
    for (auto& [name, c] : consts_)
      if (!c.used) fail_at(*c.at, "constant @" + name + " is never used");
    return m;
  }

 private:
  // ---- tokens ----
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (t.kind != Tok::End) ++pos_;
    return t;
  }
  bool accept(Tok k) {
    if (peek().kind != k) return false;
    next();
    return true;
  }
  const Token& expect(Tok k, const std::string& context = "") {
    if (peek().kind != k)
      fail_at(peek(), std::string("expected ") + text::tok_name(k) + context + ", got " + describe(peek()));
    return next();
  }
  static bool is_word(const Token& t, std::string_view w) { return t.kind == Tok::Ident && t.text == w; }
  void expect_word(std::string_view w, const std::string& context = "") {
    if (!is_word(peek(), w)) fail_at(peek(), "expected '" + std::string(w) + "'" + context + ", got " + describe(peek()));
    next();
  }

  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) fail_at(p_.peek(), "nesting too deep (more than " + std::to_string(kMaxDepth) + " levels)");
    }
    ~DepthGuard() { --p_.depth_; }
    Parser& p_;
  };

  // ---- numbers ----
  static int64_t int_value(const Token& t) {
    std::string s(t.text);
    if (t.kind != Tok::Number || s.find_first_of(".eEni") != std::string::npos)
      fail_at(t, "expected an integer, got " + describe(t));
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno || *end) fail_at(t, "integer " + s + " out of range");
    return v;
  }

  // ---- headers ----
  void headers(Module& m) {
    std::set<std::string> seen;
    while (peek().kind == Tok::Hash) {
      next();
      expect(Tok::LBracket, " after '#'");
      const Token& key = expect(Tok::Ident, " (header name)");
      if (!seen.insert(std::string(key.text)).second) fail_at(key, "header '" + std::string(key.text) + "' given twice");
      expect(Tok::Equal, " after header name");
      if (key.text == "version") {
        const Token& v = expect(Tok::String, " (version)");
        if (text::unquote(v) != "0.1") fail_at(v, "unsupported IR text version " + std::string(v.text) + " (expected \"0.1\")");
      } else if (key.text == "outputs") {
        expect(Tok::LBracket, " (list of output names)");
        while (peek().kind != Tok::RBracket) {
          m.output_names.push_back(text::unquote(expect(Tok::String, " (output name)")));
          if (!accept(Tok::Comma)) break;
        }
        expect(Tok::RBracket, " after output names");
      } else {
        fail_at(key, "unknown header '" + std::string(key.text) + "' (expected version or outputs)");
      }
      expect(Tok::RBracket, " to close the header");
    }
  }

  // Skips a balanced {...} without parsing it (bodies are parsed after all signatures).
  void skip_braces() {
    const Token& open = expect(Tok::LBrace);
    int depth = 1;
    while (depth > 0) {
      const Token& t = next();
      if (t.kind == Tok::End) fail_at(open, "unterminated '{'");
      if (t.kind == Tok::LBrace) ++depth;
      if (t.kind == Tok::RBrace) --depth;
    }
  }

  // ---- types ----
  Type parse_type() {
    DepthGuard g(*this);
    const Token& t = peek();
    if (is_word(t, "Tensor")) {
      next();
      expect(Tok::LBracket, " after 'Tensor'");
      expect(Tok::LParen, " (shape)");
      Shape shape;
      int64_t nonzero = 1;  // the product of the non-zero extents (see shape_within_limits)
      while (peek().kind != Tok::RParen) {
        const Token& d = peek();
        int64_t v = int_value(next());
        if (v < 0) fail_at(d, "negative dimension " + std::to_string(v));
        // Bounded so that element counts, strides and byte sizes never overflow.
        if (v != 0 && nonzero > kMaxShapeElements / v) fail_at(d, "shape too large");
        if (v != 0) nonzero *= v;
        shape.push_back(v);
        if (!accept(Tok::Comma)) break;
      }
      expect(Tok::RParen, " to close the shape");
      expect(Tok::Comma, " after the shape");
      const Token& dt = expect(Tok::Ident, " (dtype)");
      auto dtype = dtype_from_name(dt.text);
      if (!dtype) fail_at(dt, "unknown dtype '" + std::string(dt.text) + "'");
      expect(Tok::RBracket, " to close the tensor type");
      return tensor_type(std::move(shape), *dtype);
    }
    if (t.kind == Tok::LParen) {
      next();
      std::vector<Type> fields;
      while (peek().kind != Tok::RParen) {
        fields.push_back(parse_type());
        if (!accept(Tok::Comma)) break;
      }
      expect(Tok::RParen, " to close the tuple type");
      return tuple_type(std::move(fields));
    }
    if (is_word(t, "fn")) {
      next();
      expect(Tok::LParen, " after 'fn' in a function type");
      std::vector<Type> params;
      while (peek().kind != Tok::RParen) {
        params.push_back(parse_type());
        if (!accept(Tok::Comma)) break;
      }
      expect(Tok::RParen, " to close the parameter types");
      expect(Tok::Arrow, " in a function type");
      Type ret = parse_type();
      return func_type(std::move(params), std::move(ret));
    }
    fail_at(t, "expected a type (Tensor[...], (...) or fn(...) -> ...), got " + describe(t));
  }

  // ---- functions ----
  void parse_params(Scope& s, std::vector<Expr>& params) {
    expect(Tok::LParen, " before the parameters");
    while (peek().kind != Tok::RParen) {
      const Token& p = expect(Tok::Local, " (parameter)");
      if (is_let_name(p))
        fail_at(p, "parameter %" + p.name + " has a number as name; write %\"" + p.name + "\"");
      expect(Tok::Colon, " after parameter %" + p.name);
      Type t = parse_type();
      if (s.vars.count(p.name)) fail_at(p, "duplicate parameter %" + text::name_text(p.name));
      Expr v = var(p.name, t);
      s.vars[p.name] = v;
      params.push_back(v);
      if (!accept(Tok::Comma)) break;
    }
    expect(Tok::RParen, " after the parameters");
  }

  FuncAttrs parse_func_attrs() {
    FuncAttrs attrs;
    if (!is_word(peek(), "attrs")) return attrs;
    next();
    expect(Tok::LBrace, " after 'attrs'");
    while (peek().kind != Tok::RBrace) {
      const Token& k = peek();
      std::string key;
      if (k.kind == Tok::Ident && text::is_plain_name(k.text)) key = std::string(k.text);
      else if (k.kind == Tok::String) key = text::unquote(k);
      else fail_at(k, "expected a function attribute name, got " + describe(k));
      next();
      expect(Tok::Equal, " after function attribute " + key);
      std::string value = text::unquote(expect(Tok::String, " (function attribute value)"));
      if (!attrs.emplace(key, value).second) fail_at(k, "function attribute " + key + " given twice");
      if (!accept(Tok::Comma)) break;
    }
    expect(Tok::RBrace, " to close the function attributes");
    return attrs;
  }

  Signature signature() {
    next();  // def
    Signature s;
    const Token& name = expect(Tok::Global, " (function name) after 'def'");
    s.name = name.name;
    s.at = &name;
    if (func_types_.count(s.name)) fail_at(name, "function @" + text::name_text(s.name) + " defined twice");
    parse_params(s.scope, s.params);
    expect(Tok::Arrow, " (return type) after the parameters of @" + text::name_text(s.name));
    s.ret = parse_type();
    s.attrs = parse_func_attrs();
    s.body = pos_;
    skip_braces();
    std::vector<Type> pts;
    for (auto& p : s.params) pts.push_back(p->type);
    func_types_[s.name] = func_type(std::move(pts), s.ret);
    return s;
  }

  Expr parse_fn(Scope& outer) {
    next();  // fn
    Scope inner;
    inner.parent = &outer;
    std::vector<Expr> params;
    parse_params(inner, params);
    expect(Tok::Arrow, " (return type) after the parameters of fn");
    Type ret = parse_type();
    FuncAttrs attrs = parse_func_attrs();
    const Token* result_at = nullptr;
    Expr body = parse_body(inner, result_at);
    if (!type_equal(body->type, ret))
      fail_at(*result_at, "fn is declared to return " + type_str(ret) + " but its body has type " + type_str(body->type));
    return function(std::move(params), std::move(body), std::move(attrs));
  }

  // { %0 = ...; ... result }; result_at is set to the first token of the result expression.
  Expr parse_body(Scope& s, const Token*& result_at) {
    expect(Tok::LBrace, " to open the body");
    while (is_let_name(peek()) && peek(1).kind == Tok::Equal) {
      const Token& n = next();
      next();
      if (s.lets.count(n.name)) fail_at(n, "%" + n.name + " is already defined");
      Expr e = parse_expr(s);
      expect(Tok::Semi, " after the definition of %" + n.name);
      s.lets[n.name] = Binding{e, &n, false};
      s.let_order.push_back(n.name);
    }
    result_at = &peek();
    Expr result = parse_expr(s);
    expect(Tok::RBrace, " after the result expression");
    for (const std::string& n : s.let_order) {
      const Binding& b = s.lets[n];
      if (!b.used) fail_at(*b.at, "%" + n + " is defined but never used");
    }
    return result;
  }

  // ---- expressions ----
  template <typename F>
  Expr build_at(const Token& t, F&& f) {
    try {
      return f();
    } catch (const Error& e) {
      fail_at(t, e.what());
    } catch (const InternalError& e) {
      fail_at(t, e.what());
    }
  }

  Expr parse_expr(Scope& s) {
    DepthGuard g(*this);
    Expr e = parse_primary(s);
    for (;;) {
      if (peek().kind == Tok::Dot) {
        const Token& dot = next();
        const Token& it = expect(Tok::Number, " (tuple index) after '.'");
        int64_t idx = int_value(it);
        if (idx > INT_MAX) fail_at(it, "tuple index " + std::to_string(idx) + " out of range");
        e = build_at(dot, [&] { return tuple_get_item(e, static_cast<int>(idx)); });
      } else if (peek().kind == Tok::LParen) {
        const Token& lp = peek();
        if (!e->type || e->type->kind != TypeKind::Func) fail_at(lp, "cannot call a value of type " + type_str(e->type));
        next();
        std::vector<Expr> args;
        while (peek().kind != Tok::RParen) {
          args.push_back(parse_expr(s));
          if (!accept(Tok::Comma)) break;
        }
        expect(Tok::RParen, " to close the arguments");
        e = build_at(lp, [&] { return call_function(e, std::move(args)); });
      } else {
        return e;
      }
    }
  }

  Expr parse_primary(Scope& s) {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Local: {
        next();
        if (is_let_name(t)) {
          auto it = s.lets.find(t.name);
          if (it == s.lets.end())
            fail_at(t, "%" + t.name + " is not defined" +
                           (s.outer_has(t.name, true) ? " (a fn body may not use values of the enclosing function)" : ""));
          it->second.used = true;
          return it->second.e;
        }
        auto it = s.vars.find(t.name);
        if (it == s.vars.end())
          fail_at(t, "unknown variable %" + text::name_text(t.name) +
                         (s.outer_has(t.name, false) ? " (a fn body may use only its own parameters)" : ""));
        return it->second;
      }
      case Tok::Global: {
        next();
        auto c = consts_.find(t.name);
        if (c != consts_.end()) {
          c->second.used = true;
          return c->second.e;
        }
        auto f = func_types_.find(t.name);
        if (f == func_types_.end()) fail_at(t, "unknown global @" + text::name_text(t.name));
        return global_var(t.name, f->second);
      }
      case Tok::Ident:
        if (t.text == "fn") return parse_fn(s);
        return parse_op_call(s);
      case Tok::LParen: {
        next();
        if (accept(Tok::RParen)) return tuple({});
        Expr first = parse_expr(s);
        if (!accept(Tok::Comma)) {
          expect(Tok::RParen, " or ',' in parentheses");
          return first;  // grouping
        }
        std::vector<Expr> fields{first};
        while (peek().kind != Tok::RParen) {
          fields.push_back(parse_expr(s));
          if (!accept(Tok::Comma)) break;
        }
        expect(Tok::RParen, " to close the tuple");
        return tuple(std::move(fields));
      }
      default: fail_at(t, "expected an expression, got " + describe(t));
    }
  }

  // The text of an attribute value, rebuilt from tokens so that comments and line breaks inside
  // a list do not reach set_attr_from_text: a number, word or string, or a list of integers.
  std::string attr_value() {
    const Token& t = peek();
    if (t.kind == Tok::Number || t.kind == Tok::Ident || t.kind == Tok::String) {
      next();
      return std::string(t.text);
    }
    if (t.kind != Tok::LBracket) fail_at(t, "expected an attribute value, got " + describe(t));
    next();
    std::string out = "[";
    while (peek().kind != Tok::RBracket) {
      const Token& v = expect(Tok::Number, " in a list");
      if (out.size() > 1) out += ", ";
      out += v.text;
      if (!accept(Tok::Comma)) break;
    }
    expect(Tok::RBracket, " to close the list");
    return out + "]";
  }

  Expr parse_op_call(Scope& s) {
    const Token& name = next();
    const OpDef* def = OpRegistry::global().find(name.text);
    if (!def) fail_at(name, "unknown op '" + std::string(name.text) + "'");
    expect(Tok::LParen, " after op name '" + def->name + "'");
    std::shared_ptr<Attrs> attrs = def->make_attrs();
    std::set<std::string> seen;
    std::vector<Expr> args;
    while (peek().kind != Tok::RParen) {
      if (peek().kind == Tok::Ident && peek(1).kind == Tok::Equal) {
        const Token& an = next();
        next();
        std::string key(an.text);
        if (!seen.insert(key).second) fail_at(an, "attribute '" + key + "' given twice");
        std::string value = attr_value();
        try {
          set_attr_from_text(*attrs, key, value);
        } catch (const Error& e) {
          fail_at(an, def->name + ": " + e.what());
        }
      } else {
        if (!seen.empty()) fail_at(peek(), "argument after attributes in call of " + def->name);
        args.push_back(parse_expr(s));
      }
      if (!accept(Tok::Comma)) break;
    }
    expect(Tok::RParen, " to close the call of " + def->name);
    return build_at(name, [&] { return call(def->code, std::move(args), AttrsPtr(std::move(attrs))); });
  }

  // ---- constants ----
  void constants() {
    expect(Tok::LBrace, " after 'constants'");
    while (!accept(Tok::RBrace)) {
      const Token& n = expect(Tok::Global, " (constant name) or '}'");
      if (consts_.count(n.name)) fail_at(n, "constant @" + text::name_text(n.name) + " defined twice");
      if (func_types_.count(n.name)) fail_at(n, "constant @" + text::name_text(n.name) + " has the name of a function");
      expect(Tok::Equal, " after constant @" + text::name_text(n.name));
      const Token& tt = peek();
      Type type = parse_type();
      if (!is_tensor(type)) fail_at(tt, "constant @" + text::name_text(n.name) + " must have a tensor type, got " + type_str(type));
      Tensor value = constant_data(n, *type);
      expect(Tok::Semi, " after constant @" + text::name_text(n.name));
      consts_[n.name] = ConstEntry{constant(std::move(value)), &n, false};
    }
  }

  Tensor constant_data(const Token& name, const TypeNode& type) {
    const Token& t = peek();
    int64_t numel = shape_numel(type.shape);
    size_t nbytes = static_cast<size_t>(numel) * dtype_size(type.dtype);
    if (t.kind == Tok::Ellipsis)
      fail_at(t, "constant @" + text::name_text(name.name) + " has no data (printed with --no-weights)");
    if (is_word(t, "base64")) {
      next();
      const Token& s = expect(Tok::String, " after base64");
      std::string_view body = s.text.substr(1, s.text.size() - 2);
      if (body.size() != base64_encoded_size(nbytes))
        fail_at(s, "constant @" + text::name_text(name.name) + ": base64 data of " + std::to_string(body.size()) +
                       " characters, expected " + std::to_string(base64_encoded_size(nbytes)) + " for " +
                       std::to_string(nbytes) + " bytes");
      Tensor value(type.dtype, type.shape);
      if (!base64_decode_into(body, value.raw(), nbytes))
        fail_at(s, "constant @" + text::name_text(name.name) + ": malformed base64 data");
      return value;
    }
    if (is_word(t, "blob")) {
      next();
      expect(Tok::LParen, " after blob");
      const Token& o = expect(Tok::Number, " (byte offset) in blob(...)");
      int64_t off = int_value(o);
      expect(Tok::RParen, " after the blob offset");
      if (!blob_) fail_at(t, "constant @" + text::name_text(name.name) + " refers to binary data, but none was given");
      if (off < 0 || static_cast<uint64_t>(off) > blob_->size() || blob_->size() - static_cast<size_t>(off) < nbytes)
        fail_at(o, "constant @" + text::name_text(name.name) + ": " + std::to_string(nbytes) + " bytes at offset " +
                       std::to_string(off) + " lie outside the " + std::to_string(blob_->size()) + "-byte data");
      Tensor value = Tensor::uninitialized(type.dtype, type.shape);
      std::memcpy(value.raw(), blob_->data() + off, nbytes);
      return value;
    }
    if (t.kind != Tok::LBracket)
      fail_at(t, "expected constant data (base64\"...\", blob(OFFSET) or [values]), got " + describe(t));
    next();
    std::vector<const Token*> items;
    while (peek().kind != Tok::RBracket) {
      const Token& v = next();
      if (v.kind != Tok::Number && v.kind != Tok::Ident) fail_at(v, "expected a value, got " + describe(v));
      items.push_back(&v);
      if (static_cast<int64_t>(items.size()) > numel) break;
      if (!accept(Tok::Comma)) break;
    }
    if (static_cast<int64_t>(items.size()) != numel) {
      const Token& at = static_cast<int64_t>(items.size()) > numel ? *items.back() : peek();
      fail_at(at, "constant @" + text::name_text(name.name) + " of shape " + shape_str(type.shape) + " needs " +
                      std::to_string(numel) + " values");
    }
    expect(Tok::RBracket, " to close the values");
    Tensor value(type.dtype, type.shape);
    for (int64_t i = 0; i < numel; ++i) store_value(*items[static_cast<size_t>(i)], value, i);
    return value;
  }

  static void store_value(const Token& t, Tensor& dst, int64_t i) {
    auto* bytes = static_cast<uint8_t*>(dst.raw());
    dispatch_dtype(dst.dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::string s(t.text);
      T v{};
      if constexpr (std::is_same_v<T, bool>) {
        if (s == "true") v = true;
        else if (s == "false") v = false;
        else fail_at(t, "expected true or false, got " + describe(t));
      } else if constexpr (std::is_floating_point_v<T>) {
        bool word = s == "inf" || s == "nan";
        if (t.kind != Tok::Number && !word) fail_at(t, "expected a number, got " + describe(t));
        char* end = nullptr;
        if constexpr (sizeof(T) == 4) v = std::strtof(s.c_str(), &end);
        else v = std::strtod(s.c_str(), &end);
        if (*end) fail_at(t, "malformed number " + describe(t));
      } else {
        int64_t x = int_value(t);
        if (x < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
            x > static_cast<int64_t>(std::numeric_limits<T>::max()))
          fail_at(t, "value " + s + " out of range for " + std::string(dtype_name(sy::dtype_of<T>())));
        v = static_cast<T>(x);
      }
      std::memcpy(bytes + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
    });
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::unordered_map<std::string, Type> func_types_;
  std::map<std::string, ConstEntry> consts_;
  std::optional<std::string_view> blob_;
};

}  // namespace

Result<Module> parse_module(const std::string& text, std::optional<std::string_view> blob) {
  try {
    return catch_errors([&] { return Parser(text, blob).run(); });
  } catch (const std::bad_alloc&) {
    return Status::error("out of memory while parsing the IR text");
  } catch (const std::exception& e) {
    return Status::error(std::string("error while parsing the IR text: ") + e.what());
  }
}

}  // namespace sy::ir
