// Tests of the IR text form: exact round trips (every op, dtype, name form, tuple and function
// shape), golden files, and parser error messages with their positions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "zoo/zoo.h"

using namespace sy;
using namespace sy::ir;
using namespace sy::ops;
using ::testing::HasSubstr;

namespace {

Type T(Shape s, DType d = DType::f32) { return tensor_type(std::move(s), d); }

// print -> parse -> print must reproduce the text byte for byte, and the parsed module must be
// structurally equal to the original, hash the same and verify.
Module expect_round_trip(const Module& m) {
  std::string text = print_module(m);
  auto parsed = parse_module(text);
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message() << "\n" << text;
  if (!parsed.is_ok()) return m;
  EXPECT_EQ(print_module(*parsed), text);
  EXPECT_TRUE(structural_equal(m, *parsed)) << first_difference(m, *parsed) << "\n" << text;
  EXPECT_EQ(structural_hash(m), structural_hash(*parsed));
  Status st = verify(*parsed);
  EXPECT_TRUE(st.is_ok()) << st.message();
  return *parsed;
}

std::string parse_error(const std::string& text) {
  auto r = parse_module(text);
  return r.is_ok() ? "<parsed>" : r.status().message();
}

Module single(std::vector<Expr> params, Expr body) {
  Module m;
  m.functions["main"] = function(std::move(params), std::move(body));
  return m;
}

template <typename T>
Expr const_of(Shape s, std::vector<T> v) { return constant(Tensor::from_vector<T>(std::move(s), v)); }

Expr random_f32_constant(Shape s, uint32_t seed) {
  Tensor t(DType::f32, std::move(s));
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return constant(t);
}

// One call of every op in op_list.def, each with non-default attributes where it has any.
Module every_op_module() {
  std::vector<Expr> params;
  auto P = [&](const std::string& name, Shape s, DType d = DType::f32) {
    params.push_back(var(name, T(std::move(s), d)));
    return params.back();
  };
  Expr x = P("x", {2, 3});
  Expr y = P("input.1", {3});
  Expr b = P("onnx::Mask_0", {2, 3}, DType::boolean);
  Expr img = P("0", {1, 4, 8, 8});
  Expr idx = P("idx", {2, 3}, DType::i64);
  std::vector<Expr> outs;
  auto add = [&](Expr e) { outs.push_back(e); return e; };

  for (OpCode c : {OpCode::Neg, OpCode::Abs, OpCode::Exp, OpCode::Log, OpCode::Sqrt, OpCode::Reciprocal, OpCode::Sin,
                   OpCode::Cos, OpCode::Tan, OpCode::Asin, OpCode::Acos, OpCode::Atan, OpCode::Sinh, OpCode::Cosh,
                   OpCode::Asinh, OpCode::Acosh, OpCode::Atanh, OpCode::Tanh, OpCode::Sigmoid, OpCode::Relu,
                   OpCode::Erf, OpCode::Floor, OpCode::Ceil, OpCode::Round, OpCode::Sign, OpCode::IsNaN,
                   OpCode::Identity, OpCode::Softplus, OpCode::Softsign, OpCode::HardSwish, OpCode::Mish})
    add(call(c, {x}));
  add(call(OpCode::LogicalNot, {b}));
  IsInfAttrs isinf;
  isinf.detect_negative = false;
  add(call(OpCode::IsInf, {x}, isinf));
  GeluAttrs gelu;
  gelu.approximate = "tanh";
  add(call(OpCode::Gelu, {x}, gelu));
  HardSigmoidAttrs hs;
  hs.alpha = 0.3;
  hs.beta = 0.6;
  add(call(OpCode::HardSigmoid, {x}, hs));
  AlphaAttrs alpha;
  alpha.alpha = 0.123456789012345;
  for (OpCode c : {OpCode::LeakyRelu, OpCode::Elu, OpCode::Celu, OpCode::ThresholdedRelu}) add(call(c, {x}, alpha));
  SeluAttrs selu;
  selu.alpha = 1.5;
  selu.gamma = 1e-300;
  add(call(OpCode::Selu, {x}, selu));
  ClipAttrs clip;
  clip.min = -1.5;
  add(call(OpCode::Clip, {x}, clip));  // max stays +inf: prints "inf"
  CastAttrs cast;
  cast.to = DType::u8;
  add(call(OpCode::Cast, {x}, cast));

  for (OpCode c : {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Div, OpCode::Pow, OpCode::Maximum, OpCode::Minimum,
                   OpCode::PRelu, OpCode::Equal, OpCode::Less, OpCode::LessEqual, OpCode::Greater, OpCode::GreaterEqual})
    add(call(c, {x, y}));
  ModAttrs mod;
  mod.fmod = true;
  add(call(OpCode::Mod, {x, y}, mod));
  for (OpCode c : {OpCode::LogicalAnd, OpCode::LogicalOr, OpCode::LogicalXor}) add(call(c, {b, b}));
  add(call(OpCode::Where, {b, x, y}));

  Conv2dAttrs conv;
  conv.strides = {2, 1};
  conv.padding = {1, 0, 1, 2};
  conv.dilation = {1, 2};
  conv.groups = 2;
  add(call(OpCode::Conv2d, {img, random_f32_constant({8, 2, 3, 3}, 1), const_of<float>({8}, {0, 1, 2, 3, 4, 5, 6, 7})}, conv));
  ConvTranspose2dAttrs convt;
  convt.strides = {2, 2};
  convt.padding = {1, 1, 1, 1};
  convt.output_padding = {1, 1};
  add(call(OpCode::ConvTranspose2d, {img, random_f32_constant({4, 3, 3, 3}, 2)}, convt));
  add(call(OpCode::MatMul, {x, P("w", {3, 4})}));
  add(call(OpCode::Dense, {x, P("wd", {5, 3}), P("bd", {5})}));
  BatchNormAttrs bn;
  bn.epsilon = 1e-3;
  Expr c4 = P("c4", {4});
  add(call(OpCode::BatchNorm, {img, c4, c4, c4, c4}, bn));
  LayerNormAttrs ln;
  ln.axis = 1;
  ln.epsilon = 1e-6;
  add(call(OpCode::LayerNorm, {x, y, y}, ln));
  EpsilonAttrs eps;
  eps.epsilon = 2e-5;
  add(call(OpCode::InstanceNorm, {img, c4, c4}, eps));
  LRNAttrs lrn;
  lrn.size = 3;
  lrn.alpha = 2e-4;
  lrn.beta = 0.5;
  lrn.bias = 2;
  add(call(OpCode::LRN, {img}, lrn));
  AxisAttrs ax1;
  ax1.axis = 1;
  add(call(OpCode::Softmax, {x}, ax1));
  add(call(OpCode::LogSoftmax, {x}, ax1));
  Pool2dAttrs pool;
  pool.kernel = {3, 3};
  pool.strides = {2, 2};
  pool.padding = {1, 1, 1, 1};
  pool.ceil_mode = true;
  pool.count_include_pad = true;
  pool.p = 3;
  for (OpCode c : {OpCode::MaxPool2d, OpCode::AvgPool2d, OpCode::LpPool2d}) add(call(c, {img}, pool));
  add(call(OpCode::GlobalAvgPool2d, {img}));
  add(call(OpCode::GlobalMaxPool2d, {img}));
  PadAttrs pad;
  pad.pads = {0, 0, 1, -1, 0, 0, 2, 2};
  pad.mode = "edge";
  pad.value = -0.0;
  add(call(OpCode::Pad, {img}, pad));
  DepthToSpaceAttrs d2s;
  d2s.blocksize = 2;
  d2s.mode = "CRD";
  add(call(OpCode::DepthToSpace, {img}, d2s));
  BlockSizeAttrs s2d;
  s2d.blocksize = 2;
  add(call(OpCode::SpaceToDepth, {img}, s2d));
  Resize2dAttrs rz;
  rz.size = {16, 12};
  rz.mode = "linear";
  rz.coordinate_transformation_mode = "align_corners";
  rz.nearest_mode = "floor";
  rz.cubic_coeff_a = -0.5;
  add(call(OpCode::Resize2d, {img}, rz));
  GridSampleAttrs gs;
  gs.mode = "bicubic";
  gs.padding_mode = "reflection";
  gs.align_corners = true;
  add(call(OpCode::GridSample, {img, P("grid", {1, 5, 3, 2})}, gs));
  RoiAlignAttrs ra;
  ra.mode = "max";
  ra.output_height = 3;
  ra.output_width = 2;
  ra.sampling_ratio = 2;
  ra.spatial_scale = 0.0625;
  ra.half_pixel = false;
  add(call(OpCode::RoiAlign, {img, P("rois", {4, 4}), P("roi_batch", {4}, DType::i64)}, ra));
  MaxRoiPoolAttrs mrp;
  mrp.pooled_shape = {2, 3};
  mrp.spatial_scale = 0.5;
  add(call(OpCode::MaxRoiPool, {img, P("rois5", {3, 5})}, mrp));
  add(call(OpCode::Det, {P("matrices", {2, 3, 3})}));

  ReshapeAttrs rs;
  rs.newshape = {3, 2};
  add(call(OpCode::Reshape, {x}, rs));
  TransposeAttrs tr;
  tr.perm = {1, 0};
  add(call(OpCode::Transpose, {x}, tr));
  add(call(OpCode::Concat, {x, x, x}, ax1));
  SplitAttrs split;
  split.axis = 1;
  split.sizes = {1, 2};
  Expr parts = call(OpCode::Split, {x}, split);
  add(tuple_get_item(parts, 1));
  add(tuple_get_item(parts, 0));
  StridedSliceAttrs ss;
  ss.begin = {0, 2};
  ss.end = {2, -1};
  ss.strides = {1, -1};
  add(call(OpCode::StridedSlice, {x}, ss));
  add(call(OpCode::Gather, {x, const_of<int64_t>({4}, {0, 2, 1, 0})}, ax1));
  add(call(OpCode::GatherElements, {x, idx}, ax1));
  BatchDimsAttrs bd;
  add(call(OpCode::GatherND, {x, const_of<int32_t>({2, 2}, {0, 1, 1, 2})}, bd));
  ShapeAttrs bt;
  bt.shape = {4, 2, 3};
  add(call(OpCode::BroadcastTo, {x}, bt));
  RepsAttrs reps;
  reps.reps = {2, 2};
  add(call(OpCode::Tile, {x}, reps));
  TriluAttrs tri;
  tri.upper = false;
  tri.k = -1;
  add(call(OpCode::Trilu, {x}, tri));
  OneHotAttrs oh;
  oh.depth = 5;
  oh.axis = 1;
  add(call(OpCode::OneHot, {idx, const_of<float>({2}, {0.0f, 1.0f})}, oh));
  CumSumAttrs cs;
  cs.axis = 1;
  cs.exclusive = true;
  cs.reverse = true;
  add(call(OpCode::CumSum, {x}, cs));
  ScatterAttrs sc;
  sc.axis = 1;
  sc.reduction = "add";
  add(call(OpCode::ScatterElements, {x, idx, x}, sc));
  ScatterAttrs snd;
  snd.reduction = "mul";
  add(call(OpCode::ScatterND, {x, const_of<int64_t>({1, 1}, {1}), P("upd", {1, 3})}, snd));

  ReduceAttrs red;
  red.axes = {1};
  red.keepdims = false;
  for (OpCode c : {OpCode::ReduceSum, OpCode::ReduceMean, OpCode::ReduceMax, OpCode::ReduceMin, OpCode::ReduceProd,
                   OpCode::ReduceL1, OpCode::ReduceL2, OpCode::ReduceSumSquare, OpCode::ReduceLogSum,
                   OpCode::ReduceLogSumExp})
    add(call(c, {x}, red));
  ArgReduceAttrs ar;
  ar.axis = 1;
  ar.keepdims = false;
  ar.select_last_index = true;
  add(call(OpCode::ArgMax, {x}, ar));
  add(call(OpCode::ArgMin, {x}, ar));
  TopKAttrs topk;
  topk.k = 2;
  topk.axis = 1;
  topk.largest = false;
  topk.sorted = false;
  Expr tk = call(OpCode::TopK, {x}, topk);
  add(tuple_get_item(tk, 0));
  add(tuple_get_item(tk, 1));

  Module m;
  m.functions["main"] = function(params, tuple(outs));
  for (size_t i = 0; i < outs.size(); ++i) m.output_names.push_back("out." + std::to_string(i));
  return m;
}

}  // namespace

