// The search of measured placement: which nodes of a region stay on the backend, given what each
// costs there and natively and what moving a value between the two costs.
//
// Costs are additive over nodes plus a transition cost per value that crosses between the
// backend and the native kernels (the backend's reorders from plain layouts into its own and
// back, its copies in and out). With two places per node this is a minimum s-t cut (the
// two-label case of Collage's and Kolmogorov's energy minimisation), solved exactly: the cut
// pays, for every node, the cost of the place it is put in, and for every edge whose ends are
// put in different places, the edge's transition cost.
#pragma once
#include <cstdint>
#include <vector>

namespace sy::runtime {

struct PlacementGraph {
  // Per node: its cost on the backend with none of its values crossing (what it costs inside a
  // region that holds its neighbours too) and natively.
  std::vector<double> on_backend, native;
  // A value between two nodes, or between a node and the outside (to = -1: the value comes from,
  // or goes to, native code), and what crossing costs.
  struct Edge {
    int from, to;
    double transition;
  };
  std::vector<Edge> edges;
};

struct PlacementChoice {
  std::vector<bool> on_backend;  // per node
  double cost = 0;               // the model's cost of this choice
};

// The cheapest choice (ties go to the backend, which the rules chose).
PlacementChoice cheapest_placement(const PlacementGraph& g);
// The model's cost of a given choice.
double placement_cost(const PlacementGraph& g, const std::vector<bool>& on_backend);

}  // namespace sy::runtime
