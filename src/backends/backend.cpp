// Backend registry and the default region-size rule.
#include "backends/backend.h"

#include "support/error.h"

namespace sy::backends {

namespace {

// Ops whose work dominates the copies at a region's boundary.
bool is_heavy(ir::OpCode op) {
  using ir::OpCode;
  switch (op) {
    case OpCode::Conv2d: case OpCode::ConvTranspose2d: case OpCode::MatMul: case OpCode::Dense:
    case OpCode::BatchNorm: case OpCode::LayerNorm: case OpCode::InstanceNorm: case OpCode::LRN:
    case OpCode::Softmax: case OpCode::LogSoftmax: case OpCode::MaxPool2d: case OpCode::AvgPool2d:
    case OpCode::LpPool2d: case OpCode::GlobalAvgPool2d: case OpCode::GlobalMaxPool2d:
      return true;
    default:
      return false;
  }
}

}  // namespace

Verdict Backend::worth_offloading(const RegionSummary& region) const {
  for (const ir::Expr& n : region.nodes) {
    auto* c = n->as<ir::CallNode>();
    if (!c) continue;
    if (!c->is_op()) return Verdict::yes();  // a composite
    if (is_heavy(c->op)) return Verdict::yes();
  }
  if (region.op_count >= 2) return Verdict::yes();
  return Verdict::no("a lone elementwise op: the copies in and out would cost more than running it natively");
}

BackendRegistry& BackendRegistry::global() {
  static BackendRegistry registry;  // function-local: built on first use, not at load
  return registry;
}

void BackendRegistry::add(std::unique_ptr<Backend> b) {
  SY_CHECK(b) << "null backend";
  std::string n = b->name();
  SY_CHECK(!backends_.count(n)) << "backend '" << n << "' registered twice";
  backends_[n] = std::move(b);
}

const Backend* BackendRegistry::find(const std::string& name) const {
  auto it = backends_.find(name);
  return it == backends_.end() ? nullptr : it->second.get();
}

const Backend& BackendRegistry::get(const std::string& name) const {
  if (const Backend* b = find(name)) return *b;
  std::string avail;
  for (auto& [n, _] : backends_) avail += (avail.empty() ? "" : ", ") + n;
  throw Error("unknown backend '" + name + "' (built into this binary: " + (avail.empty() ? "none" : avail) + ")");
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> out;
  for (auto& [n, _] : backends_) out.push_back(n);
  return out;
}

std::vector<const Backend*> BackendRegistry::all() const {
  std::vector<const Backend*> out;
  for (auto& [_, b] : backends_) out.push_back(b.get());
  return out;
}

}  // namespace sy::backends
