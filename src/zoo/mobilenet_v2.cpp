// MobileNetV2 as in torchvision (width multiplier 1.0, inverted residual blocks, ReLU6).
#include "ops/attrs.h"
#include "zoo/models.h"
#include "zoo/net_builder.h"

namespace sy::zoo {
namespace {

Act inverted_residual(NetBuilder& nb, const Act& x, int64_t out, int64_t stride, int64_t expand) {
  int64_t in = ir::shape_of(x.expr)[1];
  int64_t hidden = in * expand;
  Act h = x;
  if (expand != 1) h = nb.relu6(nb.conv_bn(h, hidden, 1, 1, 0));
  h = nb.relu6(nb.conv_bn(h, hidden, 3, stride, 1, /*groups=*/hidden));
  h = nb.conv_bn(h, out, 1, 1, 0);
  return (stride == 1 && in == out) ? nb.add(x, h) : h;
}

}  // namespace

ir::Module build_mobilenet_v2(const Shape& input_shape, uint64_t seed) {
  struct Stage { int64_t expand, channels, repeats, stride; };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  NetBuilder nb(seed * 1000 + 2);
  ir::Expr input = ir::var("input", ir::tensor_type(input_shape, DType::f32));
  Act x = nb.input(input, calibration_shape(input_shape));
  x = nb.relu6(nb.conv_bn(x, 32, 3, 2, 1));
  for (const Stage& s : stages)
    for (int64_t i = 0; i < s.repeats; ++i) x = inverted_residual(nb, x, s.channels, i == 0 ? s.stride : 1, s.expand);
  x = nb.relu6(nb.conv_bn(x, 1280, 1, 1, 0));
  x = nb.global_avg_pool_flatten(x);
  x = nb.dense(x, 1000);  // torchvision's dropout is the identity at inference
  return make_module({input}, {x.expr}, {"output"});
}

}  // namespace sy::zoo