TEST(IrText, EveryOpRoundTrips) {
  Module m = every_op_module();
  std::set<OpCode> used;
  for (const Expr& e : post_order(m.functions["main"], true))
    if (auto* c = e->as<CallNode>(); c && c->is_op()) used.insert(c->op);
  for (const auto& d : OpRegistry::global().all()) EXPECT_TRUE(used.count(d.code)) << "not covered: " << d.name;
  ASSERT_TRUE(verify(m).is_ok()) << verify(m).message();
  expect_round_trip(m);
  std::string text = print_module(m);
  EXPECT_THAT(text, HasSubstr("nn.conv2d(%\"0\", @c0, @c1, strides=[2, 1], padding=[1, 0, 1, 2], dilation=[1, 2], groups=2)"));
  EXPECT_THAT(text, HasSubstr("clip(%x, min=-1.5, max=inf)"));
  EXPECT_THAT(text, HasSubstr("def @main(%x: Tensor[(2, 3), float32], %\"input.1\": Tensor[(3,), float32], "
                              "%\"onnx::Mask_0\": Tensor[(2, 3), bool]"));
  EXPECT_THAT(text, HasSubstr("#[outputs = [\"out.0\", \"out.1\""));
  EXPECT_THAT(text, HasSubstr("@c1 = Tensor[(8,), float32] [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];"));
  EXPECT_THAT(text, HasSubstr("@c0 = Tensor[(8, 2, 3, 3), float32] base64\""));
}

