// Model loading: dispatch on the spec, then the checks every loaded module must pass.
#include "api/load.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontends/onnx/importer.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "support/error.h"
#include "zoo/zoo.h"

namespace sy::api {
namespace {

constexpr const char kZooPrefix[] = "zoo:";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string read_text_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Input shapes given for a .sy module must match what it declares (it has no symbolic dims).
void check_declared_shapes(const std::string& spec, const ir::Module& m, const LoadOptions& opts) {
  const auto& main = m.main();
  for (const auto& [name, shape] : opts.input_shapes) {
    const ir::VarNode* found = nullptr;
    for (const auto& p : main.params)
      if (p->as<ir::VarNode>()->name == name) found = p->as<ir::VarNode>();
    if (!found) throw Error(spec + ": --input-shape names unknown input '" + name + "'");
    if (!ir::is_tensor(found->type) || ir::as_tensor(found->type).shape != shape)
      throw Error(spec + ": input '" + name + "' is declared as " + ir::type_str(found->type) +
                  "; a text-IR module cannot be re-shaped to " + shape_str(shape));
  }
}

ir::Module load_unverified(const std::string& spec, const LoadOptions& opts) {
  if (spec.rfind(kZooPrefix, 0) == 0) {
    zoo::ZooOptions zo;
    zo.input_shapes = opts.input_shapes;
    zo.seed = opts.zoo_seed;
    return zoo::build(spec.substr(sizeof(kZooPrefix) - 1), zo);
  }
  std::error_code ec;
  if (!std::filesystem::exists(spec, ec))
    throw Error(spec + ": no such file (expected a .onnx file, a .sy text-IR file or zoo:NAME; see `switchyard zoo`)");
  if (std::filesystem::is_directory(spec, ec)) throw Error(spec + ": is a directory, not a model file");
  if (ends_with(spec, ".sy")) {
    Result<ir::Module> r = ir::parse_module(read_text_file(spec));
    if (!r) throw Error(spec + ":" + r.status().message());
    if (!r->has("main")) throw Error(spec + ": the module has no @main function");
    check_declared_shapes(spec, *r, opts);
    return std::move(r.value());
  }
  onnx::ImportOptions io;
  io.input_shapes = opts.input_shapes;
  io.data_shapes = opts.data_shapes;
  Result<ir::Module> r = onnx::import_file(spec, io);
  if (!r) {
    // The importer's messages usually name the file already; make sure they always do.
    std::string msg = r.status().message();
    throw Error(msg.find(spec) != std::string::npos ? msg : spec + ": " + msg);
  }
  return std::move(r.value());
}

}  // namespace

ir::Module load_model(const std::string& spec, const LoadOptions& opts) {
  ir::Module m = load_unverified(spec, opts);
  if (!m.has("main")) throw Error(spec + ": the module has no main function");
  Status st = ir::verify(m);
  if (!st) throw Error(spec + ": invalid module: " + st.message());
  return m;
}

ir::Module load_onnx_bytes(const std::string& bytes, const LoadOptions& opts) {
  onnx::ImportOptions io;
  io.input_shapes = opts.input_shapes;
  io.data_shapes = opts.data_shapes;
  Result<ir::Module> r = onnx::import_bytes(bytes, ".", io);
  if (!r) throw Error("ONNX model bytes: " + r.status().message());
  Status st = ir::verify(*r);
  if (!st) throw Error("ONNX model bytes: invalid module: " + st.message());
  return std::move(r.value());
}

Result<ir::Module> try_load_model(const std::string& spec, const LoadOptions& opts) {
  return catch_errors([&] { return load_model(spec, opts); });
}

std::pair<std::string, Shape> parse_input_shape(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--input-shape '" + text + "': expected NAME=D1,D2,... (e.g. input=1,3,224,224)");
  std::string name = text.substr(0, eq);
  std::string dims = text.substr(eq + 1);
  Shape shape;
  if (dims.empty()) return {name, shape};  // a scalar input
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 0)
      throw Error("--input-shape '" + text + "': dimension '" + item + "' is not a non-negative integer");
    shape.push_back(v);
  }
  if (!dims.empty() && dims.back() == ',')
    throw Error("--input-shape '" + text + "': trailing ','");
  return {name, shape};
}

}  // namespace sy::api
