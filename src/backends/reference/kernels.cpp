// eval_op: dispatches every built-in op to its reference kernel. The switch has no default so
// that adding an op to op_list.def without a kernel is a compiler warning (-Wswitch).
#include "backends/reference/kernels.h"

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference {

using namespace detail;  // NOLINT: the kernel entry points
using ops::OpCode;

namespace {

std::vector<Tensor> dispatch(OpCode op, const ir::Attrs& at, const Args& a, const ir::Type& t) {
  switch (op) {
    case OpCode::Neg: case OpCode::Abs: case OpCode::Exp: case OpCode::Log: case OpCode::Sqrt:
    case OpCode::Reciprocal: case OpCode::Sin: case OpCode::Cos: case OpCode::Tan: case OpCode::Asin:
    case OpCode::Acos: case OpCode::Atan: case OpCode::Sinh: case OpCode::Cosh: case OpCode::Asinh:
    case OpCode::Acosh: case OpCode::Atanh: case OpCode::Tanh: case OpCode::Sigmoid: case OpCode::Relu:
    case OpCode::Erf: case OpCode::Floor: case OpCode::Ceil: case OpCode::Round: case OpCode::Sign:
    case OpCode::LogicalNot: case OpCode::IsNaN: case OpCode::IsInf: case OpCode::Identity:
    case OpCode::Softplus: case OpCode::Softsign: case OpCode::Gelu: case OpCode::HardSigmoid:
    case OpCode::HardSwish: case OpCode::LeakyRelu: case OpCode::Elu: case OpCode::Celu: case OpCode::Selu:
    case OpCode::ThresholdedRelu: case OpCode::Mish: case OpCode::Clip: case OpCode::Cast:
      return {unary(op, at, a.at(0), t)};

    case OpCode::Add: case OpCode::Sub: case OpCode::Mul: case OpCode::Div: case OpCode::Pow:
    case OpCode::Maximum: case OpCode::Minimum: case OpCode::Mod: case OpCode::PRelu: case OpCode::Equal:
    case OpCode::Less: case OpCode::LessEqual: case OpCode::Greater: case OpCode::GreaterEqual:
    case OpCode::LogicalAnd: case OpCode::LogicalOr: case OpCode::LogicalXor:
      return {binary(op, at, a.at(0), a.at(1), t)};
    case OpCode::Where: return {where(a.at(0), a.at(1), a.at(2), t)};

    case OpCode::Conv2d: return {conv2d(attrs_as<ops::Conv2dAttrs>(at), a, t)};
    case OpCode::ConvTranspose2d: return {conv2d_transpose(attrs_as<ops::ConvTranspose2dAttrs>(at), a, t)};
    case OpCode::MatMul: return {matmul(a.at(0), a.at(1), t)};
    case OpCode::Dense: return {dense(a, t)};
    case OpCode::BatchNorm: return {batch_norm(attrs_as<ops::BatchNormAttrs>(at), a, t)};
    case OpCode::LayerNorm: return {layer_norm(attrs_as<ops::LayerNormAttrs>(at), a, t)};
    case OpCode::InstanceNorm: return {instance_norm(attrs_as<ops::EpsilonAttrs>(at), a, t)};
    case OpCode::LRN: return {lrn(attrs_as<ops::LRNAttrs>(at), a.at(0), t)};
    case OpCode::Softmax: return {softmax(false, attrs_as<ops::AxisAttrs>(at), a.at(0), t)};
    case OpCode::LogSoftmax: return {softmax(true, attrs_as<ops::AxisAttrs>(at), a.at(0), t)};
    case OpCode::MaxPool2d: case OpCode::AvgPool2d: case OpCode::LpPool2d:
      return {pool2d(op, attrs_as<ops::Pool2dAttrs>(at), a.at(0), t)};
    case OpCode::GlobalAvgPool2d: case OpCode::GlobalMaxPool2d: return {global_pool2d(op, a.at(0), t)};
    case OpCode::Pad: return {pad(attrs_as<ops::PadAttrs>(at), a.at(0), t)};
    case OpCode::DepthToSpace: return {depth_to_space(attrs_as<ops::DepthToSpaceAttrs>(at), a.at(0), t)};
    case OpCode::SpaceToDepth: return {space_to_depth(attrs_as<ops::BlockSizeAttrs>(at), a.at(0), t)};
    case OpCode::Resize2d: return {resize2d(attrs_as<ops::Resize2dAttrs>(at), a.at(0), t)};
    case OpCode::GridSample: return {grid_sample(attrs_as<ops::GridSampleAttrs>(at), a.at(0), a.at(1), t)};
    case OpCode::RoiAlign: return {roi_align(attrs_as<ops::RoiAlignAttrs>(at), a.at(0), a.at(1), a.at(2), t)};
    case OpCode::MaxRoiPool: return {max_roi_pool(attrs_as<ops::MaxRoiPoolAttrs>(at), a.at(0), a.at(1), t)};

    case OpCode::Reshape: return {reshape(a.at(0), t)};
    case OpCode::Transpose: return {transpose(attrs_as<ops::TransposeAttrs>(at), a.at(0), t)};
    case OpCode::Concat: return {concat(attrs_as<ops::AxisAttrs>(at), a, t)};
    case OpCode::Split: return split(attrs_as<ops::SplitAttrs>(at), a.at(0), t);
    case OpCode::StridedSlice: return {strided_slice(attrs_as<ops::StridedSliceAttrs>(at), a.at(0), t)};
    case OpCode::Gather: return {take(attrs_as<ops::AxisAttrs>(at), a.at(0), a.at(1), t)};
    case OpCode::GatherElements: return {gather_elements(attrs_as<ops::AxisAttrs>(at), a.at(0), a.at(1), t)};
    case OpCode::GatherND: return {gather_nd(attrs_as<ops::BatchDimsAttrs>(at), a.at(0), a.at(1), t)};
    case OpCode::BroadcastTo: return {broadcast_to(a.at(0), t)};
    case OpCode::Tile: return {tile(attrs_as<ops::RepsAttrs>(at), a.at(0), t)};
    case OpCode::Trilu: return {trilu(attrs_as<ops::TriluAttrs>(at), a.at(0), t)};
    case OpCode::OneHot: return {one_hot(attrs_as<ops::OneHotAttrs>(at), a.at(0), a.at(1), t)};
    case OpCode::CumSum: return {cumsum(attrs_as<ops::CumSumAttrs>(at), a.at(0), t)};
    case OpCode::Det: return {det(a.at(0), t)};
    case OpCode::ScatterElements: return {scatter_elements(attrs_as<ops::ScatterAttrs>(at), a, t)};
    case OpCode::ScatterND: return {scatter_nd(attrs_as<ops::ScatterAttrs>(at), a, t)};

    case OpCode::ReduceSum: case OpCode::ReduceMean: case OpCode::ReduceMax: case OpCode::ReduceMin:
    case OpCode::ReduceProd: case OpCode::ReduceL1: case OpCode::ReduceL2: case OpCode::ReduceSumSquare:
    case OpCode::ReduceLogSum: case OpCode::ReduceLogSumExp:
      return {reduce(op, attrs_as<ops::ReduceAttrs>(at), a.at(0), t)};
    case OpCode::ArgMax: case OpCode::ArgMin: return {arg_reduce(op, attrs_as<ops::ArgReduceAttrs>(at), a.at(0), t)};
    case OpCode::TopK: return topk(attrs_as<ops::TopKAttrs>(at), a.at(0), t);

    case OpCode::kCount: break;
  }
  SY_CHECK(false) << "eval_op: invalid op code " << static_cast<int>(op);
  return {};
}

}  // namespace

std::vector<Tensor> eval_op(OpCode op, const ir::Attrs& attrs, const std::vector<Tensor>& args,
                            const ir::Type& out_type) {
  SY_CHECK(op != OpCode::kCount) << "eval_op: not an op";
  SY_CHECK(out_type) << "eval_op(" << ops::op_name(op) << "): no output type";
  for (size_t i = 0; i < args.size(); ++i)
    SY_CHECK(args[i].defined()) << "eval_op(" << ops::op_name(op) << "): argument " << i << " is undefined";
  const ops::OpDef& def = ops::op_def(op);
  const int n = static_cast<int>(args.size());
  SY_CHECK(n >= def.min_args && (def.max_args < 0 || n <= def.max_args))
      << "eval_op(" << def.name << "): " << n << " arguments";
  return dispatch(op, attrs, args, out_type);
}

namespace {
class ReferenceEvaluator final : public ops::Evaluator {
 public:
  std::vector<Tensor> eval(OpCode op, const ir::Attrs& attrs, const std::vector<Tensor>& args,
                           const ir::Type& out_type) const override {
    return eval_op(op, attrs, args, out_type);
  }
};
}  // namespace

const ops::Evaluator& evaluator() {
  static const ReferenceEvaluator e;
  return e;
}

}  // namespace sy::reference