// Real models: thousands of nodes, megabytes of weights, output names. (resnet50 adds nothing
// over resnet18 here but time.)
TEST(IrText, ZooModelsRoundTrip) {
  for (const auto& info : zoo::list_models()) {
    if (info.name == "resnet50") continue;
    SCOPED_TRACE(info.name);
    Module m = zoo::build(info.name);
    ASSERT_TRUE(verify(m).is_ok()) << verify(m).message();
    expect_round_trip(m);
  }
}

TEST(IrText, PrintsTheDocumentedLayout) {
  Expr x = var("x", T({1, 3, 8, 8}));
  Conv2dAttrs conv;
  Expr c = call(OpCode::Conv2d, {x, const_of<float>({4, 3, 1, 1}, std::vector<float>(12, 0.5f))}, conv);
  Expr r = call(OpCode::Relu, {c});
  Expr a = var("a", T({1, 4, 8, 8}));
  Expr f = function({a}, call(OpCode::Relu, {a}), {{"Composite", "mylib.relu"}});
  Expr fr = call_function(f, {r});
  SplitAttrs sp;
  sp.axis = 1;
  sp.sizes = {2, 2};
  Expr parts = call(OpCode::Split, {fr}, sp);
  Expr t = tuple({tuple_get_item(parts, 0), r});
  Module m = single({x}, t);
  m.output_names = {"logits", "aux"};
  EXPECT_EQ(print_module(m),
            "#[version = \"0.1\"]\n"
            "#[outputs = [\"logits\", \"aux\"]]\n"
            "def @main(%x: Tensor[(1, 3, 8, 8), float32]) -> (Tensor[(1, 2, 8, 8), float32], Tensor[(1, 4, 8, 8), float32]) {\n"
            "  %0 = nn.conv2d(%x, @c0, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1);\n"
            "  %1 = nn.relu(%0);\n"
            "  %2 = fn (%a: Tensor[(1, 4, 8, 8), float32]) -> Tensor[(1, 4, 8, 8), float32] attrs {Composite=\"mylib.relu\"} {\n"
            "    nn.relu(%a)\n"
            "  };\n"
            "  %3 = %2(%1);\n"
            "  %4 = split(%3, axis=1, sizes=[2, 2]);\n"
            "  %5 = %4.0;\n"
            "  (%5, %1)\n"
            "}\n"
            "constants {\n"
            "  @c0 = Tensor[(4, 3, 1, 1), float32] [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5];\n"
            "}\n");
  expect_round_trip(m);
}

