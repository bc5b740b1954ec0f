#include "ir/op.h"

#include "support/error.h"

namespace sy::ir {

OpRegistry::OpRegistry() {
#define SY_OP(Code, Name, AttrsT, Kind) defs_.push_back(OpDef{OpCode::Code, Name, OpKind::Kind, 1, 1, nullptr, nullptr});
#include "ir/op_list.def"
#undef SY_OP
}

OpRegistry& OpRegistry::for_registration() {
  static OpRegistry registry;  // function-local: built on first use, not at load
  return registry;
}

const OpRegistry& OpRegistry::global() { return for_registration(); }

void OpRegistry::check_sealed() const {
  SY_CHECK(sealed_) << "the operators' semantics are not registered: a program must call "
                       "sy::ops::register_builtin_ops() (done by linking switchyard_backends) first";
}

const OpDef& OpRegistry::get(OpCode code) const {
  check_sealed();
  auto i = static_cast<size_t>(code);
  SY_CHECK(i < defs_.size());
  return defs_[i];
}

const OpDef* OpRegistry::find(std::string_view name) const {
  check_sealed();
  for (auto& d : defs_)
    if (d.name == name) return &d;
  return nullptr;
}

const std::vector<OpDef>& OpRegistry::all() const {
  check_sealed();
  return defs_;
}

const std::string& OpRegistry::name(OpCode code) const {
  auto i = static_cast<size_t>(code);
  SY_CHECK(i < defs_.size()) << "invalid op code " << i;
  return defs_[i].name;
}

void OpRegistry::set_attrs_factory(OpCode code, std::function<std::shared_ptr<Attrs>()> make) {
  SY_CHECK(!sealed_);
  defs_[static_cast<size_t>(code)].make_attrs = std::move(make);
}

void OpRegistry::set_signature(OpCode code, int min_args, int max_args, TypeRelation rel) {
  SY_CHECK(!sealed_);
  auto& d = defs_[static_cast<size_t>(code)];
  d.min_args = min_args;
  d.max_args = max_args;
  d.relation = std::move(rel);
}

void OpRegistry::seal() {
  for (auto& d : defs_) SY_CHECK(d.relation && d.make_attrs) << "op " << d.name << " has no attributes or type relation";
  sealed_ = true;
}

const OpDef& op_def(OpCode code) { return OpRegistry::global().get(code); }

}  // namespace sy::ir
