// Lowering a fused function: computes op by op, the anchor's schedule, te::lower.
#include "ops/op.h"
#include "support/numbered.h"
#include "native/lower_function.h"

#include "native/plan.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/visitor.h"
#include "support/error.h"
#include "target/host.h"
#include "te/lower.h"
#include "strategy/strategy.h"
#include "topi/topi.h"

namespace sy::native {

namespace {

using Values = std::unordered_map<const ir::ExprNode*, std::vector<te::Tensor>>;

// The fused function's outputs computed op by op (value holds its parameters' tensors): the
// anchor by its implementation, the other ops by their defaults.
std::vector<te::Tensor> compute_by_op(const ir::FunctionNode& fn, const ir::CallNode* anchor, const topi::OpImpl* anchor_impl,
                                      const target::Target& tgt, Values& value, std::vector<te::Tensor>& anchor_outputs) {
  for (const ir::Expr& e : ir::post_order(fn.body)) {
    switch (e->kind) {
      case ir::ExprKind::Var:
        break;
      case ir::ExprKind::Constant: {
        // Scalars and small literals the fusion left inside: a compute returning the value.
        throw Error("native: constants inside a fused function are not supported (fuse_ops passes them as parameters)");
      }
      case ir::ExprKind::Call: {
        auto* c = e->as<ir::CallNode>();
        if (!c->is_op()) throw Error("native: a fused function may only call ops");
        const topi::OpImpl* impl = c == anchor ? anchor_impl : topi::find_default(*c, tgt);
        if (!impl) {
          if (topi::implementations(c->op).empty()) throw Error("native: no implementation of " + ops::op_name(c->op) + " yet");
          throw Error("native: no implementation of " + ops::op_name(c->op) + " applies to this call");
        }
        std::vector<te::Tensor> ins;
        for (const ir::Expr& a : c->args) {
          auto it = value.find(a.get());
          SY_CHECK(it != value.end() && it->second.size() == 1) << "fused op argument is not a tensor";
          ins.push_back(it->second[0]);
        }
        std::vector<te::Tensor> outs = impl->compute(*c, ins, tgt);
        size_t want = ir::is_tensor(e->type) ? 1 : e->type->fields.size();
        SY_CHECK(outs.size() == want) << ops::op_name(c->op) << ": compute returned " << outs.size() << " tensors, type has " << want;
        if (c == anchor) anchor_outputs = outs;
        value[e.get()] = std::move(outs);
        break;
      }
      case ir::ExprKind::Tuple: {
        std::vector<te::Tensor> fs;
        for (const ir::Expr& f : e->as<ir::TupleNode>()->fields) {
          const auto& v = value.at(f.get());
          fs.insert(fs.end(), v.begin(), v.end());
        }
        value[e.get()] = fs;
        break;
      }
      case ir::ExprKind::TupleGetItem: {
        auto* t = e->as<ir::TupleGetItemNode>();
        value[e.get()] = {value.at(t->tuple.get()).at(static_cast<size_t>(t->index))};
        break;
      }
      default:
        throw Error("native: unexpected node in a fused function");
    }
  }
  return value.at(fn.body.get());
}

}  // namespace

tir::PrimFunc lower_function(const ir::FunctionNode& fn, const std::string& name, const LowerFunctionOptions& opts) {
  const target::Target& tgt = opts.target ? *opts.target : target::host();
  SY_CHECK(tgt.kind == target::Kind::Cpu) << "lower_function for target " << tgt.str();
  const ir::CallNode* anchor = strategy::anchor_of(fn);
  // The anchor's implementation: the one the function names (a choice made by the strategy), or
  // the default; every other op of the group uses its default.
  const topi::OpImpl* anchor_impl = nullptr;
  if (anchor) {
    auto chosen = fn.attrs.find(strategy::kImplementationAttr);
    anchor_impl = chosen != fn.attrs.end() ? &strategy::require(*anchor, tgt, chosen->second)
                                           : topi::find_default(*anchor, tgt);
  }
  // A native implementation's kept layout is the buffers' own: kept parameters are placeholders
  // of the stored shape, read through a view; a kept result is stored so (an extern's library
  // reads and writes its layouts itself, through the plain placeholders' pointers).
  // Either NHWC or channel-blocked by B (nChw<B>c).
  std::optional<topi::KeptLayout> kept;
  int64_t B = 0;
  if (anchor_impl && anchor_impl->library.empty() && !anchor_impl->group_compute) {
    kept = topi::kept_layout_of(fn);
    if (kept) B = topi::blocked_layout_block(kept->layout);
    if (kept && ((kept->layout != topi::kNhwcLayout && B == 0) || !anchor_impl->kept_layouts))
      throw Error(anchor_impl->name + ": cannot keep layout '" + kept->layout + "'");
  }
  auto kept_tensor = [&](const ir::TypeNode& t) {
    if (t.shape.size() != 4 || (B > 0 && t.shape[1] % B != 0))
      throw Error(anchor_impl->name + ": keeps " + kept->layout + " only for 4-d tensors of whole blocks of channels");
  };
  Values value;
  std::vector<te::Tensor> args;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::TypeNode& t = ir::as_tensor(fn.params[i]->type);
    const bool stored = kept && std::count(kept->params.begin(), kept->params.end(), static_cast<int>(i));
    if (stored) kept_tensor(t);
    const Shape shape = !stored ? t.shape
                        : B > 0 ? Shape{t.shape[0], t.shape[1] / B, t.shape[2], t.shape[3], B}
                                : Shape{t.shape[0], t.shape[2], t.shape[3], t.shape[1]};
    te::Tensor p = te::placeholder(shape, t.dtype, numbered("p", static_cast<int64_t>(i)));
    value[fn.params[i].get()] = {!stored ? p : B > 0 ? topi::blocked_view(p) : topi::nchw_view(p)};
    args.push_back(p);
  }
  te::Knobs local_knobs;
  te::Knobs& knobs = opts.knobs ? *opts.knobs : local_knobs;
  if (auto k = fn.attrs.find(strategy::kKnobsAttr); k != fn.attrs.end()) knobs.set_all(k->second);
  std::vector<te::Tensor> anchor_outputs, outputs;
  if (anchor_impl && anchor_impl->group_compute)
    if (std::optional<std::vector<te::Tensor>> whole = anchor_impl->group_compute(fn, args, tgt)) {
      const size_t want = ir::is_tensor(fn.body->type) ? 1 : fn.body->type->fields.size();
      SY_CHECK(whole->size() == want) << anchor_impl->name << ": group_compute returned " << whole->size()
                                      << " tensors, the function has " << want;
      outputs = anchor_outputs = *whole;
    }
  if (outputs.empty()) outputs = compute_by_op(fn, anchor, anchor_impl, tgt, value, anchor_outputs);
  if (kept && kept->result) {
    if (outputs.size() != 1) throw Error(anchor_impl->name + ": keeps the layout of one result only");
    kept_tensor(ir::as_tensor(fn.body->type));
    outputs[0] = B > 0 ? topi::blocked_store(outputs[0], B) : topi::nhwc_store(outputs[0]);
  }
  te::Schedule sch(outputs);
  topi::GroupSchedule g;
  g.sch = &sch;
  g.outputs = outputs;
  g.anchor = anchor;
  g.anchor_outputs = anchor_outputs;
  g.knobs = &knobs;
  g.target = &tgt;
  g.vector_lanes = tgt.vector_lanes();
  g.vector_registers = tgt.vector_registers();
  if (anchor_impl && anchor_impl->schedule)
    anchor_impl->schedule(g);
  else
    topi::schedule_injective(g);
  args.insert(args.end(), outputs.begin(), outputs.end());
  tir::PrimFunc f = te::lower(sch, args, name);
  // The plan may put the result in an input's storage (an extern accumulating onto it).
  f.params_may_alias = fn.attrs.count(kInPlaceAttr) > 0;
  return f;
}

std::optional<std::string> random_knobs(const ir::FunctionNode& fn, const target::Target& t, std::mt19937_64& rng) {
  std::string fixed;
  LowerFunctionOptions lo;
  lo.target = &t;
  for (size_t drawn = 0;; ++drawn) {
    te::Knobs k;
    k.set_all(fixed);
    lo.knobs = &k;
    try {
      lower_function(fn, "probe", lo);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (drawn >= k.space().size()) return k.to_string();
    const te::Knobs::Knob& next = k.space()[drawn];
    fixed += (fixed.empty() ? "" : " ") + next.name + "=" + std::to_string(next.candidates[rng() % next.candidates.size()]);
  }
}

}  // namespace sy::native
