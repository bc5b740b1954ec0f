// Per-kernel time table of a profiled native run.
#include "profile_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "api/analysis.h"
#include "ir/type.h"
#include "ir/visitor.h"
#include "strategy/strategy.h"
#include "ops/attrs.h"
#include "ops/op.h"

namespace sy::cli {

namespace {

struct Row {
  std::string kernel;
  std::string ops;    // the fused ops, anchor first
  std::string shape;  // the anchor's argument and result shapes
  double seconds = 0;
  int launches = 0;
  int64_t flops = 0;           // per run
  int64_t flops_per_call = 0;  // of the fused function (0 for external calls)
  std::string kind;            // kernel class (kernel_class)
};

// The class of a kernel by its anchor, as schedules differ: the conv paths (stem, pointwise,
// depthwise, other grouped, spatial), GEMMs (dense, matmul, batch matmul) and the rest.
std::string kernel_class(const ir::CallNode* anchor) {
  if (!anchor) return "other";
  if (anchor->op == ops::OpCode::Conv2d) {
    const auto& a = anchor->attrs_as<ops::Conv2dAttrs>();
    const Shape& x = ir::as_tensor(anchor->args[0]->type).shape;
    const Shape& w = ir::as_tensor(anchor->args[1]->type).shape;
    if (a.groups > 1) return a.groups == x[1] ? "conv depthwise" : "conv grouped";
    if (x[1] <= 4) return "conv stem (C<=4)";
    return w.size() >= 4 && w[2] == 1 && w[3] == 1 ? "conv 1x1" : "conv KxK";
  }
  if (anchor->op == ops::OpCode::Dense) return "dense";
  if (anchor->op == ops::OpCode::MatMul)
    return ir::as_tensor(anchor->args[1]->type).shape.size() > 2 ? "batch matmul" : "matmul";
  return ops::op_def(anchor->op).kind == ops::OpKind::Reduce ? "reduce" : "other (" + ops::op_name(anchor->op) + ")";
}

std::string dims(const ir::Type& t) {
  if (t->kind != ir::TypeKind::Tensor) return "?";
  const Shape& shape = t->shape;
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

// "(1,32,28,28) x (192,32,1,1) -> (1,192,28,28)": the anchor's argument and result shapes, which
// tell a pointwise conv from a depthwise one.
std::string signature(const ir::CallNode& c) {
  std::string s;
  for (size_t i = 0; i < c.args.size() && i < 2; ++i) s += (i ? " x " : "") + dims(c.args[i]->type);
  return s + " -> " + dims(c.type);
}

// "nn.conv2d+add+clip": the anchor, then the other ops in order (repeats once).
std::string fused_ops(const ir::FunctionNode& fn, std::string& shape, int64_t& flops) {
  const ir::CallNode* anchor = strategy::anchor_of(fn);
  std::string s = anchor ? ops::op_name(anchor->op) : "";
  if (anchor) shape = signature(*anchor);
  flops = 0;
  std::vector<std::string> seen;
  for (const ir::Expr& e : ir::post_order(fn.body)) {
    auto* c = e->as<ir::CallNode>();
    if (!c || !c->is_op()) continue;
    flops += api::op_flops(*c);
    if (c == anchor) continue;
    std::string name = ops::op_name(c->op);
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    s += (s.empty() ? "" : "+") + name;
  }
  return s;
}

}  // namespace

void print_profile(std::ostream& os, const native::Plan& plan, const native::CallTimes& times, int top) {
  if (times.runs == 0 || times.seconds.size() != plan.calls.size()) return;
  std::map<std::string, Row> rows;
  double total = 0;
  for (size_t ci = 0; ci < plan.calls.size(); ++ci) {
    const native::Call& c = plan.calls[ci];
    Row& r = rows[c.kernel];
    if (r.kernel.empty()) {  // first call of this kernel: describe it once
      r.kernel = c.external ? "@" + c.kernel : c.kernel;
      if (c.external) {
        r.ops = "external function";
        r.kind = "external";
      } else {
        const auto& fn = *plan.kernels[static_cast<size_t>(c.function)]->as<ir::FunctionNode>();
        r.ops = fused_ops(fn, r.shape, r.flops_per_call);
        r.kind = kernel_class(strategy::anchor_of(fn));
        if (c.fallback) r.ops += " (reference fallback)";
      }
    }
    r.flops += r.flops_per_call;
    r.seconds += times.seconds[ci] / times.runs;
    ++r.launches;
    total += times.seconds[ci] / times.runs;
  }
  std::vector<Row> sorted;
  for (auto& [_, r] : rows) sorted.push_back(r);
  std::sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) { return a.seconds > b.seconds; });
  char line[512];
  std::snprintf(line, sizeof line, "profile: %zu calls, %.3f ms per run (mean of %d runs), by kernel:\n",
                plan.calls.size(), total * 1e3, times.runs);
  os << line;
  std::snprintf(line, sizeof line, "  %9s %6s %6s %8s  %-16s %s\n", "ms", "share", "calls", "GFLOP/s", "kernel",
                "ops  (anchor shapes)");
  os << line;
  size_t shown = top > 0 ? std::min<size_t>(sorted.size(), static_cast<size_t>(top)) : sorted.size();
  for (size_t i = 0; i < shown; ++i) {
    const Row& r = sorted[i];
    std::string gf = r.flops > 0 && r.seconds > 0 ? std::to_string(static_cast<int>(r.flops / r.seconds / 1e9)) : "-";
    std::snprintf(line, sizeof line, "  %9.3f %5.1f%% %6d %8s  %-16s %s%s\n", r.seconds * 1e3,
                  total > 0 ? 100.0 * r.seconds / total : 0.0, r.launches, gf.c_str(), r.kernel.c_str(), r.ops.c_str(),
                  r.shape.empty() ? "" : ("  " + r.shape).c_str());
    os << line;
  }
  if (shown < sorted.size()) {
    double rest = 0;
    int launches = 0;
    for (size_t i = shown; i < sorted.size(); ++i) rest += sorted[i].seconds, launches += sorted[i].launches;
    std::snprintf(line, sizeof line, "  %9.3f %5.1f%% %6d %8s  (%zu more kernels)\n", rest * 1e3,
                  total > 0 ? 100.0 * rest / total : 0.0, launches, "", sorted.size() - shown);
    os << line;
  }
  // By class: where the FLOPs are and how fast each schedule family runs them.
  std::map<std::string, Row> classes;
  for (const Row& r : sorted) {
    Row& k = classes[r.kind];
    k.seconds += r.seconds;
    k.flops += r.flops;
    k.launches += r.launches;
  }
  std::vector<std::pair<std::string, Row>> by_time(classes.begin(), classes.end());
  std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  os << "by kernel class:\n";
  std::snprintf(line, sizeof line, "  %9s %6s %6s %8s %7s  %s\n", "ms", "share", "calls", "GFLOP/s", "GFLOP", "class");
  os << line;
  for (const auto& [name, k] : by_time) {
    std::string gf = k.flops > 0 && k.seconds > 0 ? std::to_string(static_cast<int>(k.flops / k.seconds / 1e9)) : "-";
    std::snprintf(line, sizeof line, "  %9.3f %5.1f%% %6d %8s %7.3f  %s\n", k.seconds * 1e3,
                  total > 0 ? 100.0 * k.seconds / total : 0.0, k.launches, gf.c_str(), static_cast<double>(k.flops) / 1e9,
                  name.c_str());
    os << line;
  }
}

}  // namespace sy::cli
