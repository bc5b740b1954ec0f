// ONNX importer: parses a ModelProto (with a size limit) and converts its graph node by node.
#include "frontends/onnx/importer.h"

#include <cstring>
#include <string_view>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "frontends/onnx/control_flow.h"
#include "frontends/onnx/converters.h"
#include "frontends/onnx/model_parse.h"
#include "frontends/onnx/tensor_proto.h"
#include "onnx/onnx.pb.h"
#include "support/join.h"
#include "support/mapped_file.h"
#include "support/shape_limits.h"
#include "support/tensor_storage.h"

namespace sy::onnx {

namespace {

// Opsets 1-6 are accepted for the ops whose form did not change at opset 7 (the converter table
// registers the changed ones from 7 on, so older forms are reported as unsupported).
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 18;

std::string node_label(const ::onnx::NodeProto& n, int index) {
  std::string op = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type();
  if (!n.name().empty()) return op + " node '" + n.name() + "'";
  return op + " node #" + std::to_string(index);
}

std::string node_ref(const ::onnx::NodeProto& n, int index) {
  std::string s = n.name().empty() ? "#" : "'";  // appended, not prepended: avoids a GCC 12 -Wrestrict false positive
  s += n.name().empty() ? std::to_string(index) : n.name() + "'";
  return s;
}

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// The default-domain opset; a model of only custom-domain ops may import none (-1 then).
int64_t default_opset(const ::onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& o : model.opset_import())
    if (is_default_domain(o.domain())) opset = o.version();
  if (opset < 0) return -1;
  if (opset < kMinOpset || opset > kMaxOpset)
    throw Error("unsupported opset " + std::to_string(opset) + " (Switchyard imports opsets " +
                std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
  return opset;
}

// Every node whose op has no converter in this opset, reported together.
void check_all_ops_supported(const ::onnx::GraphProto& g, int64_t opset) {
  const ConverterTable& table = converter_table();
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> nodes;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    // If, Loop and Scan: their branch or body is imported in their place (control_flow.h),
    // checked then.
    bool ok = is_default_domain(n.domain()) && (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan" ||
                                                is_sequence_op(n.op_type()) || table.find(n.op_type(), opset) != nullptr);
    if (ok) continue;
    std::string op = is_default_domain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type();
    if (op.empty()) op = "<empty op type>";
    if (!nodes.count(op)) order.push_back(op);
    nodes[op].push_back(node_ref(n, i));
  }
  if (order.empty()) {
    if (opset < 0 && g.node_size() > 0)
      throw Error("not a valid ONNX model: it uses ONNX ops but imports no opset of the default ONNX domain");
    return;
  }
  std::ostringstream os;
  os << "unsupported ONNX ops: ";
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& refs = nodes[order[k]];
    os << (k ? ", " : "") << order[k] << " (" << refs.size() << (refs.size() == 1 ? " node: " : " nodes: ");
    constexpr size_t kShow = 5;
    for (size_t j = 0; j < refs.size() && j < kShow; ++j) os << (j ? ", " : "") << refs[j];
    if (refs.size() > kShow) os << ", ...";
    os << ")";
  }
  if (opset >= 0) os << " (opset " << opset << ")";
  throw Error(os.str());
}

// A graph input whose shape has symbolic or unknown dimensions and no --input-shape or data to
// fix them: its declared shape with the symbols ("N,3,H,W") and the symbols to give numbers for.
struct NeedsShape : Error {
  NeedsShape(const std::string& message, std::string in, std::string decl, std::vector<std::string> unk)
      : Error(message), input(std::move(in)), declared(std::move(decl)), unknown(std::move(unk)) {}
  std::string input, declared;
  std::vector<std::string> unknown;
};

