#include "ops/op.h"

#include "ops/attrs.h"
#include "support/error.h"

namespace sy::ops {

OpRegistry::OpRegistry() {
#define SY_OP(Code, Name, AttrsT, Kind)                                                      \
  defs_.push_back(OpDef{OpCode::Code, Name, OpKind::Kind, 1, 1,                               \
                        []() -> std::shared_ptr<ir::Attrs> { return std::make_shared<AttrsT>(); }, \
                        nullptr});
#include "ops/op_list.def"
#undef SY_OP
  register_elementwise_ops(*this);
  register_nn_ops(*this);
  register_transform_ops(*this);
  register_reduce_ops(*this);
  for (auto& d : defs_) SY_CHECK(d.relation) << "op " << d.name << " has no type relation";
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry;  // function-local: built on first use, not at load
  return registry;
}

const OpDef& OpRegistry::get(OpCode code) const {
  auto i = static_cast<size_t>(code);
  SY_CHECK(i < defs_.size());
  return defs_[i];
}

const OpDef* OpRegistry::find(std::string_view name) const {
  for (auto& d : defs_)
    if (d.name == name) return &d;
  return nullptr;
}

void OpRegistry::set_signature(OpCode code, int min_args, int max_args, TypeRelation rel) {
  auto& d = defs_[static_cast<size_t>(code)];
  d.min_args = min_args;
  d.max_args = max_args;
  d.relation = std::move(rel);
}

const OpDef& op_def(OpCode code) { return OpRegistry::global().get(code); }

}  // namespace sy::ops