TEST(IrText, AllDtypesAndSpecialValuesRoundTripExactly) {
  std::vector<Expr> fields;
  float fnan_payload;
  uint32_t bits = 0x7fc00123u;  // NaN with a payload: not expressible as a literal, falls back to base64
  std::memcpy(&fnan_payload, &bits, 4);
  fields.push_back(const_of<float>({7}, {-0.0f, INFINITY, -INFINITY, NAN, 1e-45f, 3.4028235e38f, 0.1f}));
  fields.push_back(const_of<float>({2}, {1.0f, fnan_payload}));
  fields.push_back(const_of<float>({2}, {-NAN, 1.0f / 3.0f}));
  fields.push_back(const_of<double>({4}, {0.1, -0.0, 5e-324, 1.0 / 3.0}));
  fields.push_back(const_of<int8_t>({3}, {-128, 0, 127}));
  fields.push_back(const_of<int16_t>({2}, {-32768, 32767}));
  fields.push_back(const_of<int32_t>({2}, {INT32_MIN, INT32_MAX}));
  fields.push_back(const_of<int64_t>({2}, {INT64_MIN, INT64_MAX}));
  fields.push_back(const_of<uint8_t>({2}, {0, 255}));
  fields.push_back(const_of<bool>({3}, {true, false, true}));
  fields.push_back(constant(Tensor::scalar<float>(2.5f)));
  fields.push_back(constant(Tensor(DType::f32, {0, 3})));
  // Large ones of every dtype go through base64.
  for (DType d : kAllDTypes) {
    Tensor t(d, {3, 7});
    auto* p = static_cast<uint8_t*>(t.raw());
    for (size_t i = 0; i < t.nbytes(); ++i) p[i] = d == DType::boolean ? (i % 3 == 0) : static_cast<uint8_t>(i * 37 + 11);
    fields.push_back(constant(t));
  }
  Module m = single({}, tuple(fields));
  std::string text = print_module(m);
  // Shortest texts that read back to the same bits.
  EXPECT_THAT(text, HasSubstr("Tensor[(7,), float32] [-0.0, inf, -inf, nan, 1e-45, 3.4028235e+38, 0.1];"));
  EXPECT_THAT(text, HasSubstr("Tensor[(2,), float32] base64\"AACAPyMBwH8=\";"));  // the payload NaN
  EXPECT_THAT(text, HasSubstr("Tensor[(2,), float32] [-nan, 0.33333334];"));
  EXPECT_THAT(text, HasSubstr("Tensor[(4,), float64] [0.1, -0.0, 5e-324, 0.3333333333333333];"));
  EXPECT_THAT(text, HasSubstr("Tensor[(2,), int64] [-9223372036854775808, 9223372036854775807]"));
  EXPECT_THAT(text, HasSubstr("Tensor[(3,), bool] [true, false, true]"));
  EXPECT_THAT(text, HasSubstr("Tensor[(), float32] [2.5]"));
  EXPECT_THAT(text, HasSubstr("Tensor[(0, 3), float32] []"));
  expect_round_trip(m);
}

