// The placement search's minimum cut against every choice of small random graphs, and golden
// cases where the transition cost decides.
#include <gtest/gtest.h>

#include <random>

#include "runtime/placement_search.h"

namespace sy {
namespace {

using runtime::PlacementGraph;

// a -> b -> c, b cheaper natively by 1.5; crossing costs `inside` between them, `boundary` into
// a and out of c.
PlacementGraph chain(double inside, double boundary) {
  PlacementGraph g;
  g.on_backend = {1, 5, 1};
  g.native = {2, 3.5, 2};
  g.edges = {{0, 1, inside}, {1, 2, inside}, {0, -1, boundary}, {2, -1, boundary}};
  return g;
}

TEST(PlacementSearch, ATransitionCostFlipsTheChoice) {
  // Free crossings: b goes native (1 + 3.5 + 1).
  runtime::PlacementChoice free = runtime::cheapest_placement(chain(0, 0));
  EXPECT_EQ(free.on_backend, (std::vector<bool>{true, false, true}));
  EXPECT_DOUBLE_EQ(free.cost, 5.5);
  // Crossings of 1 between them: splitting b off saves 1.5 and pays 2; the region stays whole.
  runtime::PlacementChoice dear = runtime::cheapest_placement(chain(1, 0));
  EXPECT_EQ(dear.on_backend, (std::vector<bool>{true, true, true}));
  EXPECT_DOUBLE_EQ(dear.cost, 7);
  // A boundary so dear that it outweighs what the backend saves: all native (7.5).
  runtime::PlacementChoice all_native = runtime::cheapest_placement(chain(1, 5));
  EXPECT_EQ(all_native.on_backend, (std::vector<bool>{false, false, false}));
  EXPECT_DOUBLE_EQ(all_native.cost, 7.5);
}

TEST(PlacementSearch, TiesGoToTheBackend) {
  PlacementGraph g;
  g.on_backend = {2, 2};
  g.native = {2, 2};
  g.edges = {{0, 1, 0.5}};
  EXPECT_EQ(runtime::cheapest_placement(g).on_backend, (std::vector<bool>{true, true}));
}

TEST(PlacementSearch, TheCutIsTheCheapestOfEveryChoice) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> cost(-1, 4), tau(0, 2);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 9);
    PlacementGraph g;
    for (int i = 0; i < n; ++i) {
      g.on_backend.push_back(cost(rng));
      g.native.push_back(cost(rng));
    }
    const int edges = static_cast<int>(rng() % (2 * n + 1));
    for (int e = 0; e < edges; ++e) {
      int a = static_cast<int>(rng() % n), b = static_cast<int>(rng() % (n + 1)) - 1;
      if (a == b) continue;
      g.edges.push_back({a, b, tau(rng)});
    }
    double best = 1e300;
    for (int mask = 0; mask < (1 << n); ++mask) {
      std::vector<bool> c;
      for (int i = 0; i < n; ++i) c.push_back((mask >> i) & 1);
      best = std::min(best, runtime::placement_cost(g, c));
    }
    runtime::PlacementChoice got = runtime::cheapest_placement(g);
    ASSERT_NEAR(got.cost, best, 1e-9) << "trial " << trial;
  }
}

}  // namespace
}  // namespace sy
