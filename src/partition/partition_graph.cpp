// Pass: partition graph.
#include "partition/partition_graph.h"

#include <map>

#include "ir/visitor.h"
#include "support/error.h"
#include "partition/region_util.h"

namespace sy::partition {

namespace {

class Outliner : public ir::ExprMutator {
 public:
  Outliner(ir::Module& m, PartitionReport* report, const std::string& prefix)
      : m_(m), report_(report), prefix_(prefix) {}

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    std::string backend = callee_attr(orig, kCompiler);
    if (backend.empty()) return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
    const ir::FunctionNode* f = inline_callee(orig);
    std::string symbol = prefix_ + backend + "_" + std::to_string(next_[backend]++);
    ir::FuncAttrs attrs = f->attrs;
    if (report_)
      for (const auto& [fn, index] : report_->region_functions)
        if (fn.get() == f) renumbered_[index] = static_cast<int>(outlined_.size());
    attrs["global_symbol"] = symbol;
    attrs["Primitive"] = "1";
    // Parameter names carry the symbol, so printed texts say which region an input belongs to.
    std::vector<ir::Expr> params;
    std::unordered_map<const ir::ExprNode*, ir::Expr> sub;
    for (size_t i = 0; i < f->params.size(); ++i) {
      ir::Expr p = ir::var(symbol + "_i" + std::to_string(i), f->params[i]->type);
      params.push_back(p);
      sub[f->params[i].get()] = p;
    }
    ir::Expr fn = ir::function(params, substitute(f->body, sub), attrs);
    m_.functions[symbol] = fn;
    if (report_) {
      OpCount oc = count_ops(f->body);
      RegionReport r;
      r.symbol = symbol;
      r.backend = backend;
      r.ops = oc.names;
      r.flops = oc.flops;
      r.offloaded = true;
      outlined_.push_back(std::move(r));
    }
    return ir::call_function(ir::global_var(symbol, fn->type), std::move(args));
  }

 public:
  std::vector<RegionReport> outlined_;
  std::map<int, int> renumbered_;  // the merge's report index -> the outlined one

 private:
  ir::Module& m_;
  PartitionReport* report_;
  const std::string prefix_;
  std::map<std::string, int> next_;
};

}  // namespace

ir::Module partition_graph(const ir::Module& m, PartitionReport* report, const std::string& symbol_prefix) {
  ir::Module out = m;
  const ir::FunctionNode& main = m.main();
  Outliner o(out, report, symbol_prefix);
  ir::Expr body = o.mutate(main.body);
  if (body != main.body) out.functions["main"] = ir::function(main.params, body, main.attrs);
  if (report) {
    std::vector<RegionReport> kept;
    for (RegionReport& r : report->regions)
      if (!r.offloaded) kept.push_back(std::move(r));
    report->regions = std::move(o.outlined_);
    report->regions.insert(report->regions.end(), kept.begin(), kept.end());
    for (NodeDecision& d : report->decisions) {
      if (d.region < 0) continue;
      auto it = o.renumbered_.find(d.region);
      SY_CHECK(it != o.renumbered_.end()) << "a decision names region " << d.region << ", which was not outlined";
      d.region = it->second;
    }
    report->region_functions.clear();
    report->wrapped_nodes.clear();
  }
  return out;
}

std::map<std::string, std::vector<backends::ExternFunction>> extern_functions(const ir::Module& m) {
  std::map<std::string, std::vector<backends::ExternFunction>> out;
  for (const auto& [name, fn] : m.functions) {
    auto* f = fn->as<ir::FunctionNode>();
    auto it = f->attrs.find(kCompiler);
    if (it != f->attrs.end()) out[it->second].push_back({name, fn});
  }
  return out;
}

}  // namespace sy::partition
