// Operator identities and the operator table. Every op is declared once in op_list.def; the IR
// knows each op's code, name and fusion kind from that list. What an op means (its attributes'
// defaults, its arity and type relation) is the ops layer's, which fills the table at start-up
// (sy::ops::register_builtin_ops); the IR reads it through this table and never includes ops.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attrs.h"
#include "ir/type.h"

namespace sy::ir {

enum class OpCode : uint16_t {
#define SY_OP(Code, Name, Attrs, Kind) Code,
#include "ir/op_list.def"
#undef SY_OP
  kCount
};

// How an op combines with neighbours in fusion (as TVM's OpPatternKind).
enum class OpKind { Elemwise, Broadcast, Injective, Reduce, OutEWiseFusable, Opaque };

// Computes the result type from argument types and attributes. Throws sy::Error with a message
// naming the op and the problem ("nn.conv2d: weight has 64 input channels, data has 3").
using TypeRelation = std::function<Type(const std::vector<Type>& args, const Attrs& attrs)>;

struct OpDef {
  OpCode code;
  std::string name;
  OpKind kind;
  int min_args = 1;
  int max_args = 1;  // -1: variadic
  std::function<std::shared_ptr<Attrs>()> make_attrs;  // default-valued attrs
  TypeRelation relation;
};

class OpRegistry {
 public:
  // The table of built-in ops. Reading an op's semantics (get, find) before the ops layer has
  // registered them is a programming error, reported as one, not a null call.
  static const OpRegistry& global();
  // For the ops layer's registration only.
  static OpRegistry& for_registration();

  const OpDef& get(OpCode code) const;
  const OpDef* find(std::string_view name) const;  // nullptr if unknown
  const std::vector<OpDef>& all() const;
  // The name alone needs no registration (printing, messages).
  const std::string& name(OpCode code) const;

  void set_attrs_factory(OpCode code, std::function<std::shared_ptr<Attrs>()> make);
  void set_signature(OpCode code, int min_args, int max_args, TypeRelation rel);
  // Checks that every op got its attributes and relation; from then on get() is valid.
  void seal();
  bool sealed() const { return sealed_; }

 private:
  OpRegistry();
  void check_sealed() const;
  std::vector<OpDef> defs_;
  bool sealed_ = false;
};

const OpDef& op_def(OpCode code);
inline const std::string& op_name(OpCode code) { return OpRegistry::global().name(code); }

}  // namespace sy::ir
