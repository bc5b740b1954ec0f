// Partitioning without building (partition(), Partitioned) and the report of a compile
// (compile_report()): which backend took what and why, and the native kernels built.
#include <algorithm>

#include "access.h"
#include "api/compile.h"
#include "ir/printer.h"
#include "strategy/strategy.h"
#include "switchyard/report.h"
#include "target/host.h"

namespace switchyard {

PartitionReport public_report(const sy::partition::PartitionReport& r, int64_t total_flops) {
  PartitionReport out;
  out.total_flops = total_flops;
  for (const sy::partition::RegionReport& g : r.regions)
    out.regions.push_back({g.symbol, g.backend, g.ops, g.flops, g.offloaded, g.why_not, g.measured});
  for (const sy::partition::NodeDecision& d : r.decisions) out.nodes.push_back({d.node, d.backend, d.why, d.rejections});
  return out;
}

std::function<void(const std::string&, const sy::ir::Module&)> ir_dumper(
    const std::string& dump_after, const std::function<void(const std::string&, const std::string&)>& on_ir) {
  if (dump_after.empty() || !on_ir) return nullptr;
  return [dump_after, on_ir](const std::string& pass, const sy::ir::Module& m) {
    if (dump_after != "all" && dump_after != pass) return;
    sy::ir::PrintOptions po;
    po.constant_data = false;
    on_ir(pass, sy::ir::print_module(m, po));
  };
}

std::vector<std::string> partition_pass_names() { return sy::partition::pass_names(); }

Partitioned partition(const Model& model, const PartitionOptions& opts) {
  return guarded([&] {
    const sy::ir::Module& m = Access::module(model);
    auto impl = std::make_shared<Partitioned::Impl>();
    const sy::partition::PartitionOptions popts = sy::api::partition_options(opts.backends, opts.prefer);
    if (opts.placement != "rules" && opts.placement != "measured")
      throw sy::Error("placement '" + opts.placement + "': expected rules or measured");
    if (opts.placement == "measured" && popts.backends.empty())
      throw sy::Error("--placement measured needs --backends (it decides which of their regions to keep)");
    impl->result = sy::partition::partition_module(m, popts, ir_dumper(opts.dump_after, opts.on_ir));
    if (opts.placement == "measured") {
      sy::api::CompileSpec spec;
      spec.placement = "measured";
      spec.records = opts.records;
      spec.threads = opts.threads;
      spec.progress = opts.progress;
      impl->placement = sy::api::measured_placement(m, popts, sy::target::host(), spec, &impl->result, &impl->placement_nodes);
    }
    impl->total_flops = sy::api::analyze(m).flops;
    return Access::partitioned(std::move(impl));
  });
}

PartitionReport Partitioned::report() const {
  return guarded([&] {
    const Impl& impl = Access::impl(*this);
    return public_report(impl.result.report, impl.total_flops);
  });
}

std::string Partitioned::placement() const { return guarded([&] { return Access::impl(*this).placement; }); }
std::string Partitioned::placement_nodes() const { return guarded([&] { return Access::impl(*this).placement_nodes; }); }

std::string Partitioned::kernel_choices() const {
  return guarded([&] {
    const sy::target::Target& t = sy::target::host();
    sy::native::Plan p = sy::native::plan_for(sy::native::fuse_for_native(Access::impl(*this).result.module), t);
    std::vector<sy::strategy::Choice> choices(p.kernels.size());
    for (size_t k = 0; k < p.kernels.size(); ++k)
      if (std::optional<sy::strategy::Choice> c = sy::strategy::choose(*p.kernels[k]->as<sy::ir::FunctionNode>(), t, nullptr))
        choices[k] = *c;
    return kernel_choices_text(p, choices, t);
  });
}

CompileReport compile_report(const Compiled& compiled) {
  return guarded([&] {
    const Compiled::Impl& impl = Access::impl(compiled);
    CompileReport r;
    r.target = impl.model.target.str();
    r.partition = public_report(impl.report, impl.total_flops);
    r.placement = impl.placement;
    r.placement_nodes = impl.placement_nodes;
    r.warnings = impl.warnings;
    if (!impl.model.native) return r;
    r.has_native = true;
    const sy::native::Plan& p = impl.model.native->plan();
    NativeReport& n = r.native;
    n.kernel_launches = p.kernel_launches;
    n.distinct_kernels = static_cast<int64_t>(p.kernels.size());
    n.planned_bytes = static_cast<int64_t>(p.arena_bytes);
    n.intermediate_bytes = static_cast<int64_t>(p.intermediate_bytes);
    n.records = impl.records;
    if (impl.native) {
      const sy::native::Compiled& nc = *impl.native;
      n.lower_seconds = nc.lower_seconds;
      n.compile_seconds = nc.compile_seconds;
      n.fallbacks = nc.fallbacks;
      n.kernel_choices = kernel_choices_text(nc.executable->plan(), nc.choices, nc.executable->target());
      n.generated_c = nc.generated_c;
    }
    return r;
  });
}

}  // namespace switchyard
