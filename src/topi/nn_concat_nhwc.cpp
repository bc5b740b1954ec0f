// concatenate.nhwc: a concatenation along the channels of 4-d tensors, written NHWC, so that a
// chain of NHWC convolutions (conv2d.nhwc) can run through it without a reorder. DenseNet's dense
// blocks are such chains: every layer concatenates the block's features, normalizes them (its
// batch norm and ReLU fused here) and feeds a 1x1 then a 3x3 conv, whose 32 output channels
// NHWC fills whole vectors on every plane (the NCHW convs left lanes empty on 14x14 and 7x7 and
// split 7 rows between two threads).
//
// Each input is a whole number of vectors of channels, so that a vector of the result reads one
// input: the selects compare the channel's vector index, which the simplifier folds once the
// channels are split by vectors, and the loop over a row's pixels runs inside one input's range.
#include <functional>

#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "topi/nn_util.h"
#include "topi/util.h"

namespace sy::topi::nn {

namespace {

// The lanes of a vector of channels every input fills whole, or 0 (see nhwc_lanes).
int64_t concat_lanes(const ir::CallNode& c, const target::Target& t) {
  if (c.attrs_as<ops::AxisAttrs>().axis != 1 || !ir::is_tensor(c.type)) return 0;
  const ir::TypeNode& y = ir::as_tensor(c.type);
  if (y.shape.size() != 4 || y.dtype != DType::f32) return 0;
  int64_t L = nhwc_lanes(y.shape[1], t);
  for (const ir::Expr& a : c.args) {
    const ir::TypeNode& x = ir::as_tensor(a->type);
    if (x.shape.size() != 4) return 0;
    while (L > 0 && x.shape[1] % L != 0) L = L > 8 ? 8 : 0;
  }
  return L;
}

std::string why_not_concat_nhwc(const ir::CallNode& c, const target::Target& t) {
  if (c.attrs_as<ops::AxisAttrs>().axis != 1 || !ir::is_tensor(c.type) || ir::as_tensor(c.type).shape.size() != 4)
    return "not a concatenation of 4-d tensors along the channels";
  if (ir::as_tensor(c.type).dtype != DType::f32) return "not f32";
  if (concat_lanes(c, t) == 0) return "an input's channels are not whole vectors of " + std::to_string(t.vector_lanes()) + " or 8";
  return "";
}

std::vector<Tensor> concat_nhwc(const ir::CallNode& c, const std::vector<Tensor>& in, const target::Target& t) {
  const std::string why = why_not_concat_nhwc(c, t);
  if (!why.empty()) throw Error("concatenate.nhwc: " + why);
  const int64_t L = concat_lanes(c, t);
  const ConcatParts cp = concat_parts(in, 1);
  const std::vector<Tensor>& parts = cp.parts;
  const std::vector<int64_t>& begin = cp.begin;
  return {te::compute(out_shape(c), [&](Expr n, Expr ch, Expr h, Expr w) {
    const Expr vec = ch / idx(L);
    // A binary tree of selects: log2(inputs) compares per vector (DenseNet's last layers join 32).
    std::function<Expr(size_t, size_t)> pick = [&](size_t lo, size_t hi) -> Expr {
      if (hi - lo == 1) return parts[lo](n, ch - idx(begin[lo]), h, w);
      const size_t mid = (lo + hi) / 2;
      return tir::select(vec < idx(begin[mid] / L), pick(lo, mid), pick(mid, hi));
    };
    return pick(0, parts.size());
  }, "concatenate")};
}

// Stored NHWC: per row, each vector of channels over the row's pixels (one input per vector, the
// same for the whole row), the rows split between the threads as the convs around split them.
// Stored plain (the result leaves the chain): the injective schedule's.
void schedule_concat_nhwc(GroupSchedule& g) {
  const int64_t L = g.anchor ? concat_lanes(*g.anchor, *g.target) : 0;
  if (g.outputs.size() != 1 || g.outputs[0].name() != kNhwcStoreStage || L == 0 || !inline_all_but(g, {}))
    return schedule_injective(g, /*by_rows=*/true);
  te::Stage& out = (*g.sch)[g.outputs[0]];
  const te::Axis n = out.leaves()[0], h = out.leaves()[1], w = out.leaves()[2], ch = out.leaves()[3];
  auto [cb, ci] = out.split(ch, L);
  out.reorder({n, h, cb, w, ci});
  out.vectorize(ci);
  const te::Axis rows = out.fuse(n, h);
  if (numel(g.outputs[0].shape()) >= 16384) out.parallel(rows);
}

// Every input of the concatenation and its result, each kept or plain. Where they differ, the
// kernel reorders a lane at a time (a kept input read into a plain result is gathered; a plain
// input into a kept result, read across planes): a chain's end or entry pays its reorder once.
KeptLayoutSupport concat_layouts(const ir::FunctionNode& fn, const target::Target& t) {
  KeptLayoutSupport s;
  const ir::CallNode* cat = nullptr;
  for (const ir::Expr& e : ir::post_order(fn.body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && c->op == ops::OpCode::Concat) {
      if (cat) return s;
      cat = c;
    }
  if (!cat || !why_not_concat_nhwc(*cat, t).empty() || !ir::is_tensor(fn.body->type)) return s;
  const Shape& y = ir::as_tensor(fn.body->type).shape;
  if (y != ir::as_tensor(cat->type).shape) return s;
  s.layout = kNhwcLayout;
  s.result = true;
  for (size_t i = 0; i < fn.params.size(); ++i)
    for (const ir::Expr& a : cat->args)
      if (a.get() == fn.params[i].get()) {
        s.params.push_back(static_cast<int>(i));
        break;
      }
  return s;
}

}  // namespace

void register_concat_nhwc(Registry& r) {
  OpImpl i;
  i.name = "concatenate.nhwc";
  i.compute = concat_nhwc;
  i.schedule = schedule_concat_nhwc;
  i.why_not = why_not_concat_nhwc;
  // Last by priority: with plain inputs and result the NCHW concatenation copies whole planes.
  i.priority = [](const ir::CallNode&, const target::Target&) { return 1; };
  i.kept_layouts = concat_layouts;
  // No chain role: taken where records measured it, kept and alone (tune times both). As a chain
  // member without records it made DenseNet-121 8% faster on 2 threads (22.2 -> 20.4 ms, Zen 5)
  // and Inception-v3 5%, but SqueezeNet 1.1 17% and GoogLeNet 6% slower on 1 thread: the chains'
  // ends gathered a lane per plane (SqueezeNet's classifier conv wrote 1000 planes so, 0.6 ->
  // 1.3 ms) and NHWC 3x3 convs of 192-320 outputs ran slower than the blocked NCHW ones.
  r.add(ops::OpCode::Concat, std::move(i));
}

}  // namespace sy::topi::nn
