// parse_model: the same ModelProto as protobuf's parse, with the main graph's initializer
// raw_data left in the bytes; the same verdict as protobuf on truncated and mutated bytes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "frontends/onnx/model_parse.h"
#include "support/numbered.h"

namespace sy::onnx {
namespace {

// Names end in `tag` so that two models differ.
::onnx::ModelProto small_model(const std::string& tag) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  ::onnx::GraphProto* g = m.mutable_graph();
  g->set_name(tag);
  for (int i = 0; i < 3; ++i) {
    ::onnx::TensorProto* t = g->add_initializer();
    t->set_name(numbered(tag, i));
    t->add_dims(4);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    if (i == 1) {
      for (int k = 0; k < 4; ++k) t->add_float_data(static_cast<float>(k));
    } else {
      t->set_raw_data(std::string(16, static_cast<char>('a' + i)));
      t->set_doc_string("after raw_data");  // field 12: a run after the split point
    }
  }
  g->add_output()->set_name("y");
  return m;
}

// The parsed model with its raw_data views put back, serialized (protobuf writes fields in
// number order, so equal messages serialize equally).
std::string restored(const ParsedModel& p) {
  ::onnx::ModelProto m = p.model;
  EXPECT_EQ(p.raw_data.size(), static_cast<size_t>(m.graph().initializer_size()));
  for (size_t i = 0; i < p.raw_data.size(); ++i)
    if (p.raw_data[i]) m.mutable_graph()->mutable_initializer(static_cast<int>(i))->set_raw_data(std::string(*p.raw_data[i]));
  return m.SerializeAsString();
}

TEST(OnnxModelParse, LeavesRawDataInTheBytes) {
  std::string bytes = small_model("a").SerializeAsString();
  ParsedModel p;
  ASSERT_TRUE(parse_model(bytes, p));
  ASSERT_EQ(p.model.graph().initializer_size(), 3);
  for (int i : {0, 2}) {
    EXPECT_FALSE(p.model.graph().initializer(i).has_raw_data());
    ASSERT_TRUE(p.raw_data[static_cast<size_t>(i)]);
    EXPECT_EQ(*p.raw_data[static_cast<size_t>(i)], std::string(16, static_cast<char>('a' + i)));
    EXPECT_GE(p.raw_data[static_cast<size_t>(i)]->data(), bytes.data());  // a view, not a copy
    EXPECT_LT(p.raw_data[static_cast<size_t>(i)]->data(), bytes.data() + bytes.size());
  }
  EXPECT_FALSE(p.raw_data[1]);
  EXPECT_EQ(p.model.graph().initializer(1).float_data_size(), 4);
  EXPECT_EQ(restored(p), bytes);
}

TEST(OnnxModelParse, ConcatenatedMessagesMergeLikeProtobuf) {
  // A graph field given twice is merged: the initializers of both, in order.
  std::string bytes = small_model("a").SerializeAsString() + small_model("b").SerializeAsString();
  ::onnx::ModelProto expected;
  ASSERT_TRUE(expected.ParseFromString(bytes));
  ParsedModel p;
  ASSERT_TRUE(parse_model(bytes, p));
  EXPECT_EQ(p.model.graph().initializer_size(), 6);
  EXPECT_EQ(restored(p), expected.SerializeAsString());
}

TEST(OnnxModelParse, SameVerdictAsProtobufOnTruncatedAndMutatedBytes) {
  std::string good = small_model("a").SerializeAsString();
  auto check = [](const std::string& bytes, const std::string& what) {
    ::onnx::ModelProto expected;
    bool ok = expected.ParseFromString(bytes);
    ParsedModel p;
    ASSERT_EQ(parse_model(bytes, p), ok) << what;
    if (ok) {
      EXPECT_EQ(restored(p), expected.SerializeAsString()) << what;
    }
  };
  for (size_t n = 0; n < good.size(); ++n) check(good.substr(0, n), numbered("first bytes: ", static_cast<int64_t>(n)));
  std::mt19937 rng(3);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = good;
    for (int k = 0; k < 1 + trial % 3; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    check(bad, numbered("mutation trial ", trial));
  }
}

// Non-canonical varints: a tag or length padded to 5 bytes is still valid protobuf, longer is
// not. The split must agree with protobuf either way.
TEST(OnnxModelParse, PaddedVarintsGetProtobufsVerdict) {
  std::string graph = small_model("a").graph().SerializeAsString();
  ASSERT_LT(graph.size(), 128u);  // its length fits one varint byte
  auto padded = [](uint8_t v, int bytes) {
    std::string s;
    for (int i = 0; i + 1 < bytes; ++i) s += static_cast<char>((i == 0 ? v : 0) | 0x80);
    s += static_cast<char>(bytes == 1 ? v : 0);
    return s;
  };
  for (int tag_bytes = 1; tag_bytes <= 7; ++tag_bytes)
    for (int len_bytes = 1; len_bytes <= 7; ++len_bytes) {
      std::string bytes = padded(0x3a, tag_bytes) + padded(static_cast<uint8_t>(graph.size()), len_bytes) + graph;
      ::onnx::ModelProto expected;
      bool ok = expected.ParseFromString(bytes);
      ParsedModel p;
      ASSERT_EQ(parse_model(bytes, p), ok) << tag_bytes << "-byte tag, " << len_bytes << "-byte length";
      if (ok) {
        EXPECT_EQ(restored(p), expected.SerializeAsString());
      }
    }
}

}  // namespace
}  // namespace sy::onnx
