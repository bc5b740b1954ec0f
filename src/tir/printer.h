// Text form of the loop IR, for dumps, golden tests and error messages.
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tir/stmt.h"

namespace sy::tir {

// Gives variables and buffers unique printable names: the first of a name keeps it, later
// distinct nodes with the same name get a numeric suffix. sanitize: C identifiers only.
class NameTable {
 public:
  explicit NameTable(bool sanitize = false) : sanitize_(sanitize) {}
  const std::string& name(const void* node, const std::string& hint);
  // Keeps a name from being given to any node (C keywords, helper functions).
  void reserve(const std::string& n) { taken_.insert(n); }

 private:
  bool sanitize_;
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> taken_;
};

std::string print_expr(const Expr& e);
std::string print_stmt(const Stmt& s);
std::string print_func(const PrimFunc& f);

}  // namespace sy::tir