// The static type of a graph input, specialised by the user's --input-shape.
ir::Type input_type(const ::onnx::ValueInfoProto& vi, const ImportOptions& opts) {
  const std::string& name = vi.name();
  if (!vi.has_type() || !vi.type().has_tensor_type()) {
    if (!vi.has_type()) throw Error("graph input '" + name + "' has no type");
    std::string kind = vi.type().has_sequence_type() ? "sequence"
                       : vi.type().has_map_type() ? "map"
                       : vi.type().has_optional_type() ? "optional"
                       : vi.type().has_sparse_tensor_type() ? "sparse tensor" : "non-tensor";
    throw Error("graph input '" + name + "' has unsupported type " + kind + " (only dense tensors are supported)");
  }
  const auto& tt = vi.type().tensor_type();
  auto dt = dtype_from_onnx(tt.elem_type());
  if (!dt) throw Error("graph input '" + name + "' has unsupported dtype " + onnx_dtype_name(tt.elem_type()));
  auto given = opts.input_shapes.find(name);
  if (given != opts.input_shapes.end()) {
    for (int64_t d : given->second)
      if (d < 0) throw Error("--input-shape for '" + name + "' has a negative dimension");
    if (!shape_within_limits(given->second))
      throw Error("--input-shape for '" + name + "' gives " + shape_str(given->second) + ", too large (over 2^56 elements)");
    if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(given->second.size()))
      throw Error("--input-shape for '" + name + "' gives " + std::to_string(given->second.size()) +
                  " dimensions, the model declares " + std::to_string(tt.shape().dim_size()));
    return ir::tensor_type(given->second, *dt);
  }
  // The declared shape, a symbolic dimension by its name ("?" if it has none): the hint asks for
  // a number in its place. (Guessing 1 for each suggested a 1x1 image.)
  std::string declared;
  std::vector<std::string> unknown;
  for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (i) declared += ',';  // appended separately: "," + std::string trips GCC 12's -Wrestrict
    if (d.has_dim_value() && d.dim_value() > 0) {
      declared += std::to_string(d.dim_value());
      continue;
    }
    const std::string sym = d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?";
    declared += sym;
    if (std::find(unknown.begin(), unknown.end(), sym) == unknown.end()) unknown.push_back(sym);
  }
  if (auto data = opts.data_shapes.find(name); data != opts.data_shapes.end() && !tt.has_shape()) {
    if (!shape_within_limits(data->second)) throw Error("the data given for input '" + name + "' is too large (over 2^56 elements)");
    return ir::tensor_type(data->second, *dt);
  }
  if (tt.has_shape()) {
    auto data = opts.data_shapes.find(name);
    if (data != opts.data_shapes.end() && !unknown.empty()) {
      const Shape& ds = data->second;
      if (static_cast<int>(ds.size()) != tt.shape().dim_size())
        throw Error("the data given for input '" + name + "' has shape " + shape_str(ds) + "; the model declares " + declared);
      for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        if (d.has_dim_value() && d.dim_value() > 0 && d.dim_value() != ds[static_cast<size_t>(i)])
          throw Error("the data given for input '" + name + "' has shape " + shape_str(ds) + "; the model declares " + declared +
                      ": axis " + std::to_string(i) + " must be " + std::to_string(d.dim_value()));
      }
      if (!shape_within_limits(ds)) throw Error("the data given for input '" + name + "' is too large (over 2^56 elements)");
      return ir::tensor_type(ds, *dt);
    }
  }
  std::string hint = "; pass its full static shape: --input-shape " + name + "=" + (declared.empty() ? "1,3,224,224" : declared);
  if (!unknown.empty()) hint += " with a number for " + std::string(unknown.size() == 1 ? "" : "each of ") + join(unknown, ", ");
  if (!tt.has_shape()) throw NeedsShape("graph input '" + name + "' has no shape" + hint, name, "...", {});
  Shape shape;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value() && d.dim_value() > 0) {
      shape.push_back(d.dim_value());
      continue;
    }
    std::string what = d.has_dim_param() && !d.dim_param().empty() ? "symbolic dimension '" + d.dim_param() + "'"
                       : d.has_dim_value()                         ? "dimension " + std::to_string(d.dim_value())
                                                                   : "unknown dimension";
    throw NeedsShape("graph input '" + name + "' has " + what + " at axis " + std::to_string(i) + hint, name, declared, unknown);
  }
  if (!shape_within_limits(shape))
    throw Error("graph input '" + name + "' has shape " + shape_str(shape) + ", too large (over 2^56 elements)");
  return ir::tensor_type(shape, *dt);
}

