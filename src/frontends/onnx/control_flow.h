// ONNX control flow whose course is known when importing, imported in place: If of a constant
// condition (its branch), Loop of known steps and Scan (unrolled), and the sequences they build. The graphs Switchyard compiles
// are static, as PyTorch's exported shape checks and per-item loops and TensorFlow's while loops
// over static lengths are; a course that depends on the data is refused in one line.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "onnx/onnx.pb.h"

namespace sy::onnx {

// The importer's side: its values by name, and the import of a subgraph's nodes.
class GraphScope {
 public:
  virtual ~GraphScope() = default;
  // The value of a name (a node output, input or initializer of this graph or an enclosing
  // one); nullptr if none.
  virtual ir::Expr lookup(const std::string& name) = 0;
  virtual void bind(const std::string& name, ir::Expr value) = 0;
  // Sequences (of tensors), known when importing as lists of values: an unrolled loop's list
  // appends, PyTorch's scripted `outs.append(...)` then `torch.stack(outs)`.
  virtual const std::vector<ir::Expr>* sequence(const std::string& name) = 0;
  virtual void bind_sequence(const std::string& name, std::vector<ir::Expr> values) = 0;
  // Checks that every op of g has a converter (Error naming `where` otherwise), binds g's
  // initializers and imports its nodes in order.
  virtual void import_nodes(const ::onnx::GraphProto& g, int64_t opset, const std::string& where) = 0;
  virtual const std::string& model_dir() const = 0;
};

class NodeContext;
// The op builder for a control-flow or sequence node (no inputs of its own: its values come from
// the scope).
NodeContext context_of(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset);
// Values of one shape stacked along a new axis.
ir::Expr stack(const NodeContext& ctx, const std::vector<ir::Expr>& values, int64_t axis);

// The unrolled graphs stay below this many nodes (compiled in minutes, not hours).
constexpr int64_t kMaxUnrolledNodes = 20000;

void convert_if(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset);
void convert_loop(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset);
void convert_scan(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset);

// The sequence ops (sequences.cpp): SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, ConcatFromSequence, SplitToSequence.
bool is_sequence_op(const std::string& op_type);
void convert_sequence_op(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset);

}  // namespace sy::onnx
