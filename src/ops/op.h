// Operator handles and the operator registry. Every op is declared once in op_list.def.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attrs.h"
#include "ir/type.h"

namespace sy::ops {

enum class OpCode : uint16_t {
#define SY_OP(Code, Name, Attrs, Kind) Code,
#include "ops/op_list.def"
#undef SY_OP
  kCount
};

// How an op combines with neighbours in fusion (as TVM's OpPatternKind).
enum class OpKind { Elemwise, Broadcast, Injective, Reduce, OutEWiseFusable, Opaque };

// Computes the result type from argument types and attributes. Throws sy::Error with a message
// naming the op and the problem ("nn.conv2d: weight has 64 input channels, data has 3").
using TypeRelation = std::function<ir::Type(const std::vector<ir::Type>& args, const ir::Attrs& attrs)>;

struct OpDef {
  OpCode code;
  std::string name;
  OpKind kind;
  int min_args = 1;
  int max_args = 1;  // -1: variadic
  std::function<std::shared_ptr<ir::Attrs>()> make_attrs;  // default-valued attrs
  TypeRelation relation;
};

class OpRegistry {
 public:
  // The registry of built-in ops, populated on first use by register_builtin_ops().
  static const OpRegistry& global();
  const OpDef& get(OpCode code) const;
  const OpDef* find(std::string_view name) const;  // nullptr if unknown
  const std::vector<OpDef>& all() const { return defs_; }

  // Used by the family registration functions.
  void set_signature(OpCode code, int min_args, int max_args, TypeRelation rel);

 private:
  OpRegistry();
  std::vector<OpDef> defs_;
};

const OpDef& op_def(OpCode code);
inline const std::string& op_name(OpCode code) { return op_def(code).name; }

// Family registration (one per source file under src/ops/), called by register_builtin_ops.
void register_elementwise_ops(OpRegistry& r);
void register_nn_ops(OpRegistry& r);
void register_transform_ops(OpRegistry& r);
void register_reduce_ops(OpRegistry& r);

}  // namespace sy::ops
