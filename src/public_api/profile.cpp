// Where a native run spends its time (profile(), profile_table()): per call, per kernel with its
// fused ops and anchor shapes, and by kernel class.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "access.h"
#include "api/analysis.h"
#include "ir/type.h"
#include "ir/visitor.h"
#include "native/executable.h"
#include "ops/attrs.h"
#include "ops/flops.h"
#include "ops/op.h"
#include "strategy/strategy.h"
#include "switchyard/report.h"

namespace sy::public_api {
namespace {

// The op a kernel is classed and described by: the strategy's anchor, or for a region a target
// hook lowered (its ops are inside composites), its first GEMM-like op there; also when the
// anchor does no arithmetic (a hook's piece opens with the layout change of its input: classed
// by that transpose, every oneDNN convolution of ResNet-50 was "other (transpose)").
const ir::CallNode* profile_anchor(const ir::FunctionNode& fn) {
  const ir::CallNode* a = strategy::anchor_of(fn);
  if (a && ops::op_flops(*a) > 0) return a;
  for (const ir::Expr& e : ir::post_order(fn.body, /*into_functions=*/true))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && ops::op_flops(*c) > 0 &&
                                          ops::op_def(c->op).kind == ops::OpKind::OutEWiseFusable)
      return c;
  return a;
}

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
  const ir::CallNode* anchor = profile_anchor(fn);
  std::string s = anchor ? ops::op_name(anchor->op) : "";
  if (anchor) shape = signature(*anchor);
  flops = 0;
  std::vector<std::string> seen;
  for (const ir::Expr& e : ir::post_order(fn.body, /*into_functions=*/true)) {
    auto* c = e->as<ir::CallNode>();
    if (!c || !c->is_op()) continue;
    flops += ops::op_flops(*c);
    if (c == anchor) continue;
    std::string name = ops::op_name(c->op);
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    s += (s.empty() ? "" : "+") + name;
  }
  return s;
}

}  // namespace
}  // namespace sy::public_api

namespace switchyard {

Profile profile(const Compiled& compiled, const std::vector<Tensor>& inputs, int runs, int threads,
                const std::function<void(int)>& on_run) {
  return guarded([&] {
    const Compiled::Impl& impl = Access::impl(compiled);
    if (!impl.model.native) throw Error("profile: the model has no natively compiled kernels (compile it for a cpu target)");
    std::vector<sy::Tensor> values = internal_tensors(inputs);
    sy::native::CallTimes times;
    for (int i = 0; i < runs; ++i) {
      if (on_run) on_run(i + 1);
      impl.model.run(values, threads, &times);
    }
    const sy::native::Plan& plan = impl.model.native->plan();
    Profile p;
    p.runs = times.runs;
    if (times.runs == 0 || times.seconds.size() != plan.calls.size()) return p;
    std::map<std::string, ProfileKernel> rows;
    std::map<std::string, int64_t> flops_per_call;
    for (size_t ci = 0; ci < plan.calls.size(); ++ci) {
      const sy::native::Call& c = plan.calls[ci];
      if (c.elided) continue;  // a concatenation planned in place: never runs
      p.calls.push_back({c.kernel, c.external, times.seconds[ci] * 1e3 / times.runs});
      ProfileKernel& r = rows[c.kernel];
      int64_t& per_call = flops_per_call[c.kernel];
      if (r.kernel.empty()) {  // first call of this kernel: describe it once
        r.kernel = c.external ? "@" + c.kernel : c.kernel;
        if (c.external) {
          r.ops = "external function";
          r.kind = "external";
        } else {
          const auto& fn = *plan.kernels[static_cast<size_t>(c.function)]->as<sy::ir::FunctionNode>();
          r.ops = sy::public_api::fused_ops(fn, r.shape, per_call);
          r.kind = sy::public_api::kernel_class(sy::public_api::profile_anchor(fn));
          if (c.fallback) r.ops += " (reference fallback)";
        }
      }
      r.flops += per_call;
      r.seconds += times.seconds[ci] / times.runs;
      ++r.launches;
      p.total_seconds += times.seconds[ci] / times.runs;
    }
    for (auto& [_, r] : rows) p.kernels.push_back(r);
    std::sort(p.kernels.begin(), p.kernels.end(),
              [](const ProfileKernel& a, const ProfileKernel& b) { return a.seconds > b.seconds; });
    return p;
  });
}

std::string profile_table(const Profile& p, int top) {
  if (p.runs == 0 || p.calls.empty()) return "";
  const std::vector<ProfileKernel>& sorted = p.kernels;
  const double total = p.total_seconds;
  std::string os;
  char line[512];
  std::snprintf(line, sizeof line, "profile: %zu calls, %.3f ms per run (mean of %d runs), by kernel:\n",
                p.calls.size(), total * 1e3, p.runs);
  os += line;
  std::snprintf(line, sizeof line, "  %9s %6s %6s %8s  %-16s %s\n", "ms", "share", "calls", "GFLOP/s", "kernel",
                "ops  (anchor shapes)");
  os += line;
  size_t shown = top > 0 ? std::min<size_t>(sorted.size(), static_cast<size_t>(top)) : sorted.size();
  for (size_t i = 0; i < shown; ++i) {
    const ProfileKernel& r = sorted[i];
    std::string gf = r.flops > 0 && r.seconds > 0 ? std::to_string(static_cast<int>(r.flops / r.seconds / 1e9)) : "-";
    std::snprintf(line, sizeof line, "  %9.3f %5.1f%% %6d %8s  %-16s %s%s\n", r.seconds * 1e3,
                  total > 0 ? 100.0 * r.seconds / total : 0.0, r.launches, gf.c_str(), r.kernel.c_str(), r.ops.c_str(),
                  r.shape.empty() ? "" : ("  " + r.shape).c_str());
    os += line;
  }
  if (shown < sorted.size()) {
    double rest = 0;
    int launches = 0;
    for (size_t i = shown; i < sorted.size(); ++i) rest += sorted[i].seconds, launches += sorted[i].launches;
    std::snprintf(line, sizeof line, "  %9.3f %5.1f%% %6d %8s  (%zu more kernels)\n", rest * 1e3,
                  total > 0 ? 100.0 * rest / total : 0.0, launches, "", sorted.size() - shown);
    os += line;
  }
  // By class: where the FLOPs are and how fast each schedule family runs them.
  std::map<std::string, ProfileKernel> classes;
  for (const ProfileKernel& r : sorted) {
    ProfileKernel& k = classes[r.kind];
    k.seconds += r.seconds;
    k.flops += r.flops;
    k.launches += r.launches;
  }
  std::vector<std::pair<std::string, ProfileKernel>> by_time(classes.begin(), classes.end());
  std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  os += "by kernel class:\n";
  std::snprintf(line, sizeof line, "  %9s %6s %6s %8s %7s  %s\n", "ms", "share", "calls", "GFLOP/s", "GFLOP", "class");
  os += line;
  for (const auto& [name, k] : by_time) {
    std::string gf = k.flops > 0 && k.seconds > 0 ? std::to_string(static_cast<int>(k.flops / k.seconds / 1e9)) : "-";
    std::snprintf(line, sizeof line, "  %9.3f %5.1f%% %6d %8s %7.3f  %s\n", k.seconds * 1e3,
                  total > 0 ? 100.0 * k.seconds / total : 0.0, k.launches, gf.c_str(), static_cast<double>(k.flops) / 1e9,
                  name.c_str());
    os += line;
  }
  return os;
}

}  // namespace switchyard
