// Computes of the layout transforms and indexed reads: reshape, transpose, concatenate, split,
// strided_slice, take, gather_elements, gather_nd, broadcast_to, tile, trilu, one_hot. All are
// index functions (inlined into their consumers by the injective schedule). Indices read from
// tensors may be negative (counted from the end, as ONNX); an out-of-range index is an error, as
// in the reference (the kernel returns its fault code; see normalized_index).
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"
#include "topi/elementwise.h"
#include "topi/topi.h"
#include "topi/transform.h"
#include "topi/util.h"

namespace sy::topi {

using ops::OpCode;
using tir::int_imm;
using tir::select;

namespace {

using Idx = std::vector<Expr>;
using Computes = std::vector<te::Tensor>;

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// An index value read from a tensor, as int64, normalised into [0, dim) (negative counts from the
// end). Out of range, sy_checked_index (generated code's preamble) flags the kernel's fault
// "index out of range" and reads element 0 instead, so no read leaves the buffer.
Expr normalized_index(const Expr& v, int64_t dim) {
  Expr i = cast_value(DType::i64, v);
  i = select(i < int_imm(0), i + int_imm(dim), i);
  return tir::call("sy_checked_index", DType::i64, {i, int_imm(dim)});
}

Computes reshape(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  const Shape& out = result_type(call).shape;
  const auto ost = strides_of(out), ist = strides_of(x.shape());
  return {compute_like(call, "reshape", [&](const Idx& i) {
    Expr flat = int_imm(0);
    for (size_t d = 0; d < out.size(); ++d) flat = flat + i[d] * int_imm(ost[d]);
    Idx xi;
    for (size_t d = 0; d < x.ndim(); ++d) xi.push_back((flat / int_imm(ist[d])) % int_imm(x.shape()[d]));
    return x(xi);
  })};
}

Computes transpose(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  std::vector<int64_t> perm = call.attrs_as<ops::TransposeAttrs>().perm;
  if (perm.empty())
    for (int64_t d = static_cast<int64_t>(x.ndim()); d-- > 0;) perm.push_back(d);
  return {compute_like(call, "transpose", [&](const Idx& i) {
    Idx xi(x.ndim());
    for (size_t d = 0; d < perm.size(); ++d) xi[static_cast<size_t>(perm[d])] = i[d];
    return x(xi);
  })};
}

Computes concat(const ir::CallNode& call, const Computes& in) {
  const size_t axis = static_cast<size_t>(call.attrs_as<ops::AxisAttrs>().axis);
  const ConcatParts cp = concat_parts(in, axis);
  const std::vector<te::Tensor>& parts = cp.parts;
  const std::vector<int64_t>& begin = cp.begin;
  return {compute_like(call, "concatenate", [&](const Idx& i) {
    // The last operand whose range starts at or before i[axis].
    Expr v;
    for (size_t k = 0; k < parts.size(); ++k) {
      Idx xi = i;
      xi[axis] = i[axis] - int_imm(begin[k]);
      Expr r = parts[k](xi);
      v = v ? select(i[axis] < int_imm(begin[k]), v, r) : r;
    }
    return v;
  })};
}

Computes split(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  const auto& a = call.attrs_as<ops::SplitAttrs>();
  const size_t axis = static_cast<size_t>(a.axis);
  Computes outs;
  int64_t begin = 0;
  for (size_t k = 0; k < a.sizes.size(); ++k) {
    outs.push_back(te::compute(result_field(call, k).shape, [&, begin](const Idx& i) {
      Idx xi = i;
      xi[axis] = i[axis] + int_imm(begin);
      return x(xi);
    }, "split" + std::to_string(k)));
    begin += a.sizes[k];
  }
  return outs;
}

Computes strided_slice(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  const auto& a = call.attrs_as<ops::StridedSliceAttrs>();
  return {compute_like(call, "strided_slice", [&](const Idx& i) {
    Idx xi;
    for (size_t d = 0; d < i.size(); ++d) xi.push_back(int_imm(a.begin[d]) + i[d] * int_imm(a.strides[d]));
    return x(xi);
  })};
}

Computes take(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0), idx = in.at(1);
  const size_t axis = static_cast<size_t>(call.attrs_as<ops::AxisAttrs>().axis);
  const size_t q = idx.ndim();
  const int64_t dim = x.shape()[axis];
  return {compute_like(call, "take", [&](const Idx& i) {
    Idx ii(i.begin() + static_cast<ptrdiff_t>(axis), i.begin() + static_cast<ptrdiff_t>(axis + q));
    Idx xi(i.begin(), i.begin() + static_cast<ptrdiff_t>(axis));
    xi.push_back(normalized_index(idx(ii), dim));
    xi.insert(xi.end(), i.begin() + static_cast<ptrdiff_t>(axis + q), i.end());
    return x(xi);
  })};
}

Computes gather_elements(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0), idx = in.at(1);
  const size_t axis = static_cast<size_t>(call.attrs_as<ops::AxisAttrs>().axis);
  return {compute_like(call, "gather_elements", [&](const Idx& i) {
    Idx xi = i;
    xi[axis] = normalized_index(idx(i), x.shape()[axis]);
    return x(xi);
  })};
}

