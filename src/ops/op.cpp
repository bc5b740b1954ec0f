#include "ops/op.h"

#include <mutex>

#include "ops/attrs.h"

namespace sy::ops {

void register_builtin_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpRegistry& r = OpRegistry::for_registration();
#define SY_OP(Code, Name, AttrsT, Kind) \
  r.set_attrs_factory(OpCode::Code, []() -> std::shared_ptr<ir::Attrs> { return std::make_shared<AttrsT>(); });
#include "ir/op_list.def"
#undef SY_OP
    register_elementwise_ops(r);
    register_nn_ops(r);
    register_transform_ops(r);
    register_reduce_ops(r);
    r.seal();
  });
}

}  // namespace sy::ops