class GraphImporter : public GraphScope {
 public:
  GraphImporter(const ParsedModel& parsed, std::string model_dir, const ImportOptions& opts)
      : model_(parsed.model), g_(model_.graph()), raw_data_(parsed.raw_data), model_dir_(std::move(model_dir)),
        opts_(opts) {}

  ir::Module run() {
    int64_t opset = default_opset(model_);
    if (g_.output_size() == 0) throw Error("not a valid ONNX model: the graph has no outputs");
    check_all_ops_supported(g_, opset);
    add_initializers();
    std::vector<ir::Expr> params = add_inputs();
    count_uses();
    for (int i = 0; i < g_.node_size(); ++i) convert_node(g_.node(i), i, opset);

    ir::Module m;
    std::vector<ir::Expr> outs;
    for (const auto& o : g_.output()) {
      ir::Expr v = lookup(o.name());
      if (!v && sequence(o.name())) throw Error("unsupported graph output '" + o.name() + "': a sequence (only tensors)");
      if (!v) throw Error("graph output '" + o.name() + "' is not produced by any node, input or initializer");
      if (!ir::is_tensor(v->type)) throw Error("graph output '" + o.name() + "' is not a tensor");
      outs.push_back(v);
      m.output_names.push_back(o.name());
    }
    ir::Expr body = outs.size() == 1 ? outs[0] : ir::tuple(outs);
    m.functions["main"] = ir::function(std::move(params), std::move(body));
    return m;
  }

 private:
  // Initializers are converted on first use (unused ones cost nothing and may be of any dtype).
  void add_initializers() {
    for (int i = 0; i < g_.initializer_size(); ++i) {
      const std::string& name = g_.initializer(i).name();
      if (name.empty()) throw Error("not a valid ONNX model: an initializer has no name");
      if (!inits_.emplace(name, i).second)
        throw Error("not a valid ONNX model: initializer '" + name + "' is defined twice");
    }
    if (g_.sparse_initializer_size() > 0)
      throw Error("sparse initializer '" + g_.sparse_initializer(0).values().name() + "' is unsupported");
  }

  std::vector<ir::Expr> add_inputs() {
    std::vector<ir::Expr> params;
    std::vector<NeedsShape> needs;
    std::set<std::string> names;
    for (const auto& vi : g_.input()) {
      const std::string& name = vi.name();
      if (name.empty()) throw Error("not a valid ONNX model: a graph input has no name");
      if (!names.insert(name).second) throw Error("not a valid ONNX model: graph input '" + name + "' is listed twice");
      if (inits_.count(name)) continue;  // an initializer: a constant, not a parameter
      auto bound = opts_.input_values.find(name);
      if (bound != opts_.input_values.end()) {
        if (vi.has_type() && vi.type().has_tensor_type()) {
          auto dt = dtype_from_onnx(vi.type().tensor_type().elem_type());
          if (dt && *dt != bound->second.dtype())
            throw Error("value bound to graph input '" + name + "' is " + std::string(dtype_name(bound->second.dtype())) +
                        ", the input is " + std::string(dtype_name(*dt)));
        }
        env_[name] = ir::constant(bound->second);
        continue;
      }
      ir::Type t;
      try {
        t = input_type(vi, opts_);
      } catch (const NeedsShape& e) {
        // Every input that needs a shape, in one line (a BERT's ids, mask and token types).
        needs.push_back(e);
        continue;
      }
      ir::Expr v = ir::var(name, t);
      env_[name] = v;
      params.push_back(v);
    }
    // A misspelt --input-shape first: the inputs that need shapes may only seem to because of it.
    for (const auto& [name, shape] : opts_.input_shapes)
      if (!names.count(name)) throw Error("--input-shape given for '" + name + "', which is not a graph input" + input_list());
    for (const auto& [name, value] : opts_.input_values)
      if (!names.count(name)) throw Error("a value is bound to '" + name + "', which is not a graph input" + input_list());
    if (needs.size() == 1) throw Error(needs[0].what());
    if (needs.size() > 1) {
      std::vector<std::string> flags, unknown;
      for (const NeedsShape& n : needs) {
        flags.push_back("--input-shape " + n.input + "=" + n.declared);
        for (const std::string& u : n.unknown)
          if (std::find(unknown.begin(), unknown.end(), u) == unknown.end()) unknown.push_back(u);
      }
      throw Error(std::to_string(needs.size()) + " graph inputs have symbolic or unknown dimensions; pass their full static shapes: " +
                  join(flags, " ") + (unknown.empty() ? "" : " with a number for each of " + join(unknown, ", ")));
    }
    return params;
  }

