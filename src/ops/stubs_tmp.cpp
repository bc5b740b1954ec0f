// TEMPORARY: replaced by the family files. Registers placeholder relations so the core links.
#include "ops/op.h"
#include "support/error.h"
namespace sy::ops {
static ir::Type unimplemented(const std::vector<ir::Type>&, const ir::Attrs&) { throw Error("relation not implemented"); }
void register_elementwise_ops(OpRegistry& r) { for (auto& d : r.all()) if (!d.relation) r.set_signature(d.code, 0, -1, unimplemented); }
void register_nn_ops(OpRegistry&) {}
void register_transform_ops(OpRegistry&) {}
void register_reduce_ops(OpRegistry&) {}
}
