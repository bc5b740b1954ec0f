#include "ops/flops.h"

#include <algorithm>

#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"

namespace sy::ops {
namespace {

int64_t numel_of(const ir::Type& t) {
  if (!t) return 0;
  if (t->kind == ir::TypeKind::Tensor) return shape_numel(t->shape);
  int64_t n = 0;
  if (t->kind == ir::TypeKind::Tuple)
    for (const auto& f : t->fields) n += numel_of(f);
  return n;
}

const Shape& arg_shape(const ir::CallNode& c, size_t i) { return ir::shape_of(c.args.at(i)); }

}  // namespace

int64_t op_flops(const ir::CallNode& c) {
  SY_CHECK(c.is_op()) << "op_flops of a function call";
  int64_t out = numel_of(c.type);
  switch (c.op) {
    case OpCode::Conv2d: {
      const Shape& w = arg_shape(c, 1);  // OIHW: I is already Cin / groups
      return 2 * out * w[1] * w[2] * w[3];
    }
    case OpCode::ConvTranspose2d: {
      const Shape& x = arg_shape(c, 0);
      const Shape& w = arg_shape(c, 1);  // IOHW: O is Cout / groups
      return 2 * shape_numel(x) * w[1] * w[2] * w[3];
    }
    case OpCode::MatMul: {
      const Shape& a = arg_shape(c, 0);
      return 2 * out * (a.empty() ? 1 : a.back());
    }
    case OpCode::Dense: return 2 * out * arg_shape(c, 0).back();
    case OpCode::BatchNorm: return 2 * out;
    case OpCode::LayerNorm:
    case OpCode::InstanceNorm: return 5 * out;
    case OpCode::Softmax:
    case OpCode::LogSoftmax: return 3 * out;
    case OpCode::LRN: return 2 * c.attrs_as<LRNAttrs>().size * out;
    case OpCode::MaxPool2d:
    case OpCode::AvgPool2d:
    case OpCode::LpPool2d: {
      const auto& a = c.attrs_as<Pool2dAttrs>();
      int64_t window = 1;
      for (int64_t k : a.kernel) window *= k;
      return out * window;
    }
    case OpCode::GlobalAvgPool2d:
    case OpCode::GlobalMaxPool2d:
    case OpCode::CumSum:
      return shape_numel(arg_shape(c, 0));
    case OpCode::Identity: return 0;
    case OpCode::Resize2d: return out;
    case OpCode::GridSample: return out;
    case OpCode::RoiAlign: {  // four taps per sample; adaptive sampling counted as one per bin side
      const auto& a = c.attrs_as<RoiAlignAttrs>();
      const int64_t s = std::max<int64_t>(a.sampling_ratio, 1);
      return 8 * out * s * s;
    }
    case OpCode::MaxRoiPool: return out;
    case OpCode::Det: {  // LU: 2/3 M^3 per matrix
      const int64_t m = arg_shape(c, 0).back();
      return std::max<int64_t>(out, 1) * 2 * m * m * m / 3;
    }
    default: break;
  }
  switch (op_def(c.op).kind) {
    case OpKind::Elemwise:
    case OpKind::Broadcast: return out;
    case OpKind::Reduce: return shape_numel(arg_shape(c, 0));  // reductions, argmax/argmin
    default: break;
  }
  if (c.op == OpCode::TopK) return shape_numel(arg_shape(c, 0));
  return 0;  // data movement and the remaining opaque ops (scatter)
}

}  // namespace sy::ops