TEST(IrText, NamesThatAreNotIdentifiersAreQuoted) {
  std::vector<Expr> params;
  for (std::string n : {"input.1", "onnx::Gemm_0", "0", "", "quote\"back\\slash", "line\nbreak\ttab\x01", "ok_name", "x"})
    params.push_back(var(n, T({2})));
  // Two distinct vars named x get distinct printed names.
  params.push_back(var("x", T({2})));
  Expr sum = params[0];
  for (size_t i = 1; i < params.size(); ++i) sum = call(OpCode::Add, {sum, params[i]});
  Module m;
  m.functions["main"] = function(params, sum);
  Expr h = var("h", T({2}));
  m.functions["weird name.v2"] = function({h}, h, {{"Compiler", "mylib"}, {"global symbol", "a\"b"}});
  m.output_names = {"output \"0\""};
  std::string text = print_module(m);
  EXPECT_THAT(text, HasSubstr("%\"input.1\": "));
  EXPECT_THAT(text, HasSubstr("%\"onnx::Gemm_0\": "));
  EXPECT_THAT(text, HasSubstr("%\"0\": "));
  EXPECT_THAT(text, HasSubstr("%\"\": "));
  EXPECT_THAT(text, HasSubstr("%\"quote\\\"back\\\\slash\": "));
  EXPECT_THAT(text, HasSubstr("%\"line\\nbreak\\ttab\\x01\": "));
  EXPECT_THAT(text, HasSubstr("%x: Tensor[(2,), float32], %x_1: "));
  EXPECT_THAT(text, HasSubstr("def @\"weird name.v2\"(%h: Tensor[(2,), float32]) -> Tensor[(2,), float32] "
                              "attrs {Compiler=\"mylib\", \"global symbol\"=\"a\\\"b\"} {"));
  EXPECT_THAT(text, HasSubstr("#[outputs = [\"output \\\"0\\\"\"]]"));
  Module back = expect_round_trip(m);
  auto& bp = back.functions["main"]->as<FunctionNode>()->params;
  EXPECT_EQ(bp[1]->as<VarNode>()->name, "onnx::Gemm_0");
  EXPECT_EQ(bp[5]->as<VarNode>()->name, "line\nbreak\ttab\x01");
  EXPECT_EQ(back.output_names, m.output_names);
}

TEST(IrText, TuplesFunctionsAndGlobals) {
  Expr p = var("p", tuple_type({T({2}), tuple_type({T({3}, DType::i64)})}));
  Expr inner = tuple_get_item(tuple_get_item(p, 1), 0);
  Expr one = tuple({inner});
  Expr empty = tuple({});
  Module m;
  Expr a = var("a", T({2}));
  m.functions["helper"] = function({a}, call(OpCode::Exp, {a}), {{"Primitive", "1"}});
  Expr x = var("x", T({2}));
  Expr helper = m.global("helper");  // one GlobalVar node used twice; the parser makes one per use
  Expr g = call_function(helper, {call_function(helper, {x})});
  // A nested function that itself contains a nested function, called twice (the call is shared).
  Expr q = var("q", T({2}));
  Expr r = var("r", T({2}));
  Expr innermost = function({r}, call(OpCode::Neg, {r}), {{"Composite", "neg"}});
  Expr nested = function({q}, call(OpCode::Add, {call_function(innermost, {q}), q}));
  Expr c1 = call_function(nested, {g});
  Expr shared = call(OpCode::Mul, {c1, c1});
  m.functions["main"] = function({x, p}, tuple({shared, one, empty, tuple_get_item(p, 0), c1}));
  std::string text = print_module(m);
  EXPECT_THAT(text, HasSubstr("%0 = @helper(%x);\n  %1 = @helper(%0);"));
  EXPECT_THAT(text, HasSubstr("%9 = (%8,);"));
  EXPECT_THAT(text, HasSubstr("%p.1"));
  EXPECT_THAT(text, HasSubstr("()"));
  EXPECT_THAT(text, HasSubstr("%p: (Tensor[(2,), float32], (Tensor[(3,), int64],))"));
  // The call c1 is bound once and used three times.
  size_t uses = 0;
  for (size_t at = text.find("multiply(%"); at != std::string::npos; at = text.find("multiply(%", at + 1)) ++uses;
  EXPECT_EQ(uses, 1u);
  expect_round_trip(m);
}

TEST(IrText, SharedConstantPrintsOnceDistinctEqualConstantsTwice) {
  Expr x = var("x", T({2}));
  Expr c = const_of<float>({2}, {1, 2});
  Expr d = const_of<float>({2}, {1, 2});
  Module m = single({x}, call(OpCode::Add, {call(OpCode::Add, {call(OpCode::Mul, {x, c}), c}), d}));
  std::string text = print_module(m);
  EXPECT_THAT(text, HasSubstr("multiply(%x, @c0)"));
  EXPECT_THAT(text, HasSubstr("add(%0, @c0)"));
  EXPECT_THAT(text, HasSubstr("add(%1, @c1)"));
  EXPECT_EQ(text.find("@c2"), std::string::npos);
  Module back = expect_round_trip(m);
  // Sharing survives: the parsed graph uses one node for @c0.
  auto* add2 = back.main().body->as<CallNode>();
  auto* add1 = add2->args[0]->as<CallNode>();
  EXPECT_EQ(add1->args[1], add1->args[0]->as<CallNode>()->args[1]);
}

TEST(IrText, ConstantNamesAvoidFunctionNames) {
  Module m;
  Expr a = var("a", T({2}));
  m.functions["c0"] = function({a}, a);
  Expr x = var("x", T({2}));
  m.functions["main"] = function({x}, call(OpCode::Add, {call_function(m.global("c0"), {x}), const_of<float>({2}, {1, 2})}));
  std::string text = print_module(m);
  EXPECT_THAT(text, HasSubstr("@c1 = Tensor"));
  expect_round_trip(m);
}

