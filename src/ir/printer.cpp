// Printer of the IR text form (see printer.h for the layout).
#include "ir/printer.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <type_traits>
#include <vector>

#include "ir/text_lexer.h"
#include "ir/visitor.h"
#include "support/base64.h"

namespace sy::ir {
namespace {

static_assert(std::endian::native == std::endian::little, "constant data is printed as little-endian bytes");

constexpr int64_t kMaxLiteralElements = 16;

// sigil + name. (Not `"%" + str`: GCC 12 warns falsely (-Wrestrict) on literal + std::string&&.)
std::string sigil(char c, std::string_view name) {
  std::string out(1, c);
  out += name;
  return out;
}

bool is_atom(const Expr& e) {
  return e->kind == ExprKind::Var || e->kind == ExprKind::Constant || e->kind == ExprKind::GlobalVar;
}

// Shortest "%g" text that reads back (strtof/strtod) to the same bits; empty if none does
// (NaN payloads other than the default).
template <typename F>
std::string float_literal(F v) {
  char buf[64];
  constexpr int kMaxPrec = sizeof(F) == 4 ? 9 : 17;
  for (int prec = 1; prec <= kMaxPrec; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(v));
    F back;
    if constexpr (sizeof(F) == 4) back = std::strtof(buf, nullptr);
    else back = std::strtod(buf, nullptr);
    if (std::memcmp(&back, &v, sizeof v) == 0) {
      std::string s = buf;
      if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
      return s;
    }
  }
  return "";
}

// Values of a small tensor as "[1, 2, 3]"; empty if some value would not read back exactly.
std::string literal_text(const Tensor& t) {
  std::string out = "[";
  bool ok = true;
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto* bytes = static_cast<const uint8_t*>(t.raw());
    for (int64_t i = 0; i < t.numel() && ok; ++i) {
      if (i) out += ", ";
      if constexpr (std::is_same_v<T, bool>) {
        uint8_t raw = bytes[i];  // read as a byte: a bool holding another value is not a literal
        if (raw > 1) ok = false;
        out += raw ? "true" : "false";
      } else {
        T v;
        std::memcpy(&v, bytes + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
        if constexpr (std::is_floating_point_v<T>) {
          std::string s = float_literal(v);
          if (s.empty()) ok = false;
          out += s;
        } else {
          out += std::to_string(static_cast<int64_t>(v));
        }
      }
    }
  });
  return ok ? out + "]" : "";
}

class TextPrinter {
 public:
  TextPrinter(const PrintOptions& opts, const Module* m) : opts_(opts) {
    if (m)
      for (auto& [name, f] : m->functions) taken_globals_.insert(name);
  }

  std::unordered_map<const ExprNode*, std::string> names;  // for printed_names()

  std::string module(const Module& m) {
    // One string appended to in place: texts of large models are hundreds of MB, and every extra
    // copy (ostringstream, temporaries) costs as much as the printing itself.
    std::string os;
    os += "#[version = \"0.1\"]\n";
    if (!m.output_names.empty()) {
      os += "#[outputs = [";
      for (size_t i = 0; i < m.output_names.size(); ++i) {
        if (i) os += ", ";
        os += text::quote(m.output_names[i]);
      }
      os += "]]\n";
    }
    for (auto& [name, fe] : m.functions) {
      auto* f = fe ? fe->as<FunctionNode>() : nullptr;
      SY_CHECK(f) << "module function @" << name << " is not a function";
      std::string owner = sigil('@', text::name_text(name));
      names.emplace(f, owner);
      counter_ = 0;
      Scope s;
      s.owner = owner;
      os += "def ";
      os += owner;
      os += header(*f, s);
      os += " {\n";
      body(os, f->body, 1, s, "the result of " + owner);
      os += "}\n";
    }
    constants(os);
    return os;
  }

