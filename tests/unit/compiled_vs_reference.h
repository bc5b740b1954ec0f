// The tests that compile a module for the native kernels compare its results with the reference
// executor's.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/reference/executor.h"
#include "native/compile.h"
#include "strategy/strategy.h"
#include "target/host.h"
#include "target/target.h"

namespace sy::nativetest {

// nc's f32 results on `in` equal the reference executor's on m, element by element (1e-4
// absolute + 1e-4 relative), on 1 and on 2 threads.
inline void expect_reference_values(const ir::Module& m, native::Compiled& nc, const std::vector<Tensor>& in,
                                    const std::string& what) {
  std::vector<Tensor> want = reference::run_module(m, in).value();
  for (int threads : {1, 2}) {
    std::vector<Tensor> got = nc.executable->run(in, threads, nullptr);
    ASSERT_EQ(got.size(), want.size());
    for (size_t r = 0; r < want.size(); ++r)
      for (int64_t i = 0; i < want[r].numel(); ++i)
        ASSERT_NEAR(got[r].data<float>()[i], want[r].data<float>()[i], 1e-4 + 1e-4 * std::abs(want[r].data<float>()[i]))
            << what << ", " << threads << " threads, result " << r << " element " << i;
  }
}

// The host, and on an AVX-512 host the AVX2 target too: the layouts of 16-lane and of 8-lane
// vectors are both checked on any machine that can run them.
inline std::vector<target::Target> host_and_avx2_targets() {
  std::vector<target::Target> ts = {target::host()};
  if (ts[0].has("avx2") && ts[0].has("fma") && ts[0].vector_lanes() != 8) ts.push_back(target::parse("cpu -isa=avx2"));
  return ts;
}

// How many of nc's kernels run the implementation impl.
inline int count_choices(const native::Compiled& nc, const std::string& impl) {
  int n = 0;
  for (const strategy::Choice& c : nc.choices) n += c.implementation == impl;
  return n;
}

}  // namespace sy::nativetest