TEST(IrText, WithoutWeightsLargeDataIsElidedAndNotParseable) {
  Expr x = var("x", T({32}));
  Module m = single({x}, call(OpCode::Add, {call(OpCode::Add, {x, random_f32_constant({32}, 3)}),
                                             const_of<float>({1}, {2.0f})}));
  std::string text = print_module(m, PrintOptions{false});
  EXPECT_THAT(text, HasSubstr("  @c0 = Tensor[(32,), float32] ...;\n"));
  EXPECT_THAT(text, HasSubstr("  @c1 = Tensor[(1,), float32] [2.0];\n"));
  EXPECT_EQ(parse_error(text), "7:32: constant @c0 has no data (printed with --no-weights)");
}

TEST(IrText, LongChainsDoNotRecurse) {
  Expr x = var("x", T({4}));
  Expr e = x;
  for (int i = 0; i < 20000; ++i) e = call(i % 2 ? OpCode::Relu : OpCode::Neg, {e});
  Module m = single({x}, e);
  expect_round_trip(m);
}

TEST(IrText, InlineNestedExpressionsAndCommentsAreAccepted) {
  // Hand-written text may nest calls and use comments; printing normalises it to the let form.
  auto r = parse_module(
      "// a comment\n"
      "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n"
      "  add(nn.relu(%x), (%x)) // trailing\n"
      "}\n");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(print_module(*r),
            "#[version = \"0.1\"]\n"
            "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n"
            "  %0 = nn.relu(%x);\n"
            "  add(%0, %x)\n"
            "}\n");
}

TEST(IrText, MissingAttributesTakeDefaults) {
  auto r = parse_module(
      "def @main(%x: Tensor[(1, 2, 5, 5), float32]) -> Tensor[(1, 2, 3, 3), float32] {\n"
      "  nn.max_pool2d(%x, kernel=[3, 3])\n"
      "}\n");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  auto& a = r->main().body->as<CallNode>()->attrs_as<Pool2dAttrs>();
  EXPECT_EQ(a.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(a.strides, (std::vector<int64_t>{1, 1}));
}

TEST(IrText, GoldenFilesReprintIdentically) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(SY_SOURCE_DIR) / "tests" / "golden";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".sy") continue;
    ++count;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    auto r = parse_module(text);
    ASSERT_TRUE(r.is_ok()) << entry.path() << ": " << r.status().message();
    EXPECT_EQ(print_module(*r), text) << entry.path();
    Status st = verify(*r);
    EXPECT_TRUE(st.is_ok()) << entry.path() << ": " << st.message();
  }
  EXPECT_GE(count, 3);
}

// ---- parser errors: "line:col: message" ----

TEST(IrTextErrors, PositionsAndMessages) {
  const std::string head = "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n";
  EXPECT_EQ(parse_error(head + "  foo(%x)\n}\n"), "2:3: unknown op 'foo'");
  EXPECT_EQ(parse_error(head + "  add(%x, %y)\n}\n"), "2:11: unknown variable %y");
  EXPECT_EQ(parse_error(head + "  %0 = nn.relu(%x);\n  %1\n}\n"), "3:3: %1 is not defined");
  EXPECT_EQ(parse_error(head + "  %0 = nn.relu(%x);\n  %x\n}\n"), "2:3: %0 is defined but never used");
  EXPECT_EQ(parse_error(head + "  %0 = nn.relu(%x);\n  %0 = nn.relu(%0);\n  %0\n}\n"), "3:3: %0 is already defined");
  EXPECT_EQ(parse_error(head + "  nn.relu(%x\n}\n"), "3:1: expected ')' to close the call of nn.relu, got '}'");
  EXPECT_EQ(parse_error(head + "  %0 = nn.relu(%x)\n  %0\n}\n"), "3:3: expected ';' after the definition of %0, got '%0'");
  EXPECT_EQ(parse_error(head + "  nn.softmax(%x, axis=\"a\")\n}\n"),
            "2:18: nn.softmax: attribute 'axis': cannot parse '\"a\"' as an integer");
  EXPECT_EQ(parse_error(head + "  nn.softmax(%x, axes=1)\n}\n"), "2:18: nn.softmax: AxisAttrs has no attribute 'axes'");
  EXPECT_EQ(parse_error(head + "  nn.softmax(%x, axis=0, axis=0)\n}\n"), "2:26: attribute 'axis' given twice");
  EXPECT_EQ(parse_error(head + "  nn.softmax(axis=0, %x)\n}\n"), "2:22: argument after attributes in call of nn.softmax");
  EXPECT_EQ(parse_error(head + "  nn.conv2d(%x, %x)\n}\n"),
            "2:3: nn.conv2d: data (NCHW) must be 4-d, got shape (2,)");
  EXPECT_EQ(parse_error(head + "  %x.0\n}\n"), "2:5: tuple_get_item on a non-tuple of type Tensor[(2,), float32]");
  EXPECT_EQ(parse_error(head + "  (%x,).1\n}\n"), "2:8: tuple index 1 out of range for (Tensor[(2,), float32],)");
  EXPECT_EQ(parse_error(head + "  %x(%x)\n}\n"), "2:5: cannot call a value of type Tensor[(2,), float32]");
  EXPECT_EQ(parse_error(head + "  @nothing(%x)\n}\n"), "2:3: unknown global @nothing");
  EXPECT_EQ(parse_error(head + "  exp(%x)\n"), "1:63: unterminated '{'");
  EXPECT_EQ(parse_error(head + "  %0 = exp(%x);\n  (%0, %x)\n}\n"),
            "3:3: @main is declared to return Tensor[(2,), float32] but its body has type (Tensor[(2,), float32], "
            "Tensor[(2,), float32])");
  EXPECT_EQ(parse_error(head + "  $\n}\n"), "2:3: unexpected character '$'");
  EXPECT_EQ(parse_error(head + "  \"abc\n}\n"), "2:3: unterminated string");
  EXPECT_EQ(parse_error(head + "}\n"), "2:1: expected an expression, got '}'");
  EXPECT_EQ(parse_error("def @main(%0: Tensor[(2,), float32]) -> Tensor[(2,), float32] { %0 }"),
            "1:11: parameter %0 has a number as name; write %\"0\"");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(2,), float32], %x: Tensor[(2,), float32]) -> Tensor[(2,), float32] { %x }"),
            "1:38: duplicate parameter %x");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(2,), float16]) -> Tensor[(2,), float32] { %x }"),
            "1:28: unknown dtype 'float16'");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(-2,), float32]) -> Tensor[(2,), float32] { %x }"),
            "1:23: negative dimension -2");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(99999999999, 99999999999), float32]) -> Tensor[(2,), float32] { %x }"),
            "1:36: shape too large");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] { %x }\n"
                        "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] { %x }\n"),
            "2:5: function @main defined twice");
  EXPECT_EQ(parse_error("#[version = \"0.2\"]\n"), "1:13: unsupported IR text version \"0.2\" (expected \"0.1\")");
  EXPECT_EQ(parse_error("#[colour = \"red\"]\n"), "1:3: unknown header 'colour' (expected version or outputs)");
  EXPECT_EQ(parse_error("main"), "1:1: expected 'def' or 'constants', got 'main'");
}

