// Typed operator attributes. Each op's attributes are a plain struct that lists its fields once
// (in `fields(v)`); printing, parsing, equality and hashing are derived from that list.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/dtype.h"

namespace sy::ir {

// Visits the named fields of an attribute struct. One overload per supported field type.
class AttrVisitor {
 public:
  virtual ~AttrVisitor() = default;
  virtual void visit(const char* name, int64_t& v) = 0;
  virtual void visit(const char* name, double& v) = 0;
  virtual void visit(const char* name, bool& v) = 0;
  virtual void visit(const char* name, std::string& v) = 0;
  virtual void visit(const char* name, std::vector<int64_t>& v) = 0;
  virtual void visit(const char* name, DType& v) = 0;
};

struct Attrs {
  virtual ~Attrs() = default;
  virtual void visit_fields(AttrVisitor& v) = 0;
  virtual std::shared_ptr<Attrs> clone() const = 0;
  // Name of the struct, e.g. "Conv2dAttrs" (for messages and checks).
  virtual const char* type_name() const = 0;
};
using AttrsPtr = std::shared_ptr<const Attrs>;

// CRTP base: Derived defines `template <class V> void fields(V& v)` and kName.
template <typename Derived>
struct AttrsBase : Attrs {
  void visit_fields(AttrVisitor& v) override { static_cast<Derived*>(this)->fields(v); }
  std::shared_ptr<Attrs> clone() const override {
    return std::make_shared<Derived>(static_cast<const Derived&>(*this));
  }
  const char* type_name() const override { return Derived::kName; }
};

struct NoAttrs : AttrsBase<NoAttrs> {
  static constexpr const char* kName = "NoAttrs";
  template <class V> void fields(V&) {}
};

// "strides=[1, 1], groups=1" (fields in declaration order; empty string for no fields).
std::string attrs_str(const Attrs& a);
bool attrs_equal(const Attrs& a, const Attrs& b);
size_t attrs_hash(const Attrs& a);

// Sets one field by name from its text form (as printed by attrs_str). Throws sy::Error with a
// message naming the field on an unknown name or a malformed value.
void set_attr_from_text(Attrs& a, const std::string& name, const std::string& text);

}  // namespace sy::ir
