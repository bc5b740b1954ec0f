// Two small BYOC backends for testing the partition pipeline's policy. Their runtime module
// runs each external function with the reference executor, so a partitioned module can be run
// end to end and compared with the unpartitioned one.
#pragma once
#include <set>
#include <string>

#include "backends/backend.h"
#include "ops/op.h"

namespace sy::testing {

class TestBackend : public backends::Backend {
 public:
  TestBackend(std::string name, std::set<ops::OpCode> ops, bool always_worth = false)
      : name_(std::move(name)), ops_(std::move(ops)), always_worth_(always_worth) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "test backend " + name_; }
  std::vector<backends::CompositeRule> composite_rules() const override { return rules; }
  backends::Verdict supports_op(const ir::CallNode& call) const override;
  backends::Verdict worth_offloading(const backends::RegionSummary& r) const override;
  std::unique_ptr<backends::RuntimeModule> compile(const std::vector<backends::ExternFunction>& fns, const target::Target& target) const override;
  std::unique_ptr<backends::RuntimeModule> load(const std::string& bytes,
                                                const std::vector<backends::ExternFunction>& fns) const override;
  std::vector<backends::CompositeRule> rules;
  // Misbehaviours, for the runtime's checks: compile throws for a function that calls one of
  // these ops; the module returns each result with one more leading dimension.
  std::set<ops::OpCode> cannot_build;
  bool wrong_result_shape = false;

 private:
  std::string name_;
  std::set<ops::OpCode> ops_;
  bool always_worth_;
};

}  // namespace sy::testing