TEST(IrTextErrors, NestedFunctionsAreClosed) {
  const std::string head = "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n";
  EXPECT_EQ(parse_error(head + "  %0 = fn (%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n    add(%a, %x)\n  };\n"
                               "  %0(%x)\n}\n"),
            "3:13: unknown variable %x (a fn body may use only its own parameters)");
  EXPECT_EQ(parse_error(head + "  %0 = nn.relu(%x);\n  %1 = fn (%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n"
                               "    add(%a, %0)\n  };\n  %1(%0)\n}\n"),
            "4:13: %0 is not defined (a fn body may not use values of the enclosing function)");
  EXPECT_EQ(parse_error(head + "  %0 = fn (%a: Tensor[(2,), float32]) -> Tensor[(3,), float32] {\n    %1 = exp(%a);\n"
                               "    neg(%1)\n  };\n  %0(%x)\n}\n"),
            "4:5: fn is declared to return Tensor[(3,), float32] but its body has type Tensor[(2,), float32]");
  EXPECT_EQ(parse_error(head + "  %0 = fn (%a: Tensor[(3,), float32]) -> Tensor[(3,), float32] {\n    %a\n  };\n  %0(%x)\n}\n"),
            "5:5: function argument 0 has type Tensor[(2,), float32], parameter expects Tensor[(3,), float32]");
}

TEST(IrTextErrors, Constants) {
  const std::string head = "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  add(%x, @c0)\n}\n";
  EXPECT_EQ(parse_error(head + "constants {\n  @c0 = Tensor[(2,), float32] [1.0];\n}\n"),
            "5:35: constant @c0 of shape (2,) needs 2 values");
  EXPECT_EQ(parse_error(head + "constants {\n  @c0 = Tensor[(2,), float32] [1.0, 2.0, 3.0];\n}\n"),
            "5:42: constant @c0 of shape (2,) needs 2 values");
  EXPECT_EQ(parse_error(head + "constants {\n  @c0 = Tensor[(2,), float32] [1.0, true];\n}\n"),
            "5:37: expected a number, got 'true'");
  EXPECT_EQ(parse_error(head + "constants {\n  @c0 = Tensor[(2,), float32] base64\"AAAA\";\n}\n"),
            "5:37: constant @c0: base64 data of 4 characters, expected 12 for 8 bytes");
  EXPECT_EQ(parse_error(head + "constants {\n  @c0 = Tensor[(2,), float32] base64\"AAAAAAAAAA!=\";\n}\n"),
            "5:37: constant @c0: malformed base64 data");
  EXPECT_EQ(parse_error(head + "constants {\n  @c0 = Tensor[(2,), float32] [1, 2];\n  @c1 = Tensor[(1,), int8] [1];\n}\n"),
            "6:3: constant @c1 is never used");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(2,), int8]) -> Tensor[(2,), int8] {\n  add(%x, @c0)\n}\n"
                        "constants {\n  @c0 = Tensor[(2,), int8] [1, 200];\n}\n"),
            "5:32: value 200 out of range for int8");
  EXPECT_EQ(parse_error(head), "2:11: unknown global @c0");
  EXPECT_EQ(parse_error(head + "constants {\n  @c0 = (Tensor[(2,), float32],) [1.0];\n}\n"),
            "5:9: constant @c0 must have a tensor type, got (Tensor[(2,), float32],)");
}

