#include "partition/inline_regions.h"

#include <unordered_map>

#include "ir/visitor.h"
#include "partition/region_util.h"
#include "support/error.h"

namespace sy::partition {

namespace {

// Calls of composite functions become their bodies over the call's arguments.
class FlattenComposites : public ir::ExprMutator {
 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    auto* f = c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
    if (!f || !f->attrs.count(kComposite)) return ir::ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
    std::unordered_map<const ir::ExprNode*, ir::Expr> sub;
    for (size_t i = 0; i < f->params.size(); ++i) sub[f->params[i].get()] = args[i];
    return substitute(FlattenComposites().mutate(f->body), sub);
  }
};

class InlineCalls : public ir::ExprMutator {
 public:
  InlineCalls(const ir::Module& m, const std::set<std::string>& symbols) : m_(m), symbols_(symbols) {}

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    auto* g = c->callee ? c->callee->as<ir::GlobalVarNode>() : nullptr;
    if (!g || !symbols_.count(g->name)) return ir::ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
    auto* f = m_.functions.at(g->name)->as<ir::FunctionNode>();
    std::unordered_map<const ir::ExprNode*, ir::Expr> sub;
    for (size_t i = 0; i < f->params.size(); ++i) sub[f->params[i].get()] = args[i];
    return substitute(FlattenComposites().mutate(f->body), sub);
  }
  // A multi-output region returned a tuple; its users read fields of the inlined tuple directly.
  ir::Expr rewrite_tuple_get_item(const ir::Expr& orig, const ir::TupleGetItemNode* t, ir::Expr tuple) override {
    if (auto* tu = tuple->as<ir::TupleNode>()) return tu->fields.at(static_cast<size_t>(t->index));
    return ir::ExprMutator::rewrite_tuple_get_item(orig, t, std::move(tuple));
  }

 private:
  const ir::Module& m_;
  const std::set<std::string>& symbols_;
};

// Calls of `symbol` become by's @main body over the call's arguments.
class ReplaceCalls : public ir::ExprMutator {
 public:
  ReplaceCalls(const std::string& symbol, const ir::FunctionNode& by) : symbol_(symbol), by_(by) {}

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    auto* g = c->callee ? c->callee->as<ir::GlobalVarNode>() : nullptr;
    if (!g || g->name != symbol_) return ir::ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
    SY_CHECK(args.size() == by_.params.size()) << "@" << symbol_ << " replaced by a function of another arity";
    std::unordered_map<const ir::ExprNode*, ir::Expr> sub;
    for (size_t i = 0; i < by_.params.size(); ++i) sub[by_.params[i].get()] = args[i];
    return substitute(by_.body, sub);
  }
  ir::Expr rewrite_tuple_get_item(const ir::Expr& orig, const ir::TupleGetItemNode* t, ir::Expr tuple) override {
    if (auto* tu = tuple->as<ir::TupleNode>()) return tu->fields.at(static_cast<size_t>(t->index));
    return ir::ExprMutator::rewrite_tuple_get_item(orig, t, std::move(tuple));
  }

 private:
  const std::string& symbol_;
  const ir::FunctionNode& by_;
};

}  // namespace

ir::Module replace_region(const ir::Module& m, const std::string& symbol, const ir::Module& by) {
  ir::Module out = m;
  const ir::FunctionNode& main = m.main();
  out.functions["main"] = ir::function(main.params, ReplaceCalls(symbol, by.main()).mutate(main.body), main.attrs);
  out.functions.erase(symbol);
  for (const auto& [name, fn] : by.functions) {
    if (name == "main") continue;
    SY_CHECK(!out.functions.count(name)) << "replacing @" << symbol << ": @" << name << " exists already";
    out.functions[name] = fn;
  }
  return out;
}

ir::Module inline_regions(const ir::Module& m, const std::set<std::string>& symbols) {
  if (symbols.empty()) return m;
  ir::Module out = m;
  const ir::FunctionNode& main = m.main();
  out.functions["main"] = ir::function(main.params, InlineCalls(m, symbols).mutate(main.body), main.attrs);
  for (const std::string& s : symbols) out.functions.erase(s);
  return out;
}

}  // namespace sy::partition
