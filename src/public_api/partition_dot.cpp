// Graphviz picture of a partitioned module (Partitioned::dot): each offloaded region is a cluster
// coloured by its backend, holding its ops and composites; native ops stand outside.
#include <map>
#include <sstream>
#include <unordered_map>

#include "access.h"
#include "ir/visitor.h"
#include "partition/region_util.h"
#include "support/numbered.h"

namespace sy::public_api {
namespace {
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

class DotWriter {
 public:
  // `notes`: a line under a region's label (measured placement: its candidates' times).
  DotWriter(const ir::Module& m, std::map<std::string, std::string> notes) : m_(m), notes_(std::move(notes)) {}

  std::string write(const std::string& title) {
    os_ << "digraph switchyard {\n  rankdir=TB;\n  labelloc=t;\n  label=\"" << escape(title) << "\";\n"
        << "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n";
    const ir::FunctionNode& main = m_.main();
    Scope top;
    for (const ir::Expr& p : main.params) {
      std::string id = new_id();
      os_ << "  " << id << " [shape=ellipse, fillcolor=\"#eeeeee\", label=\"" << escape(p->as<ir::VarNode>()->name)
          << "\"];\n";
      top.ids[p.get()] = {id};
    }
    emit_scope(main.body, top, "  ");
    std::string out_id = new_id();
    os_ << "  " << out_id << " [shape=ellipse, fillcolor=\"#eeeeee\", label=\"output\"];\n";
    for (const std::string& s : top.ids[main.body.get()]) edges_ << "  " << s << " -> " << out_id << ";\n";
    os_ << edges_.str() << "}\n";
    return os_.str();
  }

 private:
  struct Scope {
    std::unordered_map<const ir::ExprNode*, std::vector<std::string>> ids;  // producers of a value
  };

  std::string new_id() { return numbered("n", static_cast<int64_t>(next_++)); }

  std::vector<std::string> sources(const ir::Expr& e, Scope& s) {
    auto it = s.ids.find(e.get());
    return it == s.ids.end() ? std::vector<std::string>{} : it->second;
  }

  void emit_scope(const ir::Expr& body, Scope& s, const std::string& indent) {
    for (const ir::Expr& e : ir::post_order(body)) {
      if (s.ids.count(e.get())) continue;
      if (auto* t = e->as<ir::TupleNode>()) {
        std::vector<std::string> all;
        for (const ir::Expr& f : t->fields) {
          auto v = sources(f, s);
          all.insert(all.end(), v.begin(), v.end());
        }
        s.ids[e.get()] = all;
        fields_[e.get()] = t->fields;
        continue;
      }
      if (auto* g = e->as<ir::TupleGetItemNode>()) {
        auto it = region_outputs_.find(g->tuple.get());
        if (it != region_outputs_.end() && static_cast<size_t>(g->index) < it->second.size())
          s.ids[e.get()] = it->second[static_cast<size_t>(g->index)];
        else
          s.ids[e.get()] = sources(g->tuple, s);
        continue;
      }
      auto* c = e->as<ir::CallNode>();
      if (!c) continue;
      if (auto* gv = c->callee ? c->callee->as<ir::GlobalVarNode>() : nullptr) {
        emit_region(e, *c, gv->name, s, indent);
        continue;
      }
      std::string id = new_id();
      std::string label = partition::node_label(e);
      if (label.rfind("composite ", 0) == 0) label = label.substr(10);
      label = escape(label);
      if (ir::is_tensor(e->type)) label += "\\n" + shape_str(ir::shape_of(e));
      os_ << indent << id << " [label=\"" << label << "\"];\n";
      // Edges go at top level: an edge written inside a cluster would pull its source into it.
      for (const ir::Expr& a : c->args)
        for (const std::string& src : sources(a, s)) edges_ << "  " << src << " -> " << id << ";\n";
      s.ids[e.get()] = {id};
    }
  }

  void emit_region(const ir::Expr& call, const ir::CallNode& c, const std::string& symbol, Scope& outer,
                   const std::string& indent) {
    auto* f = m_.functions.at(symbol)->as<ir::FunctionNode>();
    std::string backend = f->attrs.count("Compiler") ? f->attrs.at("Compiler") : "";
    os_ << indent << "subgraph cluster_" << symbol << " {\n"
        << indent << "  label=\"@" << escape(symbol) << " (" << escape(backend) << ")"
        << (notes_.count(symbol) ? "\\n" + escape(notes_.at(symbol)) : "") << "\";\n"
        << indent << "  style=filled; color=\"" << colour_of(backend) << "\";\n";
    Scope inner;
    for (size_t i = 0; i < f->params.size() && i < c.args.size(); ++i) inner.ids[f->params[i].get()] = sources(c.args[i], outer);
    emit_scope(f->body, inner, indent + "  ");
    os_ << indent << "}\n";
    outer.ids[call.get()] = inner.ids[f->body.get()];
    if (auto* t = f->body->as<ir::TupleNode>()) {
      std::vector<std::vector<std::string>> outs;
      for (const ir::Expr& fld : t->fields) outs.push_back(inner.ids[fld.get()]);
      region_outputs_[call.get()] = outs;
    }
  }

  // Colours by backend in order of first appearance (backends are not named here).
  const char* colour_of(const std::string& backend) {
    static const char* palette[] = {"#8ecae6", "#ffb703", "#90be6d", "#f28482", "#cdb4db", "#f6bd60"};
    auto it = colours_.emplace(backend, colours_.size()).first;
    return palette[it->second % (sizeof palette / sizeof palette[0])];
  }

  const ir::Module& m_;
  std::map<std::string, std::string> notes_;
  std::map<std::string, size_t> colours_;
  std::ostringstream os_, edges_;
  int next_ = 0;
  std::unordered_map<const ir::ExprNode*, std::vector<ir::Expr>> fields_;
  std::unordered_map<const ir::ExprNode*, std::vector<std::vector<std::string>>> region_outputs_;
};

}  // namespace
}  // namespace sy::public_api

namespace switchyard {

std::string Partitioned::dot(const std::string& title) const {
  return guarded([&] {
    // Measured placement: each region's candidates and their times under its label (the
    // search's details stay in the text).
    std::map<std::string, std::string> notes;
    for (const sy::partition::RegionReport& r : Access::impl(*this).result.report.regions) {
      if (r.symbol.empty() || r.measured.empty()) continue;
      notes[r.symbol] = r.measured.substr(0, r.measured.find("; nodes alone"));
    }
    sy::public_api::DotWriter w(Access::impl(*this).result.module, std::move(notes));
    return w.write(title);
  });
}

}  // namespace switchyard
