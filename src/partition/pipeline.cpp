// The partition pipeline.
#include "partition/pipeline.h"

#include "ir/verifier.h"
#include "partition/annotate_targets.h"
#include "partition/merge_composites.h"
#include "partition/merge_regions.h"
#include "partition/partition_graph.h"
#include "passes/fold_constants.h"
#include "support/error.h"

namespace sy::partition {

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names{"fold_constants", "merge_composites", "annotate_targets",
                                              "merge_regions", "partition_graph"};
  return names;
}

PartitionResult partition_module(const ir::Module& m, const PartitionOptions& opts,
                                 const std::function<void(const std::string&, const ir::Module&)>& after_pass) {
  PartitionResult r;
  auto step = [&](const char* name, ir::Module next) {
    Status st = ir::verify(next);
    SY_CHECK(st.is_ok()) << name << " produced invalid IR: " << st.message();
    if (after_pass) after_pass(name, next);
    return next;
  };
  ir::Module x = step("fold_constants", passes::fold_constants(m));
  x = step("merge_composites", merge_composites(x, opts));
  x = step("annotate_targets", annotate_targets(x, opts, &r.report));
  x = step("merge_regions", merge_regions(x, opts, &r.report));
  r.module = step("partition_graph", partition_graph(x, &r.report, opts.symbol_prefix));
  return r;
}

}  // namespace sy::partition
