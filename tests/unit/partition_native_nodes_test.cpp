// PartitionOptions::native_nodes (measured placement's lever): nodes named native stay native,
// composites among them are flattened without touching their neighbours' regions, and every
// decision still names the region its node went into.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "api/load.h"
#include "backends/backend.h"
#include "ir/visitor.h"
#include "partition/pipeline.h"

namespace sy {
namespace {

TEST(PartitionNativeNodes, EveryDecisionNamesItsOwnRegion) {
  const backends::Backend* onednn = backends::BackendRegistry::global().find("onednn");
  if (!onednn) GTEST_SKIP() << "built without the oneDNN backend";
  ir::Module m = api::load_model("zoo:bert_encoder");
  partition::PartitionOptions o;
  o.backends = {onednn};
  partition::PartitionResult rules = partition::partition_module(m, o);
  const auto& ds = rules.report.decisions;
  // Every third claimed node stays native (composites among them), the others keep their claim.
  int claimed = 0, composites_native = 0;
  for (size_t k = 0; k < ds.size(); ++k)
    if (!ds[k].backend.empty() && claimed++ % 3 == 0) {
      o.native_nodes.insert(static_cast<int>(k));
      composites_native += ds[k].node.rfind("composite", 0) == 0;
    }
  ASSERT_GT(composites_native, 0);
  partition::PartitionResult r = partition::partition_module(m, o);
  ASSERT_EQ(r.report.decisions.size(), ds.size());
  int in_regions = 0;
  for (size_t k = 0; k < ds.size(); ++k) {
    const partition::NodeDecision& d = r.report.decisions[k];
    EXPECT_EQ(d.node, ds[k].node) << "decision " << k << " is another node";
    if (o.native_nodes.count(static_cast<int>(k))) {
      EXPECT_TRUE(d.backend.empty()) << k;
      EXPECT_EQ(d.region, -1) << k;
      continue;
    }
    if (d.region < 0) continue;  // its region was too small to offload
    ++in_regions;
    const partition::RegionReport& rr = r.report.regions[static_cast<size_t>(d.region)];
    ASSERT_FALSE(rr.symbol.empty());
    // An op node's op is in the region it names (a wrong mapping names another region).
    if (d.node.rfind("composite", 0) != 0) {
      EXPECT_NE(std::find(rr.ops.begin(), rr.ops.end(), d.node), rr.ops.end())
          << "decision " << k << " (" << d.node << ") names @" << rr.symbol;
    }
  }
  EXPECT_GT(in_regions, 0);
  // The placed module's regions hold exactly the claimed nodes' ops: no composite of a claimed
  // node was flattened into plain ops of another region by mistake.
  size_t ops_in_regions = 0, composite_calls = 0;
  for (const partition::RegionReport& rr : r.report.regions)
    if (rr.offloaded) ops_in_regions += rr.ops.size();
  for (const auto& [name, fn] : r.module.functions) {
    if (name == "main") continue;
    for (const ir::Expr& e : ir::post_order(fn->as<ir::FunctionNode>()->body))
      if (auto* c = e->as<ir::CallNode>(); c && !c->is_op()) ++composite_calls;
  }
  EXPECT_GT(ops_in_regions, 0u);
  EXPECT_GT(composite_calls, 0u) << "the kept composites stay composites inside their regions";
}

}  // namespace
}  // namespace sy
