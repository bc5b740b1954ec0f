#include "ir/attrs.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>

#include "support/error.h"

namespace sy::ir {
namespace {

// Shortest text that parses back to the same double.
std::string double_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

class Printer : public AttrVisitor {
 public:
  std::ostringstream os;
  bool first = true;
  void sep(const char* name) { os << (first ? "" : ", ") << name << "="; first = false; }
  void visit(const char* n, int64_t& v) override { sep(n); os << v; }
  void visit(const char* n, double& v) override { sep(n); os << double_str(v); }
  void visit(const char* n, bool& v) override { sep(n); os << (v ? "true" : "false"); }
  void visit(const char* n, std::string& v) override { sep(n); os << quote(v); }
  void visit(const char* n, std::vector<int64_t>& v) override {
    sep(n);
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
  }
  void visit(const char* n, DType& v) override { sep(n); os << dtype_name(v); }
};

// Collects fields as (name, text, hash) to compare two structs generically.
class Collector : public AttrVisitor {
 public:
  std::vector<std::pair<std::string, std::string>> items;
  void add(const char* n, std::string s) { items.emplace_back(n, std::move(s)); }
  void visit(const char* n, int64_t& v) override { add(n, std::to_string(v)); }
  void visit(const char* n, double& v) override {
    // Bitwise, so that -0.0 != 0.0 and NaN == NaN for structural purposes.
    add(n, std::to_string(std::bit_cast<uint64_t>(v)));
  }
  void visit(const char* n, bool& v) override { add(n, v ? "1" : "0"); }
  void visit(const char* n, std::string& v) override { add(n, v); }
  void visit(const char* n, std::vector<int64_t>& v) override {
    std::string s;
    for (int64_t x : v) s += std::to_string(x) + ",";
    add(n, s);
  }
  void visit(const char* n, DType& v) override { add(n, std::string(dtype_name(v))); }
};

[[noreturn]] void bad(const std::string& name, const std::string& text, const char* what) {
  throw Error("attribute '" + name + "': cannot parse '" + text + "' as " + what);
}

class Setter : public AttrVisitor {
 public:
  Setter(const std::string& name, const std::string& text) : name_(name), text_(text) {}
  bool found = false;
  bool match(const char* n) {
    if (name_ != n) return false;
    found = true;
    return true;
  }
  void visit(const char* n, int64_t& v) override {
    if (!match(n)) return;
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(text_.c_str(), &end, 10);
    if (text_.empty() || *end || errno) bad(name_, text_, "an integer");
    v = x;
  }
  void visit(const char* n, double& v) override {
    if (!match(n)) return;
    char* end = nullptr;
    double x = std::strtod(text_.c_str(), &end);
    if (text_.empty() || *end) bad(name_, text_, "a number");
    v = x;
  }
  void visit(const char* n, bool& v) override {
    if (!match(n)) return;
    if (text_ == "true") v = true;
    else if (text_ == "false") v = false;
    else bad(name_, text_, "true/false");
  }
  void visit(const char* n, std::string& v) override {
    if (!match(n)) return;
    if (text_.size() < 2 || text_.front() != '"' || text_.back() != '"') bad(name_, text_, "a string");
    std::string out;
    for (size_t i = 1; i + 1 < text_.size(); ++i) {
      if (text_[i] == '\\' && i + 2 < text_.size()) ++i;
      out += text_[i];
    }
    v = out;
  }
  void visit(const char* n, std::vector<int64_t>& v) override {
    if (!match(n)) return;
    if (text_.size() < 2 || text_.front() != '[' || text_.back() != ']') bad(name_, text_, "a list of integers");
    std::vector<int64_t> out;
    std::string body = text_.substr(1, text_.size() - 2);
    std::stringstream ss(body);
    std::string item;
    while (std::getline(ss, item, ',')) {
      size_t b = item.find_first_not_of(" \t\n");
      size_t e = item.find_last_not_of(" \t\n");
      if (b == std::string::npos) {
        if (body.find_first_not_of(" \t\n") == std::string::npos) break;
        bad(name_, text_, "a list of integers");
      }
      item = item.substr(b, e - b + 1);
      char* end = nullptr;
      errno = 0;
      long long x = std::strtoll(item.c_str(), &end, 10);
      if (*end || errno) bad(name_, text_, "a list of integers");
      out.push_back(x);
    }
    v = out;
  }
  void visit(const char* n, DType& v) override {
    if (!match(n)) return;
    auto t = dtype_from_name(text_);
    if (!t) bad(name_, text_, "a dtype");
    v = *t;
  }

 private:
  std::string name_, text_;
};

}  // namespace

std::string attrs_str(const Attrs& a) {
  Printer p;
  const_cast<Attrs&>(a).visit_fields(p);
  return p.os.str();
}

bool attrs_equal(const Attrs& a, const Attrs& b) {
  if (&a == &b) return true;
  if (std::strcmp(a.type_name(), b.type_name()) != 0) return false;
  Collector ca, cb;
  const_cast<Attrs&>(a).visit_fields(ca);
  const_cast<Attrs&>(b).visit_fields(cb);
  return ca.items == cb.items;
}

size_t attrs_hash(const Attrs& a) {
  Collector c;
  const_cast<Attrs&>(a).visit_fields(c);
  size_t h = std::hash<std::string>()(a.type_name());
  for (auto& [n, v] : c.items) h = h * 1000003u ^ std::hash<std::string>()(n + "=" + v);
  return h;
}

void set_attr_from_text(Attrs& a, const std::string& name, const std::string& text) {
  Setter s(name, text);
  a.visit_fields(s);
  if (!s.found) throw Error(std::string(a.type_name()) + " has no attribute '" + name + "'");
}

}  // namespace sy::ir
