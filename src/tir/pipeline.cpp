#include "tir/pipeline.h"

#include <algorithm>
#include <iostream>

#include "tir/hoist_guards.h"
#include "tir/loop_partition.h"
#include "tir/printer.h"
#include "tir/promote_accumulators.h"
#include "tir/remove_no_op.h"
#include "tir/simplify.h"
#include "tir/vectorize.h"
#include "tir/verifier.h"

namespace sy::tir {

PrimFunc run_default_passes(PrimFunc f, const PassOptions& opts) {
  auto dump = [&](const std::string& pass) {
    const auto& d = opts.dump_after;
    if (std::find(d.begin(), d.end(), pass) == d.end() && std::find(d.begin(), d.end(), "all") == d.end()) return;
    const std::string text = print_func(f);
    if (opts.dump) opts.dump(pass, text);
    else std::cerr << "// after " << pass << "\n" << text;
  };
  dump("lower");
  f = simplify(std::move(f));
  dump("simplify");
  // One growth bound for both rounds, from the size as lowered.
  const int64_t partition_max = partition_limit(f.body);
  for (int round = 0; round < 2; ++round) {
    f = loop_partition(std::move(f), partition_max);
    dump("loop_partition");
    f = simplify(std::move(f));
    dump("simplify");
  }
  f = unroll_loops(std::move(f));
  dump("unroll");
  f = legalize_vectorize(std::move(f));
  dump("vectorize");
  f = remove_no_op(std::move(f));
  dump("remove_no_op");
  f = hoist_guards(std::move(f));
  dump("hoist_guards");
  f = promote_accumulators(std::move(f));
  dump("promote_accumulators");
  f = simplify(std::move(f));
  dump("simplify");
  check_valid(f);
  return f;
}

}  // namespace sy::tir
