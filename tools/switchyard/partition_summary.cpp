// Partition summaries.
#include "partition_summary.h"

#include <map>
#include <set>
#include <utility>

#include "cli_common.h"

namespace switchyard::cli {

namespace {

std::string pct(int64_t part, int64_t total) {
  return total > 0 ? fixed(100.0 * static_cast<double>(part) / static_cast<double>(total), 1) + "%" : "-";
}

// "nn.conv2d x53, nn.relu x49, ..." in first-seen order.
std::string histogram(const std::vector<std::string>& names) {
  std::vector<std::string> order;
  std::map<std::string, int> n;
  for (const std::string& s : names)
    if (n[s]++ == 0) order.push_back(s);
  std::string out;
  for (const std::string& s : order) out += (out.empty() ? "" : ", ") + s + (n[s] > 1 ? " x" + std::to_string(n[s]) : "");
  return out;
}

struct Totals {
  int64_t total = 0;
  std::map<std::string, int64_t> by_backend;  // includes "native"
};

Totals totals(const PartitionReport& r) {
  Totals t;
  t.total = r.total_flops;
  int64_t offloaded = 0;
  for (const auto& reg : r.regions)
    if (reg.offloaded) {
      t.by_backend[reg.backend] += reg.flops;
      offloaded += reg.flops;
    }
  t.by_backend["native"] = t.total - offloaded;
  return t;
}

}  // namespace

nlohmann::json partition_json(const PartitionReport& r) {
  Totals t = totals(r);
  nlohmann::json j;
  j["total_flops"] = t.total;
  j["flops_by_backend"] = t.by_backend;
  j["regions"] = nlohmann::json::array();
  for (const auto& reg : r.regions) {
    nlohmann::json x = {{"backend", reg.backend}, {"ops", reg.ops.size()}, {"flops", reg.flops},
                        {"offloaded", reg.offloaded}, {"op_histogram", histogram(reg.ops)}};
    x["symbol"] = reg.symbol.empty() ? nlohmann::json(nullptr) : nlohmann::json(reg.symbol);
    if (!reg.offloaded) x["why_not"] = reg.why_not;
    if (!reg.measured.empty()) x["measured"] = reg.measured;
    j["regions"].push_back(x);
  }
  j["nodes"] = nlohmann::json::array();
  for (const auto& d : r.nodes) {
    nlohmann::json x = {{"node", d.node}, {"backend", d.backend.empty() ? "native" : d.backend}};
    if (!d.why.empty()) x["why"] = d.why;
    nlohmann::json rej = nlohmann::json::object();
    for (const auto& [b, why] : d.rejections) rej[b] = why;
    if (!d.rejections.empty()) x["rejected_by"] = rej;
    j["nodes"].push_back(x);
  }
  return j;
}

void print_partition(std::ostream& os, const PartitionReport& r, bool explain) {
  Totals t = totals(r);
  os << "total " << si(static_cast<double>(t.total), "FLOP") << ":";
  bool first = true;
  for (const auto& [b, f] : t.by_backend) {
    os << (first ? " " : ", ") << b << " " << si(static_cast<double>(f), "FLOP") << " (" << pct(f, t.total) << ")";
    first = false;
  }
  os << "\n";
  int offloaded = 0;
  for (const auto& reg : r.regions) offloaded += reg.offloaded;
  os << offloaded << " region" << (offloaded == 1 ? "" : "s") << " offloaded:\n";
  for (const auto& reg : r.regions) {
    if (!reg.offloaded) continue;
    os << "  @" << reg.symbol << "  " << reg.backend << "  " << reg.ops.size() << " ops  "
       << si(static_cast<double>(reg.flops), "FLOP") << " (" << pct(reg.flops, t.total) << ")  "
       << histogram(reg.ops) << (reg.measured.empty() ? "" : "  (" + reg.measured + ")") << "\n";
  }
  std::vector<std::string> native;
  for (const auto& d : r.nodes)
    if (d.backend.empty()) native.push_back(d.node);
  os << "native: " << native.size() << " node" << (native.size() == 1 ? "" : "s")
     << (native.empty() ? "" : ": " + histogram(native)) << "\n";
  if (!explain) {
    if (!native.empty()) os << "(--explain says why each node went where it went)\n";
    return;
  }
  os << "placement of every node, in graph order:\n";
  // A region's measurement is every one of its nodes' reason: said in full once, then by its
  // first words (EfficientNet-B0's 116 nodes repeated one 200-character line).
  std::set<std::pair<std::string, std::string>> said;
  for (const auto& d : r.nodes) {
    os << "  " << d.node << " -> " << (d.backend.empty() ? "native" : d.backend);
    if (!d.why.empty()) os << "  (" << d.why << ")";
    os << "\n";
    for (const auto& [b, why] : d.rejections) {
      std::string text = why;
      const size_t colon = why.find(": ");
      if (why.size() > 80 && colon != std::string::npos && !said.insert({b, why}).second)
        text = why.substr(0, colon) + " (as above)";
      os << "      " << (why.rfind(b + ":", 0) == 0 || why.rfind(b + " ", 0) == 0 ? "" : b + ": ") << text << "\n";
    }
  }
  for (const auto& reg : r.regions)
    if (!reg.offloaded)
      os << "  region of " << reg.backend << " left native (" << histogram(reg.ops) << "): " << reg.why_not << "\n";
}

}  // namespace switchyard::cli
