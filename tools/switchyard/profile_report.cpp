// Per-kernel time table of a profiled native run.
#include "profile_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "api/analysis.h"
#include "ir/type.h"
#include "ir/visitor.h"
#include "native/lower_function.h"
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
};

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
  const ir::CallNode* anchor = native::anchor_of(fn);
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
      } else {
        r.ops = fused_ops(*plan.kernels[static_cast<size_t>(c.function)]->as<ir::FunctionNode>(), r.shape,
                          r.flops_per_call);
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
}

}  // namespace sy::cli
