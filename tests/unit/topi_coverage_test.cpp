// Which graph ops have a native implementation (printed), and the fallback for those without.
#include <gtest/gtest.h>

#include <iostream>

#include "native/compile.h"
#include "ops/op.h"
#include "topi/topi.h"

namespace sy {
namespace {

TEST(TopiCoverage, ListsOpsWithoutNativeImplementation) {
  std::string missing;
  int have = 0;
  for (const ops::OpDef& d : ops::OpRegistry::global().all()) {
    if (!topi::implementations(d.code).empty()) ++have;
    else missing += (missing.empty() ? "" : ", ") + d.name;
  }
  std::cout << "native implementations: " << have << " of " << ops::OpRegistry::global().all().size()
            << " ops; missing: " << (missing.empty() ? "none" : missing) << "\n";
  SUCCEED();
}

}  // namespace
}  // namespace sy
