// The op implementation registry and the default injective schedule.
#include "topi/topi.h"

#include "support/error.h"

namespace sy::topi {

void Registry::add(ops::OpCode op, OpImpl impl) {
  SY_CHECK(!impls.count(op)) << "topi: " << ops::op_name(op) << " registered twice";
  impls[op] = std::move(impl);
}

void Registry::add_extern(const std::string& symbol, void* fn) { externs[symbol] = fn; }

namespace {
const Registry& registry() {
  static const Registry* r = [] {
    auto* x = new Registry;
    register_elementwise(*x);
    register_transform(*x);
    register_reduce(*x);
    register_nn(*x);
    return x;
  }();
  return *r;
}
}  // namespace

const OpImpl* find(ops::OpCode op) {
  auto it = registry().impls.find(op);
  return it == registry().impls.end() ? nullptr : &it->second;
}

const ExternTable& extern_table() { return registry().externs; }

// One vector: the conv and dense micro-kernels hold a block of outputs per register, and a
// register tile spans several blocks.
int weight_block(const target::Target& t) { return t.vector_lanes(); }

}  // namespace sy::topi
