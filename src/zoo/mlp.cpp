// A tiny two-layer perceptron with two outputs: fast enough for tests of every tool.
#include "ops/attrs.h"
#include "zoo/models.h"
#include "zoo/net_builder.h"

namespace sy::zoo {

using ir::Expr;

ir::Module build_mlp(const Shape& input_shape, uint64_t seed) {
  NetBuilder nb(seed * 1000 + 4);
  Expr input = ir::var("input", ir::tensor_type(input_shape, DType::f32));
  Act x = nb.input(input, {1, input_shape[1]});
  x = nb.relu(nb.dense(x, 128));
  Act logits = nb.dense(x, 10);
  Act probs = nb.softmax(logits, 1);
  return make_module({input}, {logits.expr, probs.expr}, {"logits", "probs"});
}

}  // namespace sy::zoo