  std::string expr(const Expr& e) {
    SY_CHECK(e) << "print_expr of a null expression";
    std::string os;
    Scope s;
    s.owner = "the expression";
    if (auto* f = e->as<FunctionNode>()) {
      os += "fn ";
      os += header(*f, s);
      os += " {\n";
      body(os, f->body, 1, s, "the result");
      os += "}\n";
    } else {
      body(os, e, 0, s, "the result");
    }
    constants(os);
    return os;
  }

 private:
  struct Scope {
    std::unordered_map<const ExprNode*, std::string> local;  // params and let-bound nodes
    std::set<std::string> param_names;
    std::string owner;  // "@main", for names
  };

  void name_node(const ExprNode* n, const std::string& local, const Scope& s) {
    names.emplace(n, local + " in " + s.owner);
  }

  // "(%a: T, %b: T) -> T attrs {k="v"}"; binds the params in s.
  std::string header(const FunctionNode& f, Scope& s) {
    std::string out = "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Expr& p = f.params[i];
      if (i) out += ", ";
      auto* v = p ? p->as<VarNode>() : nullptr;
      std::string name = v ? v->name : "?";
      auto it = s.local.find(p.get());
      if (it == s.local.end()) {
        // Distinct vars with one name get distinct printed names (names are not semantic).
        std::string base = name;
        for (int k = 1; s.param_names.count(name); ++k) name = base + "_" + std::to_string(k);
        s.param_names.insert(name);
        std::string local = sigil('%', text::name_text(name));
        s.local[p.get()] = local;
        name_node(p.get(), local, s);
        out += local;
      } else {
        out += it->second;  // the same var twice: invalid IR, printed as is
      }
      out += ": " + type_str(p ? p->type : nullptr);
    }
    out += ") -> " + type_str(f.ret_type());
    if (!f.attrs.empty()) {
      out += " attrs {";
      bool first = true;
      for (auto& [k, v] : f.attrs) {
        out += (first ? "" : ", ") + text::name_text(k) + "=" + text::quote(v);
        first = false;
      }
      out += "}";
    }
    return out;
  }

  void body(std::string& os, const Expr& root, int indent, Scope& s, const std::string& root_name) {
    std::string pad(static_cast<size_t>(indent) * 2, ' ');
    std::vector<Expr> order = post_order(root);
    for (const Expr& e : order) {
      if (e == root || is_atom(e) || s.local.count(e.get())) continue;
      std::string local = sigil('%', std::to_string(counter_++));
      s.local[e.get()] = local;
      name_node(e.get(), local, s);
      os += pad;
      os += local;
      os += " = ";
      os += rhs(e, s, indent);
      os += ";\n";
    }
    names.emplace(root.get(), root_name);
    os += pad;
    os += is_atom(root) ? ref(root, s) : rhs(root, s, indent);
    os += "\n";
  }

  std::string ref(const Expr& e, const Scope& s) {
    if (!e) return "<null>";
    auto it = s.local.find(e.get());
    if (it != s.local.end()) return it->second;
    switch (e->kind) {
      case ExprKind::Var: return sigil('%', text::name_text(e->as<VarNode>()->name));  // free: invalid IR
      case ExprKind::GlobalVar: return sigil('@', text::name_text(e->as<GlobalVarNode>()->name));
      case ExprKind::Constant: return const_name(e.get());
      default: SY_CHECK(false) << "node printed before its inputs"; return "";
    }
  }

  std::string args_text(const std::vector<Expr>& args, const Scope& s) {
    std::string out;
    for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + ref(args[i], s);
    return out;
  }

  std::string rhs(const Expr& e, Scope& s, int indent) {
    switch (e->kind) {
      case ExprKind::Call: {
        auto* c = e->as<CallNode>();
        if (!c->is_op()) return ref(c->callee, s) + "(" + args_text(c->args, s) + ")";
        std::string out = op_name(c->op) + "(" + args_text(c->args, s);
        std::string a = c->attrs ? attrs_str(*c->attrs) : "";
        if (!a.empty()) out += (c->args.empty() ? "" : ", ") + a;
        return out + ")";
      }
      case ExprKind::Tuple: {
        auto* t = e->as<TupleNode>();
        return "(" + args_text(t->fields, s) + (t->fields.size() == 1 ? ",)" : ")");
      }
      case ExprKind::TupleGetItem: {
        auto* t = e->as<TupleGetItemNode>();
        return ref(t->tuple, s) + "." + std::to_string(t->index);
      }
      case ExprKind::Function: {
        auto* f = e->as<FunctionNode>();
        Scope inner;
        inner.owner = s.owner;
        std::string os = "fn ";
        os += header(*f, inner);
        os += " {\n";
        auto self = s.local.find(e.get());
        std::string label = self == s.local.end() ? "the function" : self->second;
        body(os, f->body, indent + 1, inner, "the result of " + label + " in " + s.owner);
        os += std::string(static_cast<size_t>(indent) * 2, ' ');
        os += "}";
        return os;
      }
      default: return ref(e, s);
    }
  }

  std::string const_name(const ExprNode* c) {
    auto it = const_names_.find(c);
    if (it != const_names_.end()) return it->second;
    std::string name;
    do name = sigil('c', std::to_string(next_const_++));
    while (taken_globals_.count(name));
    name = sigil('@', name);
    const_names_[c] = name;
    consts_.push_back(c->as<ConstantNode>());
    names.emplace(c, name);
    return name;
  }

  void constants(std::string& os) {
    if (consts_.empty()) return;
    // Reserved once: growing a string of hundreds of MB by doubling costs more (page faults and
    // copies) than encoding the data.
    size_t need = os.size() + 16;
    for (const ConstantNode* c : consts_)
      need += 96 + (opts_.constant_data && !opts_.blob ? base64_encoded_size(c->value.nbytes()) : 0);
    os.reserve(need);
    os += "constants {\n";
    for (const ConstantNode* c : consts_) {
      const Tensor& t = c->value;
      os += "  ";
      os += const_names_[c];
      os += " = ";
      os += type_str(c->type);
      os += " ";
      std::string lit = t.numel() <= kMaxLiteralElements ? literal_text(t) : "";
      if (!lit.empty()) {
        os += lit;
      } else if (opts_.constant_data && opts_.blob) {
        BlobLayout& blob = *opts_.blob;
        size_t offset = (blob.size + 63) / 64 * 64;
        os += "blob(" + std::to_string(offset) + ")";
        blob.entries.push_back({offset, t});
        blob.size = offset + t.nbytes();
      } else if (opts_.constant_data) {
        os += "base64\"";
        size_t at = os.size();
        os.resize(at + base64_encoded_size(t.nbytes()));
        base64_encode_to(t.raw(), t.nbytes(), os.data() + at);
        os += "\"";
      } else {
        os += "...";
      }
      os += ";\n";
    }
    os += "}\n";
  }

  PrintOptions opts_;
  int counter_ = 0;
  int next_const_ = 0;
  std::set<std::string> taken_globals_;
  std::unordered_map<const ExprNode*, std::string> const_names_;
  std::vector<const ConstantNode*> consts_;
};

}  // namespace

std::string BlobLayout::bytes() const {
  std::string out(size, '\0');
  for (const Entry& e : entries)
    if (e.value.nbytes()) std::memcpy(out.data() + e.offset, e.value.raw(), e.value.nbytes());
  return out;
}

std::string print_module(const Module& m, const PrintOptions& opts) { return TextPrinter(opts, &m).module(m); }

std::string print_expr(const Expr& e, const PrintOptions& opts) { return TextPrinter(opts, nullptr).expr(e); }

std::unordered_map<const ExprNode*, std::string> printed_names(const Module& m) {
  TextPrinter p(PrintOptions{false}, &m);
  p.module(m);
  return std::move(p.names);
}

}  // namespace sy::ir
