// Why each native kernel runs the implementation it runs (the --explain text of partition and
// compile): the implementations that applied, their priority and measured costs, the one chosen.
#include <map>
#include <sstream>

#include "access.h"
#include "ir/visitor.h"
#include "native/hooked_regions.h"
#include "strategy/strategy.h"

namespace switchyard {

std::string kernel_choices_text(const sy::native::Plan& p, const std::vector<sy::strategy::Choice>& choices,
                                const sy::target::Target& t) {
  using namespace sy;
  std::ostringstream os;
  std::vector<int> uses(p.kernels.size(), 0);
  for (const native::Call& c : p.calls)
    if (!c.external && c.function >= 0) ++uses[static_cast<size_t>(c.function)];
  int from_records = 0, by_order = 0, in_chains = 0;
  os << "native kernels: implementation chosen per kernel (order without records: priority, then name)\n";
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const auto* fn = p.kernels[k]->as<ir::FunctionNode>();
    const strategy::Choice& ch = choices.at(k);
    if (auto by = fn->attrs.find(native::kLoweredByAttr); by != fn->attrs.end()) {
      // A region a target hook lowered: its composites, and no strategy.
      os << p.kernel_names[k] << " x" << uses[k] << "  region of " << by->second << ":";
      for (const ir::Expr& e : ir::post_order(fn->body))
        if (auto* c = e->as<ir::CallNode>(); c && c->callee)
          if (auto* comp = c->callee->as<ir::FunctionNode>(); comp && comp->attrs.count("Composite"))
            os << " " << comp->attrs.at("Composite");
      os << "\n  " << (ch.implementation.empty() ? "reference kernels: " + fn->attrs.at(native::kFallbackAttr) : ch.why) << "\n";
      continue;
    }
    const ir::CallNode* anchor = strategy::anchor_of(*fn);
    os << p.kernel_names[k] << " x" << uses[k] << "  " << strategy::describe_group(*fn) << "\n";
    if (ch.implementation.empty()) {
      auto fb = fn->attrs.find(native::kFallbackAttr);
      os << "  reference kernels: " << (fb != fn->attrs.end() ? fb->second : "no native implementation") << "\n";
      continue;
    }
    (ch.from_record ? from_records : ch.in_chain ? in_chains : by_order)++;
    os << "  chosen " << ch.implementation << " (" << ch.why << ")" << (ch.knobs.empty() ? "" : "  " + ch.knobs) << "\n";
    strategy::Applicable a = strategy::applicable(*anchor, t);
    if (a.entries.size() + a.rejected.size() <= 1 && !ch.from_record) continue;
    std::map<std::string, std::string> measured(ch.measured.begin(), ch.measured.end());
    for (const auto& e : a.entries) {
      auto m = measured.find(e.impl->name);
      os << "    " << (e.impl->name == ch.implementation ? "* " : "  ") << e.impl->name << "  priority " << e.priority
         << (m != measured.end() ? "  measured " + m->second : ch.from_record ? "  not measured" : "") << "\n";
    }
    for (const auto& [name, why] : a.rejected) os << "      " << name << "  does not apply: " << why << "\n";
  }
  os << "kernels: " << from_records << " chosen by records, "
     << (in_chains ? std::to_string(in_chains) + " in chains keeping a layout, " : "") << by_order << " by priority\n";
  return os.str();
}

}  // namespace switchyard
