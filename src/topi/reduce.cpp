// Computes of the reductions (sum, mean, max, min, prod, l1, l2, sum-square, log-sum,
// log-sum-exp), argmax/argmin and topk, numerically as the reference kernels
// (backends/reference/kernels_reduce.cpp): floats accumulate in double, integer sums wrap, max/min
// and arg reductions let NaN win, log-sum-exp subtracts the maximum. prod and topk's ordering are
// extern stages (extern_kernels.cpp).
#include <algorithm>
#include <limits>

#include "ops/op.h"
#include "support/numbered.h"
#include "ops/attrs.h"
#include "support/error.h"
#include "topi/elementwise.h"
#include "topi/extern_kernels.h"
#include "topi/reduce.h"
#include "topi/topi.h"
#include "topi/util.h"

namespace sy::topi {

using ops::OpCode;
using tir::cast;
using tir::int_imm;
using tir::select;

namespace {

using Idx = std::vector<Expr>;
using Computes = std::vector<te::Tensor>;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// One reduction of x over `axes` into `out_shape` (keepdims: reduced axes kept as 1). source maps
// the input value to the value reduced; it also gets the output indices (to read other stages).
te::Tensor reduce_stage(const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims, const Shape& out_shape,
                        tir::ReduceKind kind, const std::function<Expr(const Expr& v, const Idx& out)>& source,
                        const std::string& name) {
  std::vector<bool> reduced(x.ndim(), false);
  for (int64_t a : axes) reduced.at(static_cast<size_t>(a)) = true;
  std::vector<tir::IterVar> rv;
  std::vector<Expr> rvar(x.ndim());
  for (size_t d = 0; d < x.ndim(); ++d)
    if (reduced[d]) {
      rv.push_back(te::reduce_axis(x.shape()[d], numbered("r", static_cast<int64_t>(d))));
      rvar[d] = rv.back().var;
    }
  if (rv.empty()) rv.push_back(te::reduce_axis(1, "r"));  // reduces nothing: one element
  return te::compute(out_shape, [&](const Idx& i) {
    Idx xi;
    size_t k = 0;
    for (size_t d = 0; d < x.ndim(); ++d) {
      if (reduced[d]) {
        xi.push_back(rvar[d]);
        if (keepdims) ++k;
      } else {
        xi.push_back(i[k++]);
      }
    }
    return tir::reduce(kind, source(x(xi), i), rv);
  }, name);
}

// The reference's conversion of a double result to T: floats cast; integers NaN -> 0, clamped to
// +-9.2e18, truncated.
Expr from_double(DType t, const Expr& r) {
  if (is_float(t)) return cast(t, r);
  Expr c = tir::max(tir::float_imm(-9.2e18, DType::f64), tir::min(r, tir::float_imm(9.2e18, DType::f64)));
  return select(is_nan(r), cst(t, 0), cast_value(t, c));
}

Computes reduce(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  const auto& a = call.attrs_as<ops::ReduceAttrs>();
  const Shape& out = result_type(call).shape;
  const DType t = x.dtype();
  const std::string name = ops::op_name(call.op);
  int64_t R = 1;
  for (int64_t ax : a.axes) R *= x.shape().at(static_cast<size_t>(ax));
  auto stage = [&](tir::ReduceKind k, const std::function<Expr(const Expr&, const Idx&)>& src, const std::string& n) {
    return reduce_stage(x, a.axes, a.keepdims, out, k, src, n);
  };
  auto dbl = [](const Expr& v) { return cast(DType::f64, v); };
  auto finish = [&](const std::function<Expr(const Idx&)>& f) { return Computes{te::compute(out, f, name)}; };
  using tir::ReduceKind;
  switch (call.op) {
    case OpCode::ReduceSum:
      if (!is_float(t)) return {stage(ReduceKind::Sum, [](const Expr& v, const Idx&) { return v; }, name)};
      [[fallthrough]];
    case OpCode::ReduceMean:
    case OpCode::ReduceL1:
    case OpCode::ReduceL2:
    case OpCode::ReduceSumSquare:
    case OpCode::ReduceLogSum: {
      const OpCode op = call.op;
      te::Tensor s = stage(ReduceKind::Sum, [&](const Expr& v, const Idx&) {
        Expr d = dbl(v);
        if (op == OpCode::ReduceL1) return tir::abs(d);
        if (op == OpCode::ReduceL2 || op == OpCode::ReduceSumSquare) return d * d;
        return d;
      }, name + ".acc");
      if (t == DType::f64 && (op == OpCode::ReduceSum || op == OpCode::ReduceL1 || op == OpCode::ReduceSumSquare))
        return {s};
      return finish([&, op](const Idx& i) {
        Expr r = s(i);
        if (op == OpCode::ReduceMean) r = r / tir::float_imm(static_cast<double>(R), DType::f64);
        if (op == OpCode::ReduceL2) r = tir::sqrt(r);
        if (op == OpCode::ReduceLogSum) r = tir::log(r);
        return from_double(t, r);
      });
    }
    case OpCode::ReduceMax:
    case OpCode::ReduceMin: {
      const ReduceKind k = call.op == OpCode::ReduceMax ? ReduceKind::Max : ReduceKind::Min;
      te::Tensor m = stage(k, [](const Expr& v, const Idx&) { return v; }, is_float(t) ? name + ".acc" : name);
      if (!is_float(t)) return {m};
      // NaN wins (as np.maximum.reduce): a second reduction flags rows holding one.
      te::Tensor nan = stage(ReduceKind::Max, [](const Expr& v, const Idx&) {
        return select(is_nan(v), int_imm(1, DType::u8), int_imm(0, DType::u8));
      }, name + ".nan");
      return finish([&](const Idx& i) {
        return select(tir::ne(nan(i), int_imm(0, DType::u8)), tir::float_imm(kNaN, t), m(i));
      });
    }
    case OpCode::ReduceLogSumExp: {
      // m: the maximum ignoring NaN (std::max(m, v) keeps m when v is NaN).
      te::Tensor m = stage(ReduceKind::Max, [&](const Expr& v, const Idx&) {
        Expr d = dbl(v);
        return select(is_nan(d), tir::float_imm(-kInf, DType::f64), d);
      }, name + ".max");
      // Finite m: sum of exp(v - m). Infinite m: the answer is m unless a NaN is present, which
      // the sum then carries.
      te::Tensor s = stage(ReduceKind::Sum, [&](const Expr& v, const Idx& i) {
        Expr d = dbl(v), mi = m(i);
        Expr inf_case = select(is_nan(d), d, tir::float_imm(0, DType::f64));
        return select(tir::call("isinf", DType::boolean, {mi}), inf_case, tir::exp(d - mi));
      }, name + ".acc");
      return finish([&](const Idx& i) {
        Expr mi = m(i), si = s(i);
        Expr r = select(tir::call("isinf", DType::boolean, {mi}), select(is_nan(si), si, mi), mi + tir::log(si));
        return from_double(t, r);
      });
    }
    case OpCode::ReduceProd: {
      int64_t mask = 0;
      for (int64_t ax : a.axes) mask |= int64_t{1} << ax;
      if (static_cast<int64_t>(x.ndim()) > kExternMaxRank)
        throw Error("prod: rank " + std::to_string(x.ndim()) + " is above the native path's limit of " +
                    std::to_string(kExternMaxRank));
      std::vector<Expr> args = {int_imm(static_cast<int64_t>(t)), int_imm(static_cast<int64_t>(x.ndim())), int_imm(mask)};
      for (int64_t d = 0; d < kExternMaxRank; ++d)
        args.push_back(int_imm(d < static_cast<int64_t>(x.ndim()) ? x.shape()[static_cast<size_t>(d)] : 1));
      return {te::extern_op(name, out, t, {x}, "sy_topi_reduce_prod", args)};
    }
    default: break;
  }
  SY_CHECK(false) << "reduce called for " << name;
  return {};
}

// argmax/argmin: the extreme value m (NaN ignored), then the winning index by one integer max
// over a score: NaN ranks 2, m ranks 1, others 0; ties go to the first (or last) index.
Computes arg_reduce(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  const auto& a = call.attrs_as<ops::ArgReduceAttrs>();
  const Shape& out = result_type(call).shape;
  const DType t = x.dtype();
  const bool is_max = call.op == OpCode::ArgMax;
  const std::string name = ops::op_name(call.op);
  const int64_t D = x.shape().at(static_cast<size_t>(a.axis));
  const std::vector<int64_t> axes = {a.axis};
  te::Tensor m = reduce_stage(x, axes, a.keepdims, out, is_max ? tir::ReduceKind::Max : tir::ReduceKind::Min,
                              [&](const Expr& v, const Idx&) {
                                if (!is_float(t)) return v;
                                return select(is_nan(v), tir::float_imm(is_max ? -kInf : kInf, t), v);
                              }, name + ".value");
  tir::IterVar r = te::reduce_axis(D, "r");
  te::Tensor score = te::compute(out, [&](const Idx& i) {
    Idx xi;
    size_t k = 0;
    for (size_t d = 0; d < x.ndim(); ++d) {
      if (static_cast<int64_t>(d) == a.axis) {
        xi.push_back(r.var);
        if (a.keepdims) ++k;
      } else {
        xi.push_back(i[k++]);
      }
    }
    Expr v = x(xi);
    Expr key = select(tir::eq(v, m(i)), int_imm(1), int_imm(0));
    if (is_float(t)) key = select(is_nan(v), int_imm(2), key);
    Expr pos = a.select_last_index ? r.var : int_imm(D - 1) - r.var;
    return tir::reduce(tir::ReduceKind::Max, key * int_imm(D) + pos, {r});
  }, name + ".score");
  return {te::compute(out, [&](const Idx& i) {
    Expr p = score(i) % int_imm(D);
    return a.select_last_index ? p : int_imm(D - 1) - p;
  }, name)};
}

// topk: the order (indices) from an extern stage, the values read through it.
Computes topk(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  const auto& a = call.attrs_as<ops::TopKAttrs>();
  const size_t axis = static_cast<size_t>(a.axis);
  const Shape& s = x.shape();
  if (a.k < 0 || a.k > s[axis])
    throw Error("topk: k = " + std::to_string(a.k) + " is out of range for an axis of size " + std::to_string(s[axis]));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  const Shape& out = result_field(call, 1).shape;
  te::Tensor idx = te::extern_op("topk_indices", out, DType::i64, {x}, "sy_topi_topk_indices",
                                 {int_imm(static_cast<int64_t>(x.dtype())), int_imm(outer), int_imm(s[axis]),
                                  int_imm(inner), int_imm(a.k), int_imm(a.largest)});
  te::Tensor values = te::compute(out, [&](const Idx& i) {
    Idx xi = i;
    xi[axis] = idx(i);
    return x(xi);
  }, "topk_values");
  return {values, idx};
}

}  // namespace

void register_reduce_computes(Registry& r) {
  auto add = [&](OpCode op, Computes (*f)(const ir::CallNode&, const Computes&)) {
    OpImpl impl;
    impl.compute = f;
    r.add(op, std::move(impl));
  };
  for (OpCode op : {OpCode::ReduceSum, OpCode::ReduceMean, OpCode::ReduceMax, OpCode::ReduceMin, OpCode::ReduceProd,
                    OpCode::ReduceL1, OpCode::ReduceL2, OpCode::ReduceSumSquare, OpCode::ReduceLogSum,
                    OpCode::ReduceLogSumExp})
    add(op, reduce);
  add(OpCode::ArgMax, arg_reduce);
  add(OpCode::ArgMin, arg_reduce);
  add(OpCode::TopK, topk);
}

}  // namespace sy::topi