Computes gather_nd(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0), idx = in.at(1);
  const size_t b = static_cast<size_t>(call.attrs_as<ops::BatchDimsAttrs>().batch_dims);
  const size_t q = idx.ndim();
  const size_t m = static_cast<size_t>(idx.shape().back());
  return {compute_like(call, "gather_nd", [&](const Idx& i) {
    // Output axes: indices.shape[:-1] (the first b of them batch axes), then data.shape[b+m:].
    Idx tuple(i.begin(), i.begin() + static_cast<ptrdiff_t>(q - 1));
    Idx xi(i.begin(), i.begin() + static_cast<ptrdiff_t>(b));
    for (size_t j = 0; j < m; ++j) {
      Idx ii = tuple;
      ii.push_back(int_imm(static_cast<int64_t>(j)));
      xi.push_back(normalized_index(idx(ii), x.shape()[b + j]));
    }
    xi.insert(xi.end(), i.begin() + static_cast<ptrdiff_t>(q - 1), i.end());
    return x(xi);
  })};
}

Computes broadcast_to(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  return {compute_like(call, "broadcast_to", [&](const Idx& i) { return broadcast_read(x, i); })};
}

Computes tile(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  return {compute_like(call, "tile", [&](const Idx& i) {
    Idx xi;
    for (size_t d = 0; d < i.size(); ++d) xi.push_back(x.shape()[d] == 1 ? int_imm(0) : i[d] % int_imm(x.shape()[d]));
    return x(xi);
  })};
}

Computes trilu(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  const auto& a = call.attrs_as<ops::TriluAttrs>();
  if (x.ndim() < 2) throw Error("trilu: expects a tensor of rank >= 2, got " + shape_str(x.shape()));
  return {compute_like(call, "trilu", [&](const Idx& i) {
    const size_t r = i.size();
    Expr diff = i[r - 1] - i[r - 2];
    Expr keep = a.upper ? diff >= int_imm(a.k) : diff <= int_imm(a.k);
    return select(keep, x(i), cst(x.dtype(), 0));
  })};
}

Computes one_hot(const ir::CallNode& call, const Computes& in) {
  const te::Tensor idx = in.at(0), values = in.at(1);
  const auto& a = call.attrs_as<ops::OneHotAttrs>();
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t depth = a.depth;
  return {compute_like(call, "one_hot", [&](const Idx& i) {
    Idx ii = i;
    ii.erase(ii.begin() + static_cast<ptrdiff_t>(axis));
    Expr v = idx.ndim() == 0 ? idx(Idx{}) : idx(ii);
    // static_cast<int64_t> of the value as a double (truncation), negative counts from the end.
    Expr iv = is_float(v->dtype) ? cast_value(DType::i64, v) : tir::cast(DType::i64, v);
    iv = select(iv < int_imm(0), iv + int_imm(depth), iv);
    return select(tir::eq(iv, i[axis]), values(int_imm(1)), values(int_imm(0)));
  })};
}

}  // namespace

void register_transform_computes(Registry& r) {
  auto add = [&](OpCode op, Computes (*f)(const ir::CallNode&, const Computes&)) {
    OpImpl impl;
    impl.compute = f;
    r.add(op, std::move(impl));
  };
  add(OpCode::Reshape, reshape);
  add(OpCode::Transpose, transpose);
  {
    // DenseNet's concatenations gather values written by convs that split their planes by rows
    // and feed another such conv: by rows as well (on two CCDs 3.19 -> 2.61 ms per run of its 62
    // concatenations, 2 threads; EfficientNet-B0's excitation multiplies, after depthwise convs
    // split by channels, were 5% slower so, so the other injective kernels keep the channels).
    OpImpl impl;
    impl.compute = concat;
    impl.schedule = [](GroupSchedule& g) { schedule_injective(g, /*by_rows=*/true); };
    r.add(OpCode::Concat, std::move(impl));
  }
  add(OpCode::Split, split);
  add(OpCode::StridedSlice, strided_slice);
  add(OpCode::Gather, take);
  add(OpCode::GatherElements, gather_elements);
  add(OpCode::GatherND, gather_nd);
  add(OpCode::BroadcastTo, broadcast_to);
  add(OpCode::Tile, tile);
  add(OpCode::Trilu, trilu);
  add(OpCode::OneHot, one_hot);
}

}  // namespace sy::topi