  // GraphScope, for control flow's subgraphs (which read the enclosing graph's values; ONNX
  // names are unique across them, and an unrolled body's redefinitions simply shadow).
  void bind(const std::string& name, ir::Expr value) override {
    seqs_.erase(name);
    env_[name] = std::move(value);
  }
  const std::vector<ir::Expr>* sequence(const std::string& name) override {
    auto it = seqs_.find(name);
    return it == seqs_.end() ? nullptr : &it->second;
  }
  void bind_sequence(const std::string& name, std::vector<ir::Expr> values) override {
    env_.erase(name);
    seqs_[name] = std::move(values);
  }
  const std::string& model_dir() const override { return model_dir_; }
  void import_nodes(const ::onnx::GraphProto& g, int64_t opset, const std::string& where) override {
    try {
      check_all_ops_supported(g, opset);
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
    for (const auto& init : g.initializer())  // once for all the steps of an unrolled body
      if (!env_.count(init.name()))
        env_[init.name()] = ir::constant(tensor_from_proto(init, model_dir_, "initializer '" + init.name() + "'"));
    for (int i = 0; i < g.node_size(); ++i) convert_node(g.node(i), i, opset);
  }

  // The value of a tensor name: a node output or graph input, else an initializer (converted
  // now, once), else nullptr.
  ir::Expr lookup(const std::string& name) override {
    auto it = env_.find(name);
    if (it != env_.end()) return it->second;
    auto init = inits_.find(name);
    if (init == inits_.end()) return nullptr;
    int i = init->second;
    ir::Expr c = ir::constant(tensor_from_proto(g_.initializer(i), model_dir_, "initializer '" + name + "'",
                                                raw_data_[static_cast<size_t>(i)]));
    env_[name] = c;
    return c;
  }

  std::string input_list() const {
    std::string s;
    for (const auto& vi : g_.input())
      if (!inits_.count(vi.name()) && !opts_.input_values.count(vi.name())) s += (s.empty() ? "" : ", ") + vi.name();
    return " (graph inputs: " + (s.empty() ? std::string("none") : s) + ")";
  }

  // Names read by a node, here or in a branch of an If (which reads the enclosing graph's values),
  // and the graph's outputs.
  void count_uses() { count_uses_in(g_); }
  void count_uses_in(const ::onnx::GraphProto& g) {
    for (const auto& n : g.node()) {
      for (const auto& in : n.input()) used_.insert(in);
      for (const auto& a : n.attribute())
        if (a.has_g()) count_uses_in(a.g());
    }
    for (const auto& o : g.output()) used_.insert(o.name());
  }

  void convert_node(const ::onnx::NodeProto& n, int index, int64_t opset) {
    std::string label = node_label(n, index);
    if (is_default_domain(n.domain()) && (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan")) {
      if (n.op_type() == "If") return convert_if(*this, n, label, opset);
      if (n.op_type() == "Loop") return convert_loop(*this, n, label, opset);
      return convert_scan(*this, n, label, opset);
    }
    if (is_default_domain(n.domain()) && is_sequence_op(n.op_type())) return convert_sequence_op(*this, n, label, opset);
    std::vector<ir::Expr> inputs;
    for (int k = 0; k < n.input_size(); ++k) {
      const std::string& in = n.input(k);
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      ir::Expr v = lookup(in);
      if (!v && sequence(in)) throw Error(label + ": input " + std::to_string(k) + " ('" + in + "') is a sequence, not a tensor");
      if (!v)
        throw Error(label + ": input " + std::to_string(k) + " refers to unknown tensor '" + in +
                    "' (not a graph input, initializer or output of an earlier node)");
      inputs.push_back(v);
    }
    ConverterFn fn = converter_table().find(n.op_type(), opset);
    SY_CHECK(fn) << "op support was checked before conversion";
    auto used = [&n, this](size_t i) {
      return i < static_cast<size_t>(n.output_size()) && !n.output(static_cast<int>(i)).empty() &&
             used_.count(n.output(static_cast<int>(i))) != 0;
    };
    NodeContext ctx(n, opset, label, std::move(inputs), used, model_dir_);
    std::vector<ir::Expr> outs;
    try {
      outs = fn(ctx);
    } catch (const Error& e) {
      std::string msg = e.what();
      if (msg.rfind(label, 0) == 0) throw;
      throw Error(label + ": " + msg);
    }
    for (int k = 0; k < n.output_size(); ++k) {
      const std::string& name = n.output(k);
      if (name.empty()) continue;
      ir::Expr v = static_cast<size_t>(k) < outs.size() ? outs[static_cast<size_t>(k)] : nullptr;
      if (!v) {
        if (used(static_cast<size_t>(k)))
          throw Error(label + ": output " + std::to_string(k) + " ('" + name + "') is unsupported");
        continue;
      }
      bind(name, v);  // SSA is required by ONNX; a redefinition simply shadows
    }
  }

  const ::onnx::ModelProto& model_;
  const ::onnx::GraphProto& g_;
  const std::vector<std::optional<std::string_view>>& raw_data_;  // per initializer
  std::string model_dir_;
  const ImportOptions& opts_;
  std::unordered_map<std::string, ir::Expr> env_;
  std::unordered_map<std::string, std::vector<ir::Expr>> seqs_;  // sequences known when importing
  std::unordered_map<std::string, int> inits_;  // name -> index in g_.initializer()
  std::set<std::string> used_;
};

ir::Module import_model(std::string_view bytes, const std::string& model_dir, const ImportOptions& opts) {
  if (bytes.size() > opts.max_model_bytes)
    throw Error("model is " + std::to_string(bytes.size()) + " bytes, over the limit of " +
                std::to_string(opts.max_model_bytes) + " bytes");
  if (bytes.empty()) throw Error("not a valid ONNX model: the file is empty");
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    throw Error("model is " + std::to_string(bytes.size()) + " bytes; protobuf cannot parse more than 2 GiB "
                "(store the weights as external data)");
  // The weights stay in `bytes` (mapped from the file) until they are converted, once each.
  ParsedModel parsed;
  if (!parse_model(bytes, parsed))
    throw Error("not a valid ONNX model: protobuf parse failed (truncated or corrupted file?)");
  if (!parsed.model.has_graph()) throw Error("not a valid ONNX model: no graph");
  LongLivedTensors weights;  // the initializers become the module's constants
  return GraphImporter(parsed, model_dir, opts).run();
}

}  // namespace

Result<ir::Module> import_bytes(const std::string& bytes, const std::string& model_dir, const ImportOptions& opts) {
  return catch_errors([&] { return import_model(bytes, model_dir, opts); });
}

Result<ir::Module> import_file(const std::string& path, const ImportOptions& opts) {
  return catch_errors([&]() -> ir::Module {
    try {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) throw Error("cannot open model file: no such file");
      auto size = std::filesystem::file_size(path, ec);
      if (ec) throw Error("cannot read model file: " + ec.message());
      if (size > opts.max_model_bytes)
        throw Error("model file is " + std::to_string(size) + " bytes, over the limit of " +
                    std::to_string(opts.max_model_bytes) + " bytes");
      // Mapped rather than read: no copy of (possibly hundreds of MB of) weights before parsing.
      MappedFile file(path, static_cast<size_t>(size), "model file");
      std::string dir = std::filesystem::path(path).parent_path().string();
      if (dir.empty()) dir = ".";
      return import_model(file.view(), dir, opts);
    } catch (const Error& e) {
      throw Error(path + ": " + e.what());
    }
  });
}

}  // namespace sy::onnx
