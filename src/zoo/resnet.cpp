// ResNet-18 and ResNet-50 as in torchvision (basic and bottleneck blocks, v1.5 strides).
#include <cmath>

#include "ops/attrs.h"
#include "support/error.h"
#include "zoo/models.h"
#include "zoo/net_builder.h"

namespace sy::zoo {
namespace {

Act basic_block(NetBuilder& nb, const Act& x, int64_t planes, int64_t stride) {
  int64_t in = ir::shape_of(x.expr)[1];
  Act out = nb.relu(nb.conv_bn(x, planes, 3, stride, 1));
  out = nb.conv_bn(out, planes, 3, 1, 1);
  Act identity = (stride != 1 || in != planes) ? nb.conv_bn(x, planes, 1, stride, 0) : x;
  return nb.relu(nb.add(out, identity));
}

Act bottleneck(NetBuilder& nb, const Act& x, int64_t planes, int64_t stride) {
  constexpr int64_t kExpansion = 4;
  int64_t in = ir::shape_of(x.expr)[1];
  Act out = nb.relu(nb.conv_bn(x, planes, 1, 1, 0));
  out = nb.relu(nb.conv_bn(out, planes, 3, stride, 1));
  out = nb.conv_bn(out, planes * kExpansion, 1, 1, 0);
  Act identity = (stride != 1 || in != planes * kExpansion) ? nb.conv_bn(x, planes * kExpansion, 1, stride, 0) : x;
  return nb.relu(nb.add(out, identity));
}

}  // namespace

ir::Module build_resnet(int depth, const Shape& input_shape, uint64_t seed) {
  std::vector<int> blocks;
  bool use_bottleneck = false;
  if (depth == 18) {
    blocks = {2, 2, 2, 2};
  } else if (depth == 50) {
    blocks = {3, 4, 6, 3};
    use_bottleneck = true;
  } else {
    SY_CHECK(false) << "resnet depth " << depth;
  }
  NetBuilder nb(seed * 1000 + static_cast<uint64_t>(depth));
  ir::Expr input = ir::var("input", ir::tensor_type(input_shape, DType::f32));
  Act x = nb.input(input, calibration_shape(input_shape));
  x = nb.relu(nb.conv_bn(x, 64, 7, 2, 3));
  x = nb.max_pool(x, 3, 2, 1);
  int64_t planes = 64;
  for (size_t stage = 0; stage < blocks.size(); ++stage, planes *= 2) {
    for (int b = 0; b < blocks[stage]; ++b) {
      int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
      x = use_bottleneck ? bottleneck(nb, x, planes, stride) : basic_block(nb, x, planes, stride);
    }
  }
  x = nb.global_avg_pool_flatten(x);
  x = nb.dense(x, 1000);
  return make_module({input}, {x.expr}, {"output"});
}

}  // namespace sy::zoo
