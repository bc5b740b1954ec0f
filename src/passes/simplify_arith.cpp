#include "passes/simplify_arith.h"

#include <cmath>

#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "passes/conv_dead_taps.h"
#include "passes/conv_transpose_as_conv.h"

namespace sy::passes {

namespace {

// The values of a float constant of n elements as doubles, if e is one.
bool float_constant(const ir::Expr& e, int64_t n, std::vector<double>* out) {
  auto* k = e->as<ir::ConstantNode>();
  if (!k || k->value.numel() != n) return false;
  out->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (k->value.dtype() == DType::f32) (*out)[static_cast<size_t>(i)] = k->value.data<float>()[i];
    else if (k->value.dtype() == DType::f64) (*out)[static_cast<size_t>(i)] = k->value.data<double>()[i];
    else return false;
  }
  return true;
}

// Per-channel values as a constant that broadcasts along x's channel axis: (C, 1, ..., 1).
ir::Expr channel_constant(const std::vector<double>& v, DType t, size_t x_rank) {
  Shape shape{static_cast<int64_t>(v.size())};
  for (size_t d = 2; d < x_rank; ++d) shape.push_back(1);
  Tensor c = Tensor::uninitialized(t, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::f32) c.data<float>()[i] = static_cast<float>(v[i]);
    else c.data<double>()[i] = v[i];
  }
  return ir::constant(std::move(c));
}

// nn.batch_norm with constant statistics -> (x - mean) * k + bias with k = scale / sqrt(var + eps)
// computed here in double, as the reference kernel does: no sqrt and divide per element.
ir::Expr batch_norm_as_affine(const ir::CallNode& c, const std::vector<ir::Expr>& args) {
  if (args.size() != 5 || !ir::is_tensor(args[0]->type)) return nullptr;
  const ir::TypeNode& xt = ir::as_tensor(args[0]->type);
  if ((xt.dtype != DType::f32 && xt.dtype != DType::f64) || xt.shape.empty()) return nullptr;
  const int64_t C = xt.shape.size() >= 2 ? xt.shape[1] : xt.shape[0];
  std::vector<double> scale, bias, mean, var;
  if (!float_constant(args[1], C, &scale) || !float_constant(args[2], C, &bias) ||
      !float_constant(args[3], C, &mean) || !float_constant(args[4], C, &var))
    return nullptr;
  const double eps = c.attrs_as<ops::BatchNormAttrs>().epsilon;
  std::vector<double> k(scale.size());
  for (size_t i = 0; i < k.size(); ++i) k[i] = scale[i] / std::sqrt(var[i] + eps);
  const size_t rank = xt.shape.size();
  ir::Expr centered = ir::call(ops::OpCode::Sub, {args[0], channel_constant(mean, xt.dtype, rank)});
  ir::Expr scaled = ir::call(ops::OpCode::Mul, {centered, channel_constant(k, xt.dtype, rank)});
  ir::Expr out = ir::call(ops::OpCode::Add, {scaled, channel_constant(bias, xt.dtype, rank)});
  return ir::type_equal(out->type, c.type) ? out : nullptr;
}

// An average pool of a zero-padded plane, as exporters spell count_include_pad=True (Inception's
// 3x3 stride-1 pools): the pool pads itself, counting the padding, and the padded copy (a
// kernel of its own) is not made. The same windows, the same divisor (ceil_mode off: every
// window lies in the padded plane).
ir::Expr avg_pool_of_padding(const ir::CallNode& c, const std::vector<ir::Expr>& args) {
  auto* pad = args.size() == 1 ? args[0]->as<ir::CallNode>() : nullptr;
  if (!pad || !pad->is_op() || pad->op != ops::OpCode::Pad || pad->args.size() != 1) return nullptr;
  const auto& pa = pad->attrs_as<ops::PadAttrs>();
  const auto& a = c.attrs_as<ops::Pool2dAttrs>();
  if (pa.mode != "constant" || pa.value != 0.0 || pa.pads.size() != 8 || pa.pads[0] != 0 || pa.pads[1] != 0 ||
      pa.pads[4] != 0 || pa.pads[5] != 0)
    return nullptr;
  for (int64_t p : pa.pads)
    if (p < 0) return nullptr;  // a crop
  if (a.ceil_mode || a.padding != std::vector<int64_t>{0, 0, 0, 0} || a.dilation != std::vector<int64_t>{1, 1}) return nullptr;
  auto b = std::make_shared<ops::Pool2dAttrs>(a);
  b->padding = {pa.pads[2], pa.pads[3], pa.pads[6], pa.pads[7]};
  b->count_include_pad = true;
  ir::Expr out = ir::call(ops::OpCode::AvgPool2d, {pad->args[0]}, b);
  return ir::type_equal(out->type, c.type) ? out : nullptr;
}

class Simplifier : public ir::ExprMutator {
 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    std::vector<double> e;
    if (c->is_op() && c->op == ops::OpCode::Pow && args.size() == 2 && float_constant(args[1], 1, &e) && e[0] == 2.0 &&
        ir::type_equal(args[0]->type, c->type))
      return ir::call(ops::OpCode::Mul, {args[0], args[0]});
    if (c->is_op() && c->op == ops::OpCode::BatchNorm)
      if (ir::Expr affine = batch_norm_as_affine(*c, args)) return affine;
    if (c->is_op() && c->op == ops::OpCode::Conv2d)
      if (ir::Expr cut = conv_without_dead_taps(*c, args)) return cut;
    if (c->is_op() && c->op == ops::OpCode::ConvTranspose2d)
      if (ir::Expr conv = conv_transpose_as_conv(*c, args)) return conv;
    if (c->is_op() && c->op == ops::OpCode::AvgPool2d)
      if (ir::Expr pool = avg_pool_of_padding(*c, args)) return pool;
    return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
  }
};

}  // namespace

ir::Module simplify_arith(const ir::Module& m) {
  ir::Module out = m;
  for (auto& [name, fn] : out.functions) {
    auto* f = fn->as<ir::FunctionNode>();
    if (!f) continue;
    Simplifier s;
    ir::Expr body = s.mutate(f->body);
    if (body != f->body) fn = ir::function(f->params, std::move(body), f->attrs);
  }
  return out;
}

}  // namespace sy::passes
