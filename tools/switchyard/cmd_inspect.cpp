// `switchyard inspect MODEL`: inputs, outputs, op histogram, parameters and FLOPs.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "cli_common.h"

namespace switchyard::cli {
namespace {

struct InspectArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  bool json = false;
  bool per_node = false;
};

void print_tensors(const char* title, const std::vector<TensorInfo>& ts) {
  std::cout << title << "\n";
  size_t w = 0;
  for (const auto& t : ts) w = std::max(w, t.name.size());
  for (const auto& t : ts)
    std::cout << "  " << t.name << std::string(w - t.name.size() + 2, ' ') << dtype_name(t.dtype) << " "
              << shape_str(t.shape) << "\n";
}

bool is_number(const std::string& dim) {
  return !dim.empty() && std::all_of(dim.begin(), dim.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string dims_str(const DeclaredTensor& t) {
  if (!t.has_shape) return "(shape not declared)";
  return "(" + join(t.dims, ", ") + ")";
}

// An ONNX model whose inputs have symbolic dimensions the user did not fix cannot be imported
// (every op's shape depends on them): what it declares, and what to pass. Null if every input is
// static or named by --input-shape, or the file does not parse (the import says why).
std::optional<DeclaredInterface> open_interface(const InspectArgs& a) {
  if (a.model.rfind("zoo:", 0) == 0 || (a.model.size() > 3 && a.model.compare(a.model.size() - 3, 3, ".sy") == 0))
    return std::nullopt;
  try {
    if (is_artifact(a.model)) return std::nullopt;
    DeclaredInterface di = onnx_interface(a.model);
    const auto given = input_shapes(a.input_shapes);
    for (const auto& g : given)  // (clang 14 cannot capture a structured binding)
      if (std::none_of(di.inputs.begin(), di.inputs.end(), [&](const DeclaredTensor& t) { return t.name == g.first; }))
        return std::nullopt;  // the import names the unknown input
    for (const DeclaredTensor& t : di.inputs)
      if (!t.is_static && !given.count(t.name)) return di;
  } catch (const Error&) {
  }
  return std::nullopt;
}

int print_open_interface(const InspectArgs& a, const DeclaredInterface& di) {
  const auto given = input_shapes(a.input_shapes);
  std::vector<std::string> symbols, flags;
  for (const DeclaredTensor& t : di.inputs) {
    if (t.is_static || given.count(t.name)) continue;
    flags.push_back("--input-shape " + t.name + "=" + (t.has_shape ? join(t.dims, ",") : "..."));
    for (const std::string& d : t.dims)
      if (!is_number(d) && std::find(symbols.begin(), symbols.end(), d) == symbols.end())
        symbols.push_back(d);
  }
  if (a.json) {
    auto tensors = [](const std::vector<DeclaredTensor>& ts) {
      nlohmann::json arr = nlohmann::json::array();
      for (const DeclaredTensor& t : ts) {
        nlohmann::json j = {{"name", t.name}, {"dtype", t.dtype}};
        if (t.has_shape) {
          j["shape"] = nlohmann::json::array();
          for (const std::string& d : t.dims) {
            if (is_number(d))
              j["shape"].push_back(std::stoll(d));
            else
              j["shape"].push_back(d);
          }
        } else {
          j["shape"] = nullptr;
        }
        arr.push_back(j);
      }
      return arr;
    };
    nlohmann::json j = {{"model", a.model}, {"inputs", tensors(di.inputs)}, {"outputs", tensors(di.outputs)},
                        {"static", false}, {"symbols", symbols}, {"needs", join(flags, " ")}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  auto print = [](const char* title, const std::vector<DeclaredTensor>& ts) {
    std::cout << title << "\n";
    size_t w = 0;
    for (const auto& t : ts) w = std::max(w, t.name.size());
    for (const auto& t : ts) std::cout << "  " << t.name << std::string(w - t.name.size() + 2, ' ') << t.dtype << " " << dims_str(t) << "\n";
  };
  std::cout << "model: " << a.model << "\n";
  print("inputs (as declared):", di.inputs);
  print("outputs (as declared):", di.outputs);
  std::cout << "the shapes are not static: ops, parameters and FLOPs need " << join(flags, " ")
            << (symbols.empty() ? "" : " with a number for each of " + join(symbols, ", ")) << "\n";
  return 0;
}

int run_inspect(const InspectArgs& a) {
  // The model parsed once where it loads; a second time, for what it declares, where it does not.
  std::optional<Model> loaded;
  try {
    loaded = load(a.model, a.input_shapes);
  } catch (const Error&) {
    if (auto di = open_interface(a)) return print_open_interface(a, *di);
    throw;
  }
  Model& m = *loaded;
  ModelStats st = m.stats();
  std::vector<std::pair<std::string, int64_t>> hist(st.op_histogram.begin(), st.op_histogram.end());
  std::stable_sort(hist.begin(), hist.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (a.json) {
    nlohmann::json j;
    j["model"] = a.model;
    j["inputs"] = nlohmann::json::array();
    for (const auto& t : st.inputs) j["inputs"].push_back(tensor_info_json(t));
    j["outputs"] = nlohmann::json::array();
    for (const auto& t : st.outputs) j["outputs"].push_back(tensor_info_json(t));
    j["op_histogram"] = nlohmann::json::object();
    for (const auto& [op, n] : st.op_histogram) j["op_histogram"][op] = n;
    j["num_ops"] = st.num_ops;
    j["params"] = st.params;
    j["param_bytes"] = st.param_bytes;
    j["flops"] = st.flops;
    j["gflops"] = static_cast<double>(st.flops) / 1e9;
    if (st.compiled) {
      // A natively compiled artifact: its execution plan.
      const PlanStats& plan = st.plan;
      j["kernels"] = static_cast<int>(plan.kernel_launches);
      j["unique_kernels"] = plan.distinct_kernels;
      j["external_calls"] = static_cast<int>(plan.calls) - static_cast<int>(plan.kernel_launches);
      j["planned_bytes"] = plan.planned_bytes;
      j["intermediate_bytes"] = plan.intermediate_bytes;
    }
    if (a.per_node) {
      j["nodes"] = nlohmann::json::array();
      for (const auto& n : st.nodes)
        j["nodes"].push_back({{"op", n.op}, {"output_shape", shape_json(n.output_shape)}, {"flops", n.flops}});
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "model: " << a.model << "\n";
  print_tensors("inputs:", st.inputs);
  print_tensors("outputs:", st.outputs);
  std::cout << "parameters: " << with_commas(st.params) << " (" << si(static_cast<double>(st.params), "")
            << ", " << si(static_cast<double>(st.param_bytes), "B") << ")\n";
  std::cout << "FLOPs: " << with_commas(st.flops) << " (" << si(static_cast<double>(st.flops), "FLOP")
            << "; a multiply-add counts 2)\n";
  if (st.compiled) {
    const PlanStats& plan = st.plan;
    std::cout << "compiled: " << plan.kernel_launches << " kernel launches per run (" << plan.distinct_kernels
              << " distinct kernels), " << (plan.calls - plan.kernel_launches)
              << " external calls; activation memory planned " << si(static_cast<double>(plan.planned_bytes), "B")
              << " for " << si(static_cast<double>(plan.intermediate_bytes), "B") << " of intermediates\n";
  }
  std::cout << "ops: " << st.num_ops << " calls of " << hist.size() << " kinds\n";
  size_t w = 0;
  for (const auto& [op, n] : hist) w = std::max(w, op.size());
  for (const auto& [op, n] : hist) std::cout << "  " << op << std::string(w - op.size() + 2, ' ') << n << "\n";
  if (a.per_node) {
    std::cout << "per node:\n";
    for (size_t i = 0; i < st.nodes.size(); ++i) {
      const auto& n = st.nodes[i];
      std::cout << "  " << i << "  " << n.op << "  " << shape_str(n.output_shape) << "  " << with_commas(n.flops)
                << "\n";
    }
  }
  return 0;
}

}  // namespace

Command add_inspect_command(CLI::App& root) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* c = root.add_subcommand("inspect", "Show a model's inputs, outputs, op histogram, parameter count and FLOPs");
  c->add_option("MODEL", args->model, "model: file.onnx, file.sy or zoo:NAME")->required();
  c->add_option("--input-shape", args->input_shapes,
                "NAME=D1,D2,...: static shape of an input (symbolic ONNX dims; zoo batch/size)")
      ->type_name("NAME=SHAPE");
  c->add_flag("--json", args->json, "print the facts as one JSON object");
  c->add_flag("--per-node", args->per_node, "also list every op call with its output shape and FLOPs");
  c->footer(
      "Parameters: elements of the float constants (weights and biases), excluding BatchNorm running\n"
      "statistics and scalars. FLOPs: conv/matmul/dense count 2 per multiply-add; elementwise ops 1 per\n"
      "output element; reductions 1 per input element; data movement 0.");
  return {c, [args] { return run_inspect(*args); }};
}

}  // namespace switchyard::cli