TEST(IrTextErrors, DeepNestingIsAnErrorNotACrash) {
  std::string deep_expr = "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  " +
                          std::string(100000, '(') + "%x" + std::string(100000, ')') + "\n}\n";
  EXPECT_THAT(parse_error(deep_expr), HasSubstr("nesting too deep"));
  std::string deep_type = "def @main(%x: " + std::string(100000, '(') + ") -> Tensor[(2,), float32] { %x }";
  EXPECT_THAT(parse_error(deep_type), HasSubstr("nesting too deep"));
  std::string deep_fn = "def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n";
  for (int i = 0; i < 5000; ++i) deep_fn += "fn () -> Tensor[(2,), float32] {";
  EXPECT_THAT(parse_error(deep_fn), HasSubstr("unterminated '{'"));
  deep_fn.append(5000, '}').append("}");  // (a + b of strings here tripped GCC 12's -Warray-bounds)
  EXPECT_THAT(parse_error(deep_fn), HasSubstr("nesting too deep"));
}

// Every prefix and many random corruptions of a valid text give an error or a module, never a
// crash or a hang.
TEST(IrTextErrors, CorruptedTextNeverCrashes) {
  std::string text = print_module(every_op_module());
  // Keep the work bounded: prefixes of the first part of the text at every position.
  std::string small = text.substr(0, 3000);
  for (size_t n = 0; n < small.size(); ++n) (void)parse_module(small.substr(0, n));
  std::mt19937 rng(42);
  const std::string alphabet = "()[]{},;:=.%@\"#-0123456789abcfnx_ \n\\";
  for (int trial = 0; trial < 300; ++trial) {
    std::string t = text;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0: t[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: t.erase(at, 1 + rng() % 8); break;
        default: t.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    auto r = parse_module(t);
    if (r.is_ok()) {
      // Whatever parsed must print and parse again identically.
      std::string again = print_module(*r);
      auto r2 = parse_module(again);
      ASSERT_TRUE(r2.is_ok()) << r2.status().message();
      EXPECT_EQ(print_module(*r2), again);
    }
  }
}

namespace sy {
namespace {

// Large constants can travel as binary beside the text (the artifact's form).
TEST(IrText, ConstantsAsBinaryBlobRoundTrip) {
  ir::Expr x = ir::var("x", ir::tensor_type({40}, DType::f32));
  std::vector<float> w(40);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.37f - 3.0f;
  ir::Expr c = ir::constant(Tensor::from_vector<float>({40}, w));
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(ops::OpCode::Add, {x, c}));
  ir::BlobLayout layout;
  ir::PrintOptions po;
  po.blob = &layout;
  std::string text = ir::print_module(m, po);
  EXPECT_NE(text.find("blob(0)"), std::string::npos) << text;
  ASSERT_EQ(layout.entries.size(), 1u);
  EXPECT_EQ(layout.size, 160u);
  std::string blob = layout.bytes();
  EXPECT_EQ(blob.size(), 160u);
  Result<ir::Module> back = ir::parse_module(text, blob);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(ir::print_module(back.value()), ir::print_module(m));
  Result<ir::Module> no_blob = ir::parse_module(text);
  ASSERT_FALSE(no_blob.is_ok());
  EXPECT_NE(no_blob.status().message().find("refers to binary data"), std::string::npos);
  std::string short_blob = blob.substr(0, 100);
  Result<ir::Module> cut = ir::parse_module(text, short_blob);
  ASSERT_FALSE(cut.is_ok());
  EXPECT_NE(cut.status().message().find("outside the 100-byte data"), std::string::npos) << cut.status().message();
}

// Each large constant starts at a 64-byte aligned offset; the gaps are zero bytes.
TEST(IrText, BlobLayoutAlignsEachConstant) {
  ir::Expr x = ir::var("x", ir::tensor_type({17}, DType::f32));
  std::vector<float> a(17, 1.5f), b(17, -2.0f);
  ir::Expr ca = ir::constant(Tensor::from_vector<float>({17}, a));
  ir::Expr cb = ir::constant(Tensor::from_vector<float>({17}, b));
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(ops::OpCode::Add, {ir::call(ops::OpCode::Add, {x, ca}), cb}));
  ir::BlobLayout layout;
  ir::PrintOptions po;
  po.blob = &layout;
  std::string text = ir::print_module(m, po);
  ASSERT_EQ(layout.entries.size(), 2u);
  EXPECT_EQ(layout.entries[0].offset, 0u);
  EXPECT_EQ(layout.entries[1].offset, 128u);  // 68 bytes, then padding to 128
  EXPECT_EQ(layout.size, 128u + 68u);
  std::string blob = layout.bytes();
  EXPECT_EQ(blob.substr(68, 60), std::string(60, '\0'));
  Result<ir::Module> back = ir::parse_module(text, blob);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(ir::print_module(back.value()), ir::print_module(m));
}

}  // namespace
}  // namespace sy
