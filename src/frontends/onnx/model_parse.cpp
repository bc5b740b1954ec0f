// Protobuf wire format, split at the raw_data fields of the main graph's initializers: the runs of
// other fields are merged by protobuf itself (a message parsed from concatenated pieces equals the
// message parsed from their concatenation), only the weights' bytes are left in place.
#include "frontends/onnx/model_parse.h"

#include <google/protobuf/io/coded_stream.h>

#include <cstdint>

namespace sy::onnx {

namespace {

// Field numbers in onnx.proto.
constexpr uint64_t kModelGraph = 7;         // ModelProto.graph
constexpr uint64_t kGraphInitializer = 5;   // GraphProto.initializer
constexpr uint64_t kTensorRawData = 9;      // TensorProto.raw_data
constexpr int kLengthDelimited = 2;

bool read_varint(std::string_view s, size_t& pos, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && pos < s.size(); shift += 7) {
    auto b = static_cast<unsigned char>(s[pos++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Tags and lengths are 32-bit varints of at most 5 bytes for protobuf; anything else is left to
// protobuf to reject.
bool read_varint32(std::string_view s, size_t& pos, uint64_t& v, uint64_t max) {
  size_t start = pos;
  return read_varint(s, pos, v) && pos - start <= 5 && v <= max;
}

// Walks the fields of one message: runs of fields other than `field` (length-delimited) go to
// plain(run), each occurrence of `field` to special(payload). False when the framing is broken
// or uses groups (then nothing should be trusted and the caller falls back to protobuf).
template <typename Plain, typename Special>
bool split(std::string_view msg, uint64_t field, Plain&& plain, Special&& special) {
  size_t pos = 0, run = 0;
  while (pos < msg.size()) {
    size_t start = pos;
    uint64_t tag, n;
    if (!read_varint32(msg, pos, tag, UINT32_MAX)) return false;
    switch (tag & 7) {
      case 0:
        if (!read_varint(msg, pos, n)) return false;
        break;
      case 1:  // fixed64
      case 5:  // fixed32
        n = (tag & 7) == 1 ? 8 : 4;
        if (msg.size() - pos < n) return false;
        pos += n;
        break;
      case kLengthDelimited: {
        if (!read_varint32(msg, pos, n, INT32_MAX) || n > msg.size() - pos) return false;
        std::string_view payload = msg.substr(pos, n);
        pos += n;
        if (tag >> 3 == field) {
          if (start > run && !plain(msg.substr(run, start - run))) return false;
          if (!special(payload)) return false;
          run = pos;
        }
        break;
      }
      default: return false;  // groups (deprecated) and invalid wire types
    }
  }
  return run == msg.size() || plain(msg.substr(run));
}

// Merges serialized fields into m, as protobuf's own parse of the whole would (also in what it
// rejects: a piece must parse completely).
bool merge(google::protobuf::MessageLite& m, std::string_view bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  return m.MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
}

bool split_parse(std::string_view bytes, ParsedModel& out) {
  ::onnx::ModelProto& model = out.model;
  return split(
      bytes, kModelGraph, [&](std::string_view run) { return merge(model, run); },
      [&](std::string_view graph_bytes) {
        ::onnx::GraphProto& graph = *model.mutable_graph();
        return split(
            graph_bytes, kGraphInitializer, [&](std::string_view run) { return merge(graph, run); },
            [&](std::string_view tensor_bytes) {
              ::onnx::TensorProto& t = *graph.add_initializer();
              out.raw_data.resize(static_cast<size_t>(graph.initializer_size()));
              std::optional<std::string_view>& raw = out.raw_data.back();
              return split(
                  tensor_bytes, kTensorRawData, [&](std::string_view run) { return merge(t, run); },
                  [&](std::string_view data) {
                    raw = data;  // a repeated optional field: the last occurrence wins
                    return true;
                  });
            });
      });
}

}  // namespace

bool parse_model(std::string_view bytes, ParsedModel& out) {
  if (split_parse(bytes, out)) {
    out.raw_data.resize(static_cast<size_t>(out.model.graph().initializer_size()));
    return true;
  }
  out.model.Clear();
  out.raw_data.clear();
  if (!out.model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
  // Parsed whole: every initializer's raw_data is in the proto (one entry each, as promised).
  out.raw_data.resize(static_cast<size_t>(out.model.graph().initializer_size()));
  return true;
}

}  // namespace sy::onnx
